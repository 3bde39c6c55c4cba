//! The double-entry ledger: transactions with postings that sum to zero, and the cached
//! balance row that changes only together with them. Postings are never updated or
//! deleted.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreError, StoreResult, Tx};

/// The outside world (other banks): the other side of every Pix in and out.
pub const WORLD: &str = "world:pix";

pub fn available(account_id: &str) -> String {
    format!("{account_id}:available")
}

pub fn blocked(account_id: &str) -> String {
    format!("{account_id}:blocked")
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub kind: String,
    pub value: i64,
    pub end_to_end_id: String,
    pub charge_id: Option<String>,
    pub description: Option<String>,
    /// JSON object: the payer of a Pix in, the destination of a Pix out.
    pub counterparty: String,
    pub original_id: Option<String>,
    pub correlation_id: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, account_id, kind, value, end_to_end_id, charge_id, description, \
                       counterparty, original_id, correlation_id, created_at";

fn transaction(row: &AnyRow) -> StoreResult<TransactionRow> {
    Ok(TransactionRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        kind: row.try_get("kind")?,
        value: row.try_get("value")?,
        end_to_end_id: row.try_get("end_to_end_id")?,
        charge_id: row.try_get("charge_id")?,
        description: row.try_get("description")?,
        counterparty: row.try_get("counterparty")?,
        original_id: row.try_get("original_id")?,
        correlation_id: row.try_get("correlation_id")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Records a transaction, its postings and the balance change in the caller's
/// transaction. `available_delta`/`blocked_delta` are the account's side of the
/// postings; the balance update refuses to take either below zero, answering
/// `InsufficientFunds`, and the caller's rollback then discards everything.
pub async fn post(
    tx: &mut Tx,
    row: &TransactionRow,
    postings: &[(String, i64)],
    available_delta: i64,
    blocked_delta: i64,
) -> StoreResult<()> {
    debug_assert_eq!(
        postings.iter().map(|p| p.1).sum::<i64>(),
        0,
        "postings must balance"
    );
    sqlx::query(&format!(
        "INSERT INTO ledger_transactions ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.account_id)
    .bind(&row.kind)
    .bind(row.value)
    .bind(&row.end_to_end_id)
    .bind(&row.charge_id)
    .bind(&row.description)
    .bind(&row.counterparty)
    .bind(&row.original_id)
    .bind(&row.correlation_id)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    for (account, amount) in postings {
        sqlx::query("INSERT INTO ledger_postings (transaction_id, ledger_account, amount) VALUES ($1, $2, $3)")
            .bind(&row.id)
            .bind(account)
            .bind(amount)
            .execute(&mut **tx)
            .await?;
    }
    let updated = sqlx::query(
        "UPDATE account_balances SET available = available + $1, blocked = blocked + $2 \
         WHERE account_id = $3 AND available + $1 >= 0 AND blocked + $2 >= 0",
    )
    .bind(available_delta)
    .bind(blocked_delta)
    .bind(&row.account_id)
    .execute(&mut **tx)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(StoreError::InsufficientFunds);
    }
    Ok(())
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<TransactionRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM ledger_transactions WHERE id = $1"
    ))
    .bind(id)
    .fetch_one(db)
    .await?;
    transaction(&row)
}

/// By id or endToEndId.
pub async fn find<'e, E>(db: E, id_or_e2e: &str) -> StoreResult<Option<TransactionRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM ledger_transactions WHERE id = $1 OR end_to_end_id = $1"
    ))
    .bind(id_or_e2e)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(transaction).transpose()
}

/// A page of an account's transactions, newest first, within `[start, end)`.
pub async fn list_for_account<'e, E>(
    db: E,
    account_id: &str,
    start: i64,
    end: i64,
    skip: i64,
    limit: i64,
) -> StoreResult<Vec<TransactionRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM ledger_transactions \
         WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 \
         ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
    ))
    .bind(account_id)
    .bind(start)
    .bind(end)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    rows.iter().map(transaction).collect()
}

pub async fn count_for_account<'e, E>(
    db: E,
    account_id: &str,
    start: i64,
    end: i64,
) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(sqlx::query(
        "SELECT COUNT(*) AS n FROM ledger_transactions WHERE account_id = $1 AND created_at >= $2 AND created_at < $3",
    )
    .bind(account_id)
    .bind(start)
    .bind(end)
    .fetch_one(db)
    .await?
    .try_get("n")?)
}

/// When the account's movements of `kind` since `since` happened (Unix ms).
pub async fn times_of_kind<'e, E>(
    db: E,
    account_id: &str,
    kind: &str,
    since: i64,
) -> StoreResult<Vec<i64>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT created_at FROM ledger_transactions WHERE account_id = $1 AND kind = $2 AND created_at >= $3 ORDER BY created_at",
    )
    .bind(account_id)
    .bind(kind)
    .bind(since)
    .fetch_all(db)
    .await?;
    rows.iter().map(|r| Ok(r.try_get("created_at")?)).collect()
}

/// Sum of the refunds already made of a Pix in.
pub async fn refunded_of<'e, E>(db: E, original_id: &str) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "SELECT CAST(COALESCE(SUM(value), 0) AS BIGINT) AS total FROM ledger_transactions WHERE original_id = $1 AND kind = 'REFUND'",
    )
    .bind(original_id)
    .fetch_one(db)
    .await?;
    Ok(row.try_get("total")?)
}

/// Refunds of a Pix in, oldest first.
pub async fn refunds_of<'e, E>(db: E, original_id: &str) -> StoreResult<Vec<TransactionRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM ledger_transactions WHERE original_id = $1 AND kind = 'REFUND' ORDER BY created_at, id"
    ))
    .bind(original_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(transaction).collect()
}

/// What `cofre ledger verify` found wrong; empty when every invariant holds.
pub async fn violations<'e, E>(db: E) -> StoreResult<Vec<String>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let mut found = Vec::new();
    let unbalanced = sqlx::query(
        "SELECT t.id, CAST(COALESCE(SUM(p.amount), 0) AS BIGINT) AS total, COUNT(p.amount) AS n \
         FROM ledger_transactions t LEFT JOIN ledger_postings p ON p.transaction_id = t.id \
         GROUP BY t.id HAVING COALESCE(SUM(p.amount), 0) <> 0 OR COUNT(p.amount) < 2",
    )
    .fetch_all(db)
    .await?;
    for row in unbalanced {
        let id: String = row.try_get("id")?;
        let total: i64 = row.try_get("total")?;
        found.push(format!(
            "transaction {id}: postings sum to {total}, not 0 (or fewer than two postings)"
        ));
    }
    let balances = sqlx::query(
        "SELECT b.account_id, b.available, b.blocked, \
           CAST(COALESCE((SELECT SUM(amount) FROM ledger_postings WHERE ledger_account = b.account_id || ':available'), 0) AS BIGINT) AS posted_available, \
           CAST(COALESCE((SELECT SUM(amount) FROM ledger_postings WHERE ledger_account = b.account_id || ':blocked'), 0) AS BIGINT) AS posted_blocked \
         FROM account_balances b",
    )
    .fetch_all(db)
    .await?;
    for row in balances {
        let account: String = row.try_get("account_id")?;
        let (available, blocked): (i64, i64) = (row.try_get("available")?, row.try_get("blocked")?);
        let (posted_available, posted_blocked): (i64, i64) = (
            row.try_get("posted_available")?,
            row.try_get("posted_blocked")?,
        );
        if available != posted_available {
            found.push(format!(
                "account {account}: available {available} but postings say {posted_available}"
            ));
        }
        if blocked != posted_blocked {
            found.push(format!(
                "account {account}: blocked {blocked} but postings say {posted_blocked}"
            ));
        }
        if available < 0 || blocked < 0 {
            found.push(format!(
                "account {account}: negative balance ({available} available, {blocked} blocked)"
            ));
        }
    }
    let total = sqlx::query(
        "SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS total FROM ledger_postings",
    )
    .fetch_one(db)
    .await?;
    let total: i64 = total.try_get("total")?;
    if total != 0 {
        found.push(format!("all postings sum to {total}, not 0"));
    }
    Ok(found)
}

/// Sums of an account's transactions since `start`, per kind and per day: the day is
/// `(created_at - offset_ms) / 86 400 000`, so `offset_ms` picks the time zone.
pub async fn daily_sums<'e, E>(
    db: E,
    account_id: &str,
    start: i64,
    offset_ms: i64,
) -> StoreResult<Vec<(i64, String, i64)>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    const DAY: i64 = 86_400_000;
    let rows = sqlx::query(
        "SELECT (created_at - $1) / $2 AS day, kind, CAST(SUM(value) AS BIGINT) AS total \
         FROM ledger_transactions WHERE account_id = $3 AND created_at >= $4 \
         GROUP BY (created_at - $1) / $2, kind ORDER BY day",
    )
    .bind(offset_ms)
    .bind(DAY)
    .bind(account_id)
    .bind(start)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("day")?, r.try_get("kind")?, r.try_get("total")?)))
        .collect()
}
