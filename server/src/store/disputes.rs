//! Disputes on received Pix and the evidence sent for them.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisputeRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub transaction_id: String,
    pub block_id: String,
    pub resolution_id: Option<String>,
    pub value: i64,
    pub status: String,
    pub reason: String,
    pub opened_by: String,
    pub resolution_note: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub closed_at: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceRow {
    pub id: String,
    pub dispute_id: String,
    pub position: i64,
    pub url: Option<String>,
    pub file_id: Option<String>,
    pub description: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, account_id, transaction_id, block_id, resolution_id, value, \
                       status, reason, opened_by, resolution_note, created_at, updated_at, closed_at";
const EVIDENCE_COLUMNS: &str = "id, dispute_id, position, url, file_id, description, created_at";

fn dispute(row: &AnyRow) -> StoreResult<DisputeRow> {
    Ok(DisputeRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        transaction_id: row.try_get("transaction_id")?,
        block_id: row.try_get("block_id")?,
        resolution_id: row.try_get("resolution_id")?,
        value: row.try_get("value")?,
        status: row.try_get("status")?,
        reason: row.try_get("reason")?,
        opened_by: row.try_get("opened_by")?,
        resolution_note: row.try_get("resolution_note")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        closed_at: row.try_get("closed_at")?,
    })
}

fn evidence(row: &AnyRow) -> StoreResult<EvidenceRow> {
    Ok(EvidenceRow {
        id: row.try_get("id")?,
        dispute_id: row.try_get("dispute_id")?,
        position: row.try_get("position")?,
        url: row.try_get("url")?,
        file_id: row.try_get("file_id")?,
        description: row.try_get("description")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Inserts a dispute; `Duplicate` when its Pix already has one.
pub async fn insert(tx: &mut Tx, row: &DisputeRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO disputes ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.account_id)
    .bind(&row.transaction_id)
    .bind(&row.block_id)
    .bind(&row.resolution_id)
    .bind(row.value)
    .bind(&row.status)
    .bind(&row.reason)
    .bind(&row.opened_by)
    .bind(&row.resolution_note)
    .bind(row.created_at)
    .bind(row.updated_at)
    .bind(row.closed_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find<'e, E>(db: E, id: &str) -> StoreResult<Option<DisputeRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM disputes WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(dispute).transpose()
}

/// Whether the Pix `transaction_id` already has a dispute.
pub async fn exists_for_transaction(tx: &mut Tx, transaction_id: &str) -> StoreResult<bool> {
    let row = sqlx::query("SELECT id FROM disputes WHERE transaction_id = $1")
        .bind(transaction_id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.is_some())
}

/// Locks the dispute row for the rest of `tx` (Postgres; SQLite's write transaction
/// already holds the database) and reads it.
pub async fn find_for_update(
    tx: &mut Tx,
    id: &str,
    postgres: bool,
) -> StoreResult<Option<DisputeRow>> {
    let lock = if postgres { " FOR UPDATE" } else { "" };
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM disputes WHERE id = $1{lock}"
    ))
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    row.as_ref().map(dispute).transpose()
}

/// Disputes of a company, newest first: of one account when `account_id` is given,
/// of one status when `status` is given. Answers the page and the total count.
pub async fn list<'e, E>(
    db: E,
    company_id: &str,
    account_id: Option<&str>,
    status: Option<&str>,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<DisputeRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let filter = "company_id = $1 AND account_id = COALESCE($2, account_id) \
                  AND status = COALESCE($3, status)";
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM disputes WHERE {filter} \
         ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
    ))
    .bind(company_id)
    .bind(account_id)
    .bind(status)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query(&format!("SELECT COUNT(*) FROM disputes WHERE {filter}"))
        .bind(company_id)
        .bind(account_id)
        .bind(status)
        .fetch_one(db)
        .await?
        .try_get(0)?;
    Ok((rows.iter().map(dispute).collect::<StoreResult<_>>()?, total))
}

/// The newest disputes of every company in `status` (support's queue).
pub async fn list_all<'e, E>(
    db: E,
    status: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<DisputeRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM disputes WHERE status = COALESCE($1, status) \
         ORDER BY created_at DESC, id DESC LIMIT $2"
    ))
    .bind(status)
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.iter().map(dispute).collect()
}

/// Closes an IN_REVIEW dispute; false when it was no longer in review.
pub async fn close(
    tx: &mut Tx,
    id: &str,
    status: &str,
    resolution_id: &str,
    note: Option<&str>,
    now: i64,
) -> StoreResult<bool> {
    let done = sqlx::query(
        "UPDATE disputes SET status = $2, resolution_id = $3, resolution_note = $4, \
         updated_at = $5, closed_at = $5 WHERE id = $1 AND status = 'IN_REVIEW'",
    )
    .bind(id)
    .bind(status)
    .bind(resolution_id)
    .bind(note)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn touch(tx: &mut Tx, id: &str, now: i64) -> StoreResult<()> {
    sqlx::query("UPDATE disputes SET updated_at = $2 WHERE id = $1")
        .bind(id)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn insert_evidence(tx: &mut Tx, row: &EvidenceRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO dispute_evidence ({EVIDENCE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&row.id)
    .bind(&row.dispute_id)
    .bind(row.position)
    .bind(&row.url)
    .bind(&row.file_id)
    .bind(&row.description)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The evidence of a dispute in the order it was sent.
pub async fn evidence_of<'e, E>(db: E, dispute_id: &str) -> StoreResult<Vec<EvidenceRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {EVIDENCE_COLUMNS} FROM dispute_evidence WHERE dispute_id = $1 ORDER BY position"
    ))
    .bind(dispute_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(evidence).collect()
}
