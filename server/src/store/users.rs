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
