//! Charges (cobranças) and static QR codes.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Backend, StoreError, StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChargeRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub application_id: Option<String>,
    pub correlation_id: String,
    pub transaction_id: String,
    pub value: i64,
    pub comment: Option<String>,
    pub status: String,
    pub pix_key: String,
    pub br_code: String,
    pub customer_id: Option<String>,
    /// JSON array of `{key, value}`.
    pub additional_info: String,
    pub expires_at: i64,
    pub paid_at: Option<i64>,
    pub payment_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "id, company_id, account_id, application_id, correlation_id, transaction_id, value, \
                       comment, status, pix_key, br_code, customer_id, additional_info, expires_at, paid_at, \
                       payment_id, created_at, updated_at";

fn charge(row: &AnyRow) -> StoreResult<ChargeRow> {
    Ok(ChargeRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        application_id: row.try_get("application_id")?,
        correlation_id: row.try_get("correlation_id")?,
        transaction_id: row.try_get("transaction_id")?,
        value: row.try_get("value")?,
        comment: row.try_get("comment")?,
        status: row.try_get("status")?,
        pix_key: row.try_get("pix_key")?,
        br_code: row.try_get("br_code")?,
        customer_id: row.try_get("customer_id")?,
        additional_info: row.try_get("additional_info")?,
        expires_at: row.try_get("expires_at")?,
        paid_at: row.try_get("paid_at")?,
        payment_id: row.try_get("payment_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn insert(tx: &mut Tx, c: &ChargeRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO charges ({COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
    ))
    .bind(&c.id)
    .bind(&c.company_id)
    .bind(&c.account_id)
    .bind(&c.application_id)
    .bind(&c.correlation_id)
    .bind(&c.transaction_id)
    .bind(c.value)
    .bind(&c.comment)
    .bind(&c.status)
    .bind(&c.pix_key)
    .bind(&c.br_code)
    .bind(&c.customer_id)
    .bind(&c.additional_info)
    .bind(c.expires_at)
    .bind(c.paid_at)
    .bind(&c.payment_id)
    .bind(c.created_at)
    .bind(c.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A charge by id, correlationID or transactionID (`company_id` `None`: any company,
/// for the public payment page and the sandbox's payer).
pub async fn find<'e, E>(
    db: E,
    company_id: Option<&str>,
    any_id: &str,
) -> StoreResult<Option<ChargeRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let scoped = format!(
        "SELECT {COLUMNS} FROM charges WHERE company_id = $1 AND (id = $2 OR correlation_id = $2 OR transaction_id = $2)"
    );
    let any = format!("SELECT {COLUMNS} FROM charges WHERE id = $1 OR transaction_id = $1");
    let row = match company_id {
        Some(company) => sqlx::query(&scoped).bind(company).bind(any_id),
        None => sqlx::query(&any).bind(any_id),
    }
    .fetch_optional(db)
    .await?;
    row.as_ref().map(charge).transpose()
}

/// Reads a charge and locks it until the transaction ends.
pub async fn lock(tx: &mut Tx, backend: Backend, id: &str) -> StoreResult<ChargeRow> {
    let lock = if backend == Backend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM charges WHERE id = $1{lock}"
    ))
    .bind(id)
    .fetch_one(&mut **tx)
    .await?;
    charge(&row)
}

/// Filters of a charge listing.
#[derive(Clone, Debug, Default)]
pub struct ChargeFilter {
    pub status: Option<String>,
    pub start: i64,
    pub end: i64,
}

pub async fn list<'e, E>(
    db: E,
    account_id: &str,
    filter: &ChargeFilter,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<ChargeRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let condition =
        "account_id = $1 AND created_at >= $2 AND created_at < $3 AND ($4 = '' OR status = $4)";
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM charges WHERE {condition} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6"
    ))
    .bind(account_id)
    .bind(filter.start)
    .bind(filter.end)
    .bind(filter.status.clone().unwrap_or_default())
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query(&format!(
        "SELECT COUNT(*) AS n FROM charges WHERE {condition}"
    ))
    .bind(account_id)
    .bind(filter.start)
    .bind(filter.end)
    .bind(filter.status.clone().unwrap_or_default())
    .fetch_one(db)
    .await?
    .try_get("n")?;
    Ok((rows.iter().map(charge).collect::<StoreResult<_>>()?, total))
}

pub async fn complete(tx: &mut Tx, id: &str, payment_id: &str, at: i64) -> StoreResult<()> {
    let done = sqlx::query(
        "UPDATE charges SET status = 'COMPLETED', paid_at = $1, payment_id = $2, updated_at = $1 \
         WHERE id = $3 AND status = 'ACTIVE'",
    )
    .bind(at)
    .bind(payment_id)
    .bind(id)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Moves ACTIVE charges past their expiry to EXPIRED; answers their ids.
pub async fn expire_due(tx: &mut Tx, now: i64) -> StoreResult<Vec<String>> {
    let due = sqlx::query("SELECT id FROM charges WHERE status = 'ACTIVE' AND expires_at <= $1")
        .bind(now)
        .fetch_all(&mut **tx)
        .await?;
    let ids: Vec<String> = due
        .iter()
        .map(|r| r.try_get("id"))
        .collect::<Result<_, _>>()?;
    for id in &ids {
        sqlx::query("UPDATE charges SET status = 'EXPIRED', updated_at = $1 WHERE id = $2 AND status = 'ACTIVE'")
            .bind(now)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(ids)
}

/// Deletes a charge that received no money, and frees its correlationID.
pub async fn delete(tx: &mut Tx, c: &ChargeRow) -> StoreResult<()> {
    sqlx::query("DELETE FROM charges WHERE id = $1 AND payment_id IS NULL")
        .bind(&c.id)
        .execute(&mut **tx)
        .await?;
    sqlx::query("DELETE FROM idempotency_keys WHERE company_id = $1 AND resource = 'charge' AND correlation_id = $2")
        .bind(&c.company_id)
        .bind(&c.correlation_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticQrRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub correlation_id: String,
    pub identifier: String,
    pub name: String,
    pub value: Option<i64>,
    pub comment: Option<String>,
    pub pix_key: String,
    pub br_code: String,
    pub created_at: i64,
}

const QR_COLUMNS: &str = "id, company_id, account_id, correlation_id, identifier, name, value, comment, pix_key, br_code, created_at";

fn static_qr(row: &AnyRow) -> StoreResult<StaticQrRow> {
    Ok(StaticQrRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        correlation_id: row.try_get("correlation_id")?,
        identifier: row.try_get("identifier")?,
        name: row.try_get("name")?,
        value: row.try_get("value")?,
        comment: row.try_get("comment")?,
        pix_key: row.try_get("pix_key")?,
        br_code: row.try_get("br_code")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert_static(tx: &mut Tx, q: &StaticQrRow) -> StoreResult<()> {
    sqlx::query(&format!("INSERT INTO static_qr_codes ({QR_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"))
        .bind(&q.id)
        .bind(&q.company_id)
        .bind(&q.account_id)
        .bind(&q.correlation_id)
        .bind(&q.identifier)
        .bind(&q.name)
        .bind(q.value)
        .bind(&q.comment)
        .bind(&q.pix_key)
        .bind(&q.br_code)
        .bind(q.created_at)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn find_static<'e, E>(
    db: E,
    company_id: &str,
    any_id: &str,
) -> StoreResult<Option<StaticQrRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {QR_COLUMNS} FROM static_qr_codes WHERE company_id = $1 AND (id = $2 OR identifier = $2 OR correlation_id = $2)"
    ))
    .bind(company_id)
    .bind(any_id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(static_qr).transpose()
}

/// A static QR code by its public identifier (for its image).
pub async fn find_static_by_identifier<'e, E>(
    db: E,
    identifier: &str,
) -> StoreResult<Option<StaticQrRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {QR_COLUMNS} FROM static_qr_codes WHERE identifier = $1"
    ))
    .bind(identifier)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(static_qr).transpose()
}

pub async fn list_static<'e, E>(
    db: E,
    account_id: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<StaticQrRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let rows = sqlx::query(&format!(
        "SELECT {QR_COLUMNS} FROM static_qr_codes WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
    ))
    .bind(account_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query("SELECT COUNT(*) AS n FROM static_qr_codes WHERE account_id = $1")
        .bind(account_id)
        .fetch_one(db)
        .await?
        .try_get("n")?;
    Ok((
        rows.iter().map(static_qr).collect::<StoreResult<_>>()?,
        total,
    ))
}
