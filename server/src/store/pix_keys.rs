//! Cofre's own Pix keys (the internal part of the directory).

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, Tx, get_bool};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixKeyRow {
    pub key: String,
    pub kind: String,
    pub account_id: String,
    pub company_id: String,
    pub is_default: bool,
    pub created_at: i64,
}

const COLUMNS: &str = "key, type, account_id, company_id, is_default, created_at";

fn pix_key(row: &AnyRow) -> StoreResult<PixKeyRow> {
    Ok(PixKeyRow {
        key: row.try_get("key")?,
        kind: row.try_get("type")?,
        account_id: row.try_get("account_id")?,
        company_id: row.try_get("company_id")?,
        is_default: get_bool(row, "is_default")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Inserts a key; `Duplicate` when the key is already Cofre's.
pub async fn insert(tx: &mut Tx, row: &PixKeyRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO pix_keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(&row.key)
    .bind(&row.kind)
    .bind(&row.account_id)
    .bind(&row.company_id)
    .bind(row.is_default)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find<'e, E>(db: E, key: &str) -> StoreResult<Option<PixKeyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM pix_keys WHERE key = $1"))
        .bind(key)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(pix_key).transpose()
}

/// The account's keys, oldest first.
pub async fn list_for_account<'e, E>(db: E, account_id: &str) -> StoreResult<Vec<PixKeyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM pix_keys WHERE account_id = $1 ORDER BY created_at, key"
    ))
    .bind(account_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(pix_key).collect()
}

pub async fn count_for_account(tx: &mut Tx, account_id: &str) -> StoreResult<i64> {
    Ok(
        sqlx::query("SELECT COUNT(*) AS n FROM pix_keys WHERE account_id = $1")
            .bind(account_id)
            .fetch_one(&mut **tx)
            .await?
            .try_get("n")?,
    )
}

pub async fn delete(tx: &mut Tx, key: &str) -> StoreResult<()> {
    let done = sqlx::query("DELETE FROM pix_keys WHERE key = $1")
        .bind(key)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Makes `key` the account's only default key.
pub async fn set_default(tx: &mut Tx, account_id: &str, key: &str) -> StoreResult<()> {
    sqlx::query("UPDATE pix_keys SET is_default = $1 WHERE account_id = $2 AND is_default")
        .bind(false)
        .bind(account_id)
        .execute(&mut **tx)
        .await?;
    let done =
        sqlx::query("UPDATE pix_keys SET is_default = $1 WHERE account_id = $2 AND key = $3")
            .bind(true)
            .bind(account_id)
            .bind(key)
            .execute(&mut **tx)
            .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// After the default key is deleted, the oldest remaining key becomes the default.
pub async fn promote_oldest(tx: &mut Tx, account_id: &str) -> StoreResult<()> {
    let oldest = sqlx::query(
        "SELECT key FROM pix_keys WHERE account_id = $1 ORDER BY created_at, key LIMIT 1",
    )
    .bind(account_id)
    .fetch_optional(&mut **tx)
    .await?;
    if let Some(row) = oldest {
        let key: String = row.try_get("key")?;
        set_default(tx, account_id, &key).await?;
    }
    Ok(())
}
