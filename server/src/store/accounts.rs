//! Bank accounts: the company's main account and, in BaaS mode, one per campaign.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx, get_bool};

#[derive(Clone, Debug)]
pub struct AccountRow {
    pub id: String,
    pub company_id: String,
    pub is_default: bool,
    pub withdraw_key_api_enabled: bool,
    pub correlation_id: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str =
    "id, company_id, is_default, withdraw_key_api_enabled, correlation_id, created_at";

fn account(row: &AnyRow) -> StoreResult<AccountRow> {
    Ok(AccountRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        is_default: get_bool(row, "is_default")?,
        withdraw_key_api_enabled: get_bool(row, "withdraw_key_api_enabled")?,
        correlation_id: row.try_get("correlation_id")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &AccountRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO accounts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(row.is_default)
    .bind(row.withdraw_key_api_enabled)
    .bind(&row.correlation_id)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<AccountRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM accounts WHERE id = $1"))
        .bind(id)
        .fetch_one(db)
        .await?;
    account(&row)
}

/// The company's main (default) account.
pub async fn main_of<'e, E>(db: E, company_id: &str) -> StoreResult<AccountRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM accounts WHERE company_id = $1 AND is_default"
    ))
    .bind(company_id)
    .fetch_one(db)
    .await?;
    account(&row)
}

pub async fn set_withdraw_key_api(tx: &mut Tx, id: &str, enabled: bool) -> StoreResult<()> {
    let done = sqlx::query("UPDATE accounts SET withdraw_key_api_enabled = $1 WHERE id = $2")
        .bind(enabled)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(super::StoreError::NotFound);
    }
    Ok(())
}
