//! Applications (AppIDs). Only a hash of each client secret is stored.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, Tx, get_bool};

#[derive(Clone, Debug)]
pub struct ApplicationRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub name: String,
    pub kind: String,
    pub client_id: String,
    pub secret_hash: String,
    pub is_active: bool,
    /// JSON array of scope names; empty means every scope of the application's type.
    pub scopes: String,
    /// JSON array of CIDRs; empty means any address.
    pub allowed_ips: String,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, company_id, account_id, name, type, client_id, secret_hash, \
                       is_active, scopes, allowed_ips, created_at, updated_at";

fn application(row: &AnyRow) -> StoreResult<ApplicationRow> {
    Ok(ApplicationRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        name: row.try_get("name")?,
        kind: row.try_get("type")?,
        client_id: row.try_get("client_id")?,
        secret_hash: row.try_get("secret_hash")?,
        is_active: get_bool(row, "is_active")?,
        scopes: row.try_get("scopes")?,
        allowed_ips: row.try_get("allowed_ips")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &ApplicationRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO applications ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.account_id)
    .bind(&row.name)
    .bind(&row.kind)
    .bind(&row.client_id)
    .bind(&row.secret_hash)
    .bind(row.is_active)
    .bind(&row.scopes)
    .bind(&row.allowed_ips)
    .bind(row.created_at)
    .bind(row.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find_by_client_id<'e, E>(db: E, client_id: &str) -> StoreResult<Option<ApplicationRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM applications WHERE client_id = $1"
    ))
    .bind(client_id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(application).transpose()
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<ApplicationRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM applications WHERE id = $1"))
        .bind(id)
        .fetch_one(db)
        .await?;
    application(&row)
}

/// The company's applications, oldest first.
pub async fn list_for_company<'e, E>(db: E, company_id: &str) -> StoreResult<Vec<ApplicationRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM applications WHERE company_id = $1 ORDER BY created_at, id"
    ))
    .bind(company_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(application).collect()
}

pub async fn set_secret_hash(tx: &mut Tx, id: &str, secret_hash: &str, at: i64) -> StoreResult<()> {
    let done =
        sqlx::query("UPDATE applications SET secret_hash = $1, updated_at = $2 WHERE id = $3")
            .bind(secret_hash)
            .bind(at)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn set_active(tx: &mut Tx, id: &str, active: bool, at: i64) -> StoreResult<()> {
    let done = sqlx::query("UPDATE applications SET is_active = $1, updated_at = $2 WHERE id = $3")
        .bind(active)
        .bind(at)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Replaces the scopes and the IP allow-list (both JSON arrays).
pub async fn set_access(
    tx: &mut Tx,
    id: &str,
    scopes: &str,
    allowed_ips: &str,
    at: i64,
) -> StoreResult<()> {
    let done = sqlx::query(
        "UPDATE applications SET scopes = $1, allowed_ips = $2, updated_at = $3 WHERE id = $4",
    )
    .bind(scopes)
    .bind(allowed_ips)
    .bind(at)
    .bind(id)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
