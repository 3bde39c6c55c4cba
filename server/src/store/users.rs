//! Console users (company admins and platform support) and their permissions.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug)]
pub struct UserRow {
    pub id: String,
    pub company_id: Option<String>,
    pub email: String,
    pub password_hash: String,
    pub role: String,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, email, password_hash, role, created_at";

fn user(row: &AnyRow) -> StoreResult<UserRow> {
    Ok(UserRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password_hash")?,
        role: row.try_get("role")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &UserRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO users ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.email)
    .bind(&row.password_hash)
    .bind(&row.role)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find_by_email<'e, E>(db: E, email: &str) -> StoreResult<Option<UserRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM users WHERE email = $1"))
        .bind(email)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(user).transpose()
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<UserRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM users WHERE id = $1"))
        .bind(id)
        .fetch_one(db)
        .await?;
    user(&row)
}

pub async fn set_password_hash(tx: &mut Tx, id: &str, hash: &str) -> StoreResult<()> {
    sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
        .bind(hash)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn permissions<'e, E>(db: E, user_id: &str) -> StoreResult<Vec<String>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT permission FROM user_permissions WHERE user_id = $1 ORDER BY permission",
    )
    .bind(user_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(|r| Ok(r.try_get("permission")?)).collect()
}

pub async fn grant(tx: &mut Tx, user_id: &str, permission: &str, at: i64) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO user_permissions (user_id, permission, granted_at) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, permission) DO NOTHING",
    )
    .bind(user_id)
    .bind(permission)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn revoke(tx: &mut Tx, user_id: &str, permission: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM user_permissions WHERE user_id = $1 AND permission = $2")
        .bind(user_id)
        .bind(permission)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The users of a company, by email.
pub async fn list_for_company<'e, E>(db: E, company_id: &str) -> StoreResult<Vec<UserRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM users WHERE company_id = $1 ORDER BY email"
    ))
    .bind(company_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(user).collect()
}

/// Failed sign-ins of one email: how many since `window_start`, and the lock if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInFailures {
    pub failures: i64,
    pub window_start: i64,
    pub locked_until: Option<i64>,
}

pub async fn sign_in_failures<'e, E>(db: E, email: &str) -> StoreResult<Option<SignInFailures>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "SELECT failures, window_start, locked_until FROM sign_in_failures WHERE email = $1",
    )
    .bind(email)
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        Ok(SignInFailures {
            failures: r.try_get("failures")?,
            window_start: r.try_get("window_start")?,
            locked_until: r.try_get("locked_until")?,
        })
    })
    .transpose()
}

/// Counts one failed sign-in atomically: a failure older than `window_ms` starts a new
/// window; the `max`-th failure inside a window locks the email for `lock_ms`.
/// Answers the lock, if the email is now locked.
pub async fn record_sign_in_failure<'e, E>(
    db: E,
    email: &str,
    now: i64,
    window_ms: i64,
    max: i64,
    lock_ms: i64,
) -> StoreResult<Option<i64>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "INSERT INTO sign_in_failures (email, failures, window_start, locked_until) \
         VALUES ($1, 1, $2, NULL) ON CONFLICT (email) DO UPDATE SET \
         failures = CASE WHEN sign_in_failures.window_start <= $3 THEN 1 \
                    ELSE sign_in_failures.failures + 1 END, \
         window_start = CASE WHEN sign_in_failures.window_start <= $3 THEN $2 \
                        ELSE sign_in_failures.window_start END, \
         locked_until = CASE WHEN sign_in_failures.window_start > $3 \
                             AND sign_in_failures.failures + 1 >= $4 THEN $5 \
                        ELSE sign_in_failures.locked_until END \
         RETURNING locked_until",
    )
    .bind(email)
    .bind(now)
    .bind(now - window_ms)
    .bind(max)
    .bind(now + lock_ms)
    .fetch_one(db)
    .await?;
    let locked_until: Option<i64> = row.try_get("locked_until")?;
    Ok(locked_until.filter(|until| *until > now))
}

pub async fn clear_sign_in_failures<'e, E>(db: E, email: &str) -> StoreResult<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query("DELETE FROM sign_in_failures WHERE email = $1")
        .bind(email)
        .execute(db)
        .await?;
    Ok(())
}
