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
    /// The selected withdraw key (a row of `withdraw_keys`), if any.
    pub withdraw_key_id: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, is_default, withdraw_key_api_enabled, correlation_id, \
                       withdraw_key_id, created_at";

fn account(row: &AnyRow) -> StoreResult<AccountRow> {
    Ok(AccountRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        is_default: get_bool(row, "is_default")?,
        withdraw_key_api_enabled: get_bool(row, "withdraw_key_api_enabled")?,
        correlation_id: row.try_get("correlation_id")?,
        withdraw_key_id: row.try_get("withdraw_key_id")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &AccountRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO accounts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(row.is_default)
    .bind(row.withdraw_key_api_enabled)
    .bind(&row.correlation_id)
    .bind(&row.withdraw_key_id)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    // Every account starts with an empty balance; only ledger postings change it.
    sqlx::query("INSERT INTO account_balances (account_id, available, blocked) VALUES ($1, 0, 0)")
        .bind(&row.id)
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

/// Reads the account and locks it until the transaction ends (Postgres row lock; on
/// SQLite the transaction already holds the write lock).
pub async fn lock(tx: &mut Tx, backend: super::Backend, id: &str) -> StoreResult<AccountRow> {
    let lock = match backend {
        super::Backend::Postgres => " FOR UPDATE",
        super::Backend::Sqlite => "",
    };
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM accounts WHERE id = $1{lock}"
    ))
    .bind(id)
    .fetch_one(&mut **tx)
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

/// A page of the company's accounts (main account first, then oldest first) and the
/// total count.
pub async fn list_for_company<'e, E>(
    db: E,
    company_id: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<Vec<AccountRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM accounts WHERE company_id = $1 \
         ORDER BY is_default DESC, created_at, id LIMIT $2 OFFSET $3"
    ))
    .bind(company_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    rows.iter().map(account).collect()
}

pub async fn count_for_company<'e, E>(db: E, company_id: &str) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(
        sqlx::query("SELECT COUNT(*) AS n FROM accounts WHERE company_id = $1")
            .bind(company_id)
            .fetch_one(db)
            .await?
            .try_get("n")?,
    )
}

/// `(available, blocked)` in centavos.
pub async fn balance<'e, E>(db: E, account_id: &str) -> StoreResult<(i64, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query("SELECT available, blocked FROM account_balances WHERE account_id = $1")
        .bind(account_id)
        .fetch_one(db)
        .await?;
    Ok((row.try_get("available")?, row.try_get("blocked")?))
}

pub async fn select_withdraw_key(
    tx: &mut Tx,
    account_id: &str,
    withdraw_key_id: &str,
) -> StoreResult<()> {
    let done = sqlx::query("UPDATE accounts SET withdraw_key_id = $1 WHERE id = $2")
        .bind(withdraw_key_id)
        .bind(account_id)
        .execute(&mut **tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(super::StoreError::NotFound);
    }
    Ok(())
}
