//! The outbox: events, their deliveries to webhooks and every delivery attempt; and the
//! webhook registrations and signing keys.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Backend, StoreError, StoreResult, Tx, get_bool};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: String,
    pub company_id: String,
    pub application_id: Option<String>,
    pub name: String,
    pub event: String,
    pub url: String,
    pub authorization: Option<String>,
    /// JSON object.
    pub headers: String,
    pub is_active: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

const WEBHOOK_COLUMNS: &str = "id, company_id, application_id, name, event, url, authorization_header, headers, \
                               is_active, created_at, updated_at";

fn webhook(row: &AnyRow) -> StoreResult<WebhookRow> {
    Ok(WebhookRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        application_id: row.try_get("application_id")?,
        name: row.try_get("name")?,
        event: row.try_get("event")?,
        url: row.try_get("url")?,
        authorization: row.try_get("authorization_header")?,
        headers: row.try_get("headers")?,
        is_active: get_bool(row, "is_active")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn insert_webhook(tx: &mut Tx, w: &WebhookRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO webhooks ({WEBHOOK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    ))
    .bind(&w.id)
    .bind(&w.company_id)
    .bind(&w.application_id)
    .bind(&w.name)
    .bind(&w.event)
    .bind(&w.url)
    .bind(&w.authorization)
    .bind(&w.headers)
    .bind(w.is_active)
    .bind(w.created_at)
    .bind(w.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn get_webhook<'e, E>(db: E, id: &str) -> StoreResult<WebhookRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND deleted_at IS NULL"
    ))
    .bind(id)
    .fetch_one(db)
    .await?;
    webhook(&row)
}

/// The company's webhooks, newest first; `url` filters by exact URL when not empty.
pub async fn list_webhooks<'e, E>(
    db: E,
    company_id: &str,
    url: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<WebhookRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let rows = sqlx::query(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE company_id = $1 AND deleted_at IS NULL AND ($2 = '' OR url = $2) \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    ))
    .bind(company_id)
    .bind(url)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query("SELECT COUNT(*) AS n FROM webhooks WHERE company_id = $1 AND deleted_at IS NULL AND ($2 = '' OR url = $2)")
        .bind(company_id)
        .bind(url)
        .fetch_one(db)
        .await?
        .try_get("n")?;
    Ok((rows.iter().map(webhook).collect::<StoreResult<_>>()?, total))
}

/// Deletes a webhook: its pending deliveries are canceled, its history is kept.
pub async fn delete_webhook(tx: &mut Tx, id: &str) -> StoreResult<()> {
    sqlx::query(
        "UPDATE deliveries SET status = 'CANCELED' WHERE webhook_id = $1 AND status = 'PENDING'",
    )
    .bind(id)
    .execute(&mut **tx)
    .await?;
    let done =
        sqlx::query("UPDATE webhooks SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL")
            .bind(super::now_millis())
            .bind(id)
            .execute(&mut **tx)
            .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Writes an event and a PENDING delivery for each active webhook of the company that
/// subscribed to it, in the caller's transaction (the outbox). Answers the deliveries.
pub async fn insert_event(
    tx: &mut Tx,
    id: &str,
    company_id: &str,
    application_id: Option<&str>,
    event: &str,
    payload: &str,
    now: i64,
) -> StoreResult<u64> {
    sqlx::query(
        "INSERT INTO events (id, company_id, application_id, event, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(company_id)
    .bind(application_id)
    .bind(event)
    .bind(payload)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let fanned = sqlx::query(
        "INSERT INTO deliveries (id, event_id, webhook_id, company_id, status, attempts, next_attempt_at, created_at) \
         SELECT $1 || '_' || w.id, $1, w.id, w.company_id, 'PENDING', 0, $2, $2 \
         FROM webhooks w WHERE w.company_id = $3 AND w.event = $4 AND w.is_active = $5 AND w.deleted_at IS NULL",
    )
    .bind(id)
    .bind(now)
    .bind(company_id)
    .bind(event)
    .bind(true)
    .execute(&mut **tx)
    .await?;
    Ok(fanned.rows_affected())
}

/// A delivery with what sending it needs.
#[derive(Clone, Debug)]
pub struct DueDelivery {
    pub id: String,
    pub event_id: String,
    pub event: String,
    pub payload: String,
    pub application_id: Option<String>,
    pub attempts: i64,
    pub webhook: WebhookRow,
}

/// Claims up to `limit` due deliveries for `lease_ms`. On Postgres several processes
/// claim at once without overlap (`FOR UPDATE SKIP LOCKED`); SQLite's single writer
/// serialises claims.
pub async fn claim_due(
    tx: &mut Tx,
    backend: Backend,
    now: i64,
    lease_ms: i64,
    limit: i64,
) -> StoreResult<Vec<DueDelivery>> {
    let skip_locked = if backend == Backend::Postgres {
        " FOR UPDATE SKIP LOCKED"
    } else {
        ""
    };
    let ids = sqlx::query(&format!(
        "SELECT id FROM deliveries WHERE status = 'PENDING' AND next_attempt_at <= $1 \
         AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY next_attempt_at LIMIT $2{skip_locked}"
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(&mut **tx)
    .await?;
    let mut due = Vec::with_capacity(ids.len());
    for row in ids {
        let id: String = row.try_get("id")?;
        sqlx::query("UPDATE deliveries SET claimed_until = $1 WHERE id = $2")
            .bind(now + lease_ms)
            .bind(&id)
            .execute(&mut **tx)
            .await?;
        let d = sqlx::query(
            "SELECT d.id, d.event_id, d.attempts, d.webhook_id, e.event, e.payload, e.application_id \
             FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1",
        )
        .bind(&id)
        .fetch_one(&mut **tx)
        .await?;
        let webhook_id: String = d.try_get("webhook_id")?;
        due.push(DueDelivery {
            id,
            event_id: d.try_get("event_id")?,
            event: d.try_get("event")?,
            payload: d.try_get("payload")?,
            application_id: d.try_get("application_id")?,
            attempts: d.try_get("attempts")?,
            // Unfiltered: a webhook deleted after the claim still has a row to read.
            webhook: webhook(
                &sqlx::query(&format!(
                    "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1"
                ))
                .bind(&webhook_id)
                .fetch_one(&mut **tx)
                .await?,
            )?,
        });
    }
    Ok(due)
}

/// Records one attempt and the delivery's new state.
#[allow(clippy::too_many_arguments)]
pub async fn record_attempt(
    tx: &mut Tx,
    delivery_id: &str,
    attempt: i64,
    status_code: Option<i64>,
    latency_ms: i64,
    error: Option<&str>,
    at: i64,
    outcome: Outcome,
) -> StoreResult<()> {
    let next_resend_at = match outcome {
        Outcome::Retry { at } => Some(at),
        _ => None,
    };
    sqlx::query(
        "INSERT INTO delivery_attempts (delivery_id, attempt, status_code, latency_ms, error, attempted_at, next_resend_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(delivery_id)
    .bind(attempt)
    .bind(status_code)
    .bind(latency_ms)
    .bind(error)
    .bind(at)
    .bind(next_resend_at)
    .execute(&mut **tx)
    .await?;
    let (status, next, delivered_at) = match outcome {
        Outcome::Delivered => ("DELIVERED", at, Some(at)),
        Outcome::Retry { at: next } => ("PENDING", next, None),
        Outcome::GaveUp => ("FAILED", at, None),
        Outcome::Dropped => ("DROPPED", at, None),
    };
    // A webhook deleted meanwhile keeps its delivery canceled.
    sqlx::query(
        "UPDATE deliveries SET status = CASE WHEN status = 'CANCELED' THEN status ELSE $1 END, attempts = $2, \
         next_attempt_at = $3, claimed_until = NULL, delivered_at = $4 WHERE id = $5",
    )
    .bind(status)
    .bind(attempt)
    .bind(next)
    .bind(delivered_at)
    .bind(delivery_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    Retry {
        at: i64,
    },
    GaveUp,
    /// A company rule (plugin) decided not to send the event.
    Dropped,
}

/// Makes a delivery due now again (manual resend), whatever its state but CANCELED.
pub async fn resend(tx: &mut Tx, delivery_id: &str, now: i64) -> StoreResult<()> {
    let done = sqlx::query(
        "UPDATE deliveries SET status = 'PENDING', next_attempt_at = $1, claimed_until = NULL \
         WHERE id = $2 AND status <> 'CANCELED'",
    )
    .bind(now)
    .bind(delivery_id)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryRow {
    pub id: String,
    pub event_id: String,
    pub webhook_id: String,
    pub company_id: String,
    pub event: String,
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRow {
    pub attempt: i64,
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    pub error: Option<String>,
    pub attempted_at: i64,
    pub next_resend_at: Option<i64>,
}

const DELIVERY_COLUMNS: &str = "d.id, d.event_id, d.webhook_id, d.company_id, e.event, d.status, d.attempts, \
                                d.next_attempt_at, d.created_at, d.delivered_at";

fn delivery(row: &AnyRow) -> StoreResult<DeliveryRow> {
    Ok(DeliveryRow {
        id: row.try_get("id")?,
        event_id: row.try_get("event_id")?,
        webhook_id: row.try_get("webhook_id")?,
        company_id: row.try_get("company_id")?,
        event: row.try_get("event")?,
        status: row.try_get("status")?,
        attempts: row.try_get("attempts")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
        created_at: row.try_get("created_at")?,
        delivered_at: row.try_get("delivered_at")?,
    })
}

pub async fn get_delivery<'e, E>(db: E, id: &str) -> StoreResult<DeliveryRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1"
    ))
    .bind(id)
    .fetch_one(db)
    .await?;
    delivery(&row)
}

pub async fn list_deliveries<'e, E>(
    db: E,
    webhook_id: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<(Vec<DeliveryRow>, i64)>
where
    E: sqlx::Executor<'e, Database = sqlx::Any> + Copy,
{
    let rows = sqlx::query(&format!(
        "SELECT {DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id \
         WHERE d.webhook_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3"
    ))
    .bind(webhook_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = $1")
        .bind(webhook_id)
        .fetch_one(db)
        .await?
        .try_get("n")?;
    Ok((
        rows.iter().map(delivery).collect::<StoreResult<_>>()?,
        total,
    ))
}

pub async fn attempts<'e, E>(db: E, delivery_id: &str) -> StoreResult<Vec<AttemptRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT attempt, status_code, latency_ms, error, attempted_at, next_resend_at FROM delivery_attempts \
         WHERE delivery_id = $1 ORDER BY attempt",
    )
    .bind(delivery_id)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(AttemptRow {
                attempt: r.try_get("attempt")?,
                status_code: r.try_get("status_code")?,
                latency_ms: r.try_get("latency_ms")?,
                error: r.try_get("error")?,
                attempted_at: r.try_get("attempted_at")?,
                next_resend_at: r.try_get("next_resend_at")?,
            })
        })
        .collect()
}

/// Events of a company (for tests and the console), oldest first.
pub async fn count_events<'e, E>(db: E, company_id: &str) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(
        sqlx::query("SELECT COUNT(*) AS n FROM events WHERE company_id = $1")
            .bind(company_id)
            .fetch_one(db)
            .await?
            .try_get("n")?,
    )
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRow {
    pub key_identifier: String,
    pub private_key_pem: String,
    pub public_key_pem: String,
    pub is_current: bool,
    pub created_at: i64,
}

fn key(row: &AnyRow) -> StoreResult<KeyRow> {
    Ok(KeyRow {
        key_identifier: row.try_get("key_identifier")?,
        private_key_pem: row.try_get("private_key_pem")?,
        public_key_pem: row.try_get("public_key_pem")?,
        is_current: get_bool(row, "is_current")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn keys<'e, E>(db: E) -> StoreResult<Vec<KeyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(
        "SELECT key_identifier, private_key_pem, public_key_pem, is_current, created_at FROM webhook_keys \
         ORDER BY created_at DESC",
    )
    .fetch_all(db)
    .await?;
    rows.iter().map(key).collect()
}

/// Adds a key as the current one; the previous current key stays listed. `Duplicate`
/// when another process made a current key at the same moment.
pub async fn insert_current_key(tx: &mut Tx, k: &KeyRow, replace_current: bool) -> StoreResult<()> {
    if replace_current {
        sqlx::query("UPDATE webhook_keys SET is_current = $1 WHERE is_current")
            .bind(false)
            .execute(&mut **tx)
            .await?;
    }
    sqlx::query(
        "INSERT INTO webhook_keys (key_identifier, private_key_pem, public_key_pem, is_current, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&k.key_identifier)
    .bind(&k.private_key_pem)
    .bind(&k.public_key_pem)
    .bind(true)
    .bind(k.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
