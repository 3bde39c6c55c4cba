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
    /// Administers one company; grants API_PLUGINS to its users.
    Admin,
    /// Platform support: enables features and the withdraw key API.
    Support,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "ADMIN",
            Role::Support => "SUPPORT",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "ADMIN" => Some(Role::Admin),
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
    /// password, so the answer time does not tell which one was wrong.
    #[instrument(name = "service.users.sign_in", skip_all)]
    pub async fn sign_in(&self, email: &str, password: &str) -> Result<User, UserError> {
        let email = email.trim().to_lowercase();
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
            Some(row) if ok => self.get(&row.id).await,
            _ => Err(UserError::InvalidCredentials),
        }
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

/// A real hash, verified against when the email is unknown.
static DUMMY_HASH: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| hash_password("no user has this password"));
