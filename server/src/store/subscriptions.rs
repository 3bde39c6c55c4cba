//! Subscriptions and the instalments issued for them.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionRow {
    pub id: String,
    pub company_id: String,
    pub account_id: String,
    pub application_id: Option<String>,
    pub correlation_id: String,
    pub value: i64,
    /// JSON: `{name, taxID, email, phone}`.
    pub customer: String,
    pub frequency: String,
    pub day_generate_charge: i64,
    pub day_due: i64,
    pub kind: String,
    pub charge_type: String,
    pub status: String,
    /// `YYYY-MM-DD`.
    pub start_date: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub canceled_at: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstalmentRow {
    pub subscription_id: String,
    pub number: i64,
    pub charge_id: String,
    pub generation_date: String,
    pub due_date: String,
    pub boleto_barcode: Option<String>,
    pub boleto_line: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, account_id, application_id, correlation_id, value, customer, \
                       frequency, day_generate_charge, day_due, kind, charge_type, status, start_date, \
                       created_at, updated_at, canceled_at";
const INSTALMENT_COLUMNS: &str = "subscription_id, number, charge_id, generation_date, due_date, \
                                  boleto_barcode, boleto_line, created_at";

fn subscription(row: &AnyRow) -> StoreResult<SubscriptionRow> {
    Ok(SubscriptionRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        account_id: row.try_get("account_id")?,
        application_id: row.try_get("application_id")?,
        correlation_id: row.try_get("correlation_id")?,
        value: row.try_get("value")?,
        customer: row.try_get("customer")?,
        frequency: row.try_get("frequency")?,
        day_generate_charge: row.try_get("day_generate_charge")?,
        day_due: row.try_get("day_due")?,
        kind: row.try_get("kind")?,
        charge_type: row.try_get("charge_type")?,
        status: row.try_get("status")?,
        start_date: row.try_get("start_date")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        canceled_at: row.try_get("canceled_at")?,
    })
}

fn instalment(row: &AnyRow) -> StoreResult<InstalmentRow> {
    Ok(InstalmentRow {
        subscription_id: row.try_get("subscription_id")?,
        number: row.try_get("number")?,
        charge_id: row.try_get("charge_id")?,
        generation_date: row.try_get("generation_date")?,
        due_date: row.try_get("due_date")?,
        boleto_barcode: row.try_get("boleto_barcode")?,
        boleto_line: row.try_get("boleto_line")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &SubscriptionRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO subscriptions ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.account_id)
    .bind(&row.application_id)
    .bind(&row.correlation_id)
    .bind(row.value)
    .bind(&row.customer)
    .bind(&row.frequency)
    .bind(row.day_generate_charge)
    .bind(row.day_due)
    .bind(&row.kind)
    .bind(&row.charge_type)
    .bind(&row.status)
    .bind(&row.start_date)
    .bind(row.created_at)
    .bind(row.updated_at)
    .bind(row.canceled_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find<'e, E>(db: E, id: &str) -> StoreResult<Option<SubscriptionRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM subscriptions WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(subscription).transpose()
}

/// Subscriptions of a company (of one account when given), newest first, and the total.
pub async fn list<'e, E>(
    db: E,
    company_id: &str,
    account_id: Option<&str>,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<SubscriptionRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let filter = "company_id = $1 AND account_id = COALESCE($2, account_id)";
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM subscriptions WHERE {filter} \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(company_id)
    .bind(account_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query(&format!(
        "SELECT COUNT(*) FROM subscriptions WHERE {filter}"
    ))
    .bind(company_id)
    .bind(account_id)
    .fetch_one(db)
    .await?
    .try_get(0)?;
    Ok((
        rows.iter().map(subscription).collect::<StoreResult<_>>()?,
        total,
    ))
}

/// Every ACTIVE subscription (the generation job's work list).
pub async fn active<'e, E>(db: E) -> StoreResult<Vec<SubscriptionRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM subscriptions WHERE status = 'ACTIVE' ORDER BY id"
    ))
    .fetch_all(db)
    .await?;
    rows.iter().map(subscription).collect()
}

/// ACTIVE -> CANCELED; false when it was not active.
pub async fn cancel(tx: &mut Tx, id: &str, now: i64) -> StoreResult<bool> {
    let done = sqlx::query(
        "UPDATE subscriptions SET status = 'CANCELED', canceled_at = $2, updated_at = $2 \
         WHERE id = $1 AND status = 'ACTIVE'",
    )
    .bind(id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records an issued instalment; a concurrent issue of the same one keeps the first.
pub async fn insert_instalment(tx: &mut Tx, row: &InstalmentRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO subscription_instalments ({INSTALMENT_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (subscription_id, number) DO NOTHING"
    ))
    .bind(&row.subscription_id)
    .bind(row.number)
    .bind(&row.charge_id)
    .bind(&row.generation_date)
    .bind(&row.due_date)
    .bind(&row.boleto_barcode)
    .bind(&row.boleto_line)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The issued instalments of a subscription, by number.
pub async fn instalments<'e, E>(db: E, subscription_id: &str) -> StoreResult<Vec<InstalmentRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {INSTALMENT_COLUMNS} FROM subscription_instalments WHERE subscription_id = $1 ORDER BY number"
    ))
    .bind(subscription_id)
    .fetch_all(db)
    .await?;
    rows.iter().map(instalment).collect()
}
