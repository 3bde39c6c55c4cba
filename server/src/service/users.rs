//! Console users: company admins and platform support. Passwords are argon2 hashes.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use tracing::instrument;

use super::{Problem, Validation};
use crate::store::{self, Store, StoreError};

/// The permission that shows the API/Plugins section of the console.
pub const API_PLUGINS: &str = "API_PLUGINS";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Administers one company: manages its users and grants API_PLUGINS.
    Admin,
    /// A user of one company without user administration.
    Member,
    /// Platform support: enables features and the withdraw key API.
    Support,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "ADMIN",
            Role::Member => "MEMBER",
            Role::Support => "SUPPORT",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "ADMIN" => Some(Role::Admin),
            "MEMBER" => Some(Role::Member),
            "SUPPORT" => Some(Role::Support),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("email or password is wrong")]
    InvalidCredentials,
    #[error("user not found")]
    NotFound,
    #[error("too many failed sign-ins; try again in {retry_after_secs} s")]
    LockedOut { retry_after_secs: u64 },
    #[error("invalid fields")]
    Validation(Vec<super::FieldError>),
    #[error("email already in use")]
    EmailTaken,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for UserError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => UserError::NotFound,
            other => UserError::Store(other),
        }
    }
}

/// A signed-in console user as the console sees it.
#[derive(Clone, Debug)]
pub struct User {
    pub id: String,
    pub email: String,
    pub role: Role,
    pub company_id: Option<String>,
    pub permissions: Vec<String>,
}

/// Lowercased, trimmed email with one `@`, a dot in the domain and at most 254 chars.
pub fn parse_email(v: &mut Validation, field: &str, email: &str) -> String {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
        })
        && !email.chars().any(char::is_whitespace);
    if email.is_empty() {
        v.add(field, Problem::Required);
    } else if !valid {
        v.add(field, Problem::Invalid);
    }
    email
}

/// Passwords need at least 8 characters; at most 128 so hashing stays bounded.
pub fn check_password(v: &mut Validation, field: &str, password: &str) {
    if password.chars().count() < 8 {
        v.add(field, Problem::Invalid);
    } else if password.chars().count() > 128 {
        v.add(field, Problem::TooLong { max: 128 });
    }
}

pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 with default parameters hashes any password")
        .to_string()
}

fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

#[derive(Clone, Debug)]
pub struct Users {
    store: Store,
}

impl Users {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Checks email and password. A wrong email costs the same hashing work as a wrong
    /// password, so the answer time does not tell which one was wrong. After
    /// [`MAX_FAILURES`] failures inside [`FAILURE_WINDOW_MS`] the email is locked for
    /// [`LOCK_MS`], known or not, and not even a right password opens it.
    #[instrument(name = "service.users.sign_in", skip_all)]
    pub async fn sign_in(&self, email: &str, password: &str) -> Result<User, UserError> {
        let email = email.trim().to_lowercase();
        let now = store::now_millis();
        if let Some(until) = store::users::sign_in_failures(self.store.pool(), &email)
            .await?
            .and_then(|f| f.locked_until)
            .filter(|until| *until > now)
        {
            return Err(locked(until, now));
        }
        let row = store::users::find_by_email(self.store.pool(), &email).await?;
        let hash = match &row {
            Some(row) => row.password_hash.clone(),
            None => DUMMY_HASH.clone(),
        };
        let password = password.to_owned();
        let ok = tokio::task::spawn_blocking(move || verify_password(&password, &hash))
            .await
            .unwrap_or(false);
        match row {
            Some(row) if ok => {
                store::users::clear_sign_in_failures(self.store.pool(), &email).await?;
                self.get(&row.id).await
            }
            _ => {
                let lock = store::users::record_sign_in_failure(
                    self.store.pool(),
                    &email,
                    now,
                    FAILURE_WINDOW_MS,
                    MAX_FAILURES,
                    LOCK_MS,
                )
                .await?;
                match lock {
                    Some(until) => {
                        tracing::warn!("console sign-in locked after repeated failures");
                        Err(locked(until, now))
                    }
                    None => Err(UserError::InvalidCredentials),
                }
            }
        }
    }

    /// The users of a company, by email.
    pub async fn list(&self, company_id: &str) -> Result<Vec<User>, UserError> {
        let rows = store::users::list_for_company(self.store.pool(), company_id).await?;
        let mut users = Vec::with_capacity(rows.len());
        for row in rows {
            users.push(self.get(&row.id).await?);
        }
        Ok(users)
    }

    /// Adds a user to a company (`ADMIN` or `MEMBER`), optionally with API_PLUGINS.
    #[instrument(name = "service.users.create", skip_all, fields(company_id = %company_id))]
    pub async fn create(
        &self,
        company_id: &str,
        email: &str,
        password: &str,
        role: &str,
        api_plugins: bool,
    ) -> Result<User, UserError> {
        let mut v = Validation::default();
        let email = parse_email(&mut v, "email", email);
        check_password(&mut v, "password", password);
        let role = match Role::parse(role.trim()) {
            Some(r @ (Role::Admin | Role::Member)) => Some(r),
            Some(Role::Support) => {
                v.add("role", Problem::NotAllowedForType);
                None
            }
            None => {
                v.add("role", Problem::UnknownValue);
                None
            }
        };
        v.finish().map_err(UserError::Validation)?;
        self.insert(
            Some(company_id),
            &email,
            password,
            role.expect("validated"),
            api_plugins,
        )
        .await
    }

    /// A platform support user (`cofre user create-support`, `cofre demo`).
    pub async fn create_support(&self, email: &str, password: &str) -> Result<User, UserError> {
        let mut v = Validation::default();
        let email = parse_email(&mut v, "email", email);
        check_password(&mut v, "password", password);
        v.finish().map_err(UserError::Validation)?;
        self.insert(None, &email, password, Role::Support, false)
            .await
    }

    async fn insert(
        &self,
        company_id: Option<&str>,
        email: &str,
        password: &str,
        role: Role,
        api_plugins: bool,
    ) -> Result<User, UserError> {
        let password = password.to_owned();
        let password_hash = tokio::task::spawn_blocking(move || hash_password(&password))
            .await
            .map_err(|e| StoreError::Corrupt(format!("hashing a password: {e}")))?;
        let now = store::now_millis();
        let row = store::users::UserRow {
            id: store::new_id("usr"),
            company_id: company_id.map(str::to_owned),
            email: email.to_owned(),
            password_hash,
            role: role.as_str().to_owned(),
            created_at: now,
        };
        let mut tx = self.store.begin().await?;
        store::users::insert(&mut tx, &row)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => UserError::EmailTaken,
                other => other.into(),
            })?;
        if api_plugins {
            store::users::grant(&mut tx, &row.id, API_PLUGINS, now).await?;
        }
        tx.commit().await.map_err(|e| match StoreError::from(e) {
            StoreError::Duplicate => UserError::EmailTaken,
            other => other.into(),
        })?;
        tracing::info!(user_id = %row.id, role = role.as_str(), "console user created");
        self.get(&row.id).await
    }

    /// Grants or revokes a permission of a user of `company_id`.
    pub async fn set_permission(
        &self,
        company_id: &str,
        user_id: &str,
        permission: &str,
        granted: bool,
    ) -> Result<User, UserError> {
        let user = self.get(user_id).await?;
        if user.company_id.as_deref() != Some(company_id) {
            return Err(UserError::NotFound);
        }
        let mut tx = self.store.begin().await?;
        if granted {
            store::users::grant(&mut tx, user_id, permission, store::now_millis()).await?;
        } else {
            store::users::revoke(&mut tx, user_id, permission).await?;
        }
        tx.commit().await.map_err(StoreError::from)?;
        self.get(user_id).await
    }

    pub async fn get(&self, id: &str) -> Result<User, UserError> {
        let row = store::users::get(self.store.pool(), id).await?;
        let permissions = store::users::permissions(self.store.pool(), id).await?;
        Ok(User {
            role: Role::parse(&row.role)
                .ok_or_else(|| StoreError::Corrupt(format!("role of user {id}")))?,
            id: row.id,
            email: row.email,
            company_id: row.company_id,
            permissions,
        })
    }

    /// Sets a new password for the user with this email (used by `cofre demo`).
    pub async fn reset_password(&self, email: &str, password: &str) -> Result<(), UserError> {
        let row = store::users::find_by_email(self.store.pool(), email)
            .await?
            .ok_or(UserError::NotFound)?;
        let mut tx = self.store.begin().await?;
        store::users::set_password_hash(&mut tx, &row.id, &hash_password(password)).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }
}

/// Failed sign-ins that lock an email, inside this window, for this long.
pub const MAX_FAILURES: i64 = 5;
pub const FAILURE_WINDOW_MS: i64 = 15 * 60_000;
pub const LOCK_MS: i64 = 15 * 60_000;

fn locked(until: i64, now: i64) -> UserError {
    UserError::LockedOut {
        retry_after_secs: u64::try_from((until - now + 999) / 1000).unwrap_or(1),
    }
}

/// A real hash, verified against when the email is unknown.
static DUMMY_HASH: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| hash_password("no user has this password"));
