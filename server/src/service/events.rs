//! Events and the outbox. Every event is written by [`emit`] inside the transaction of
//! the change that caused it, with one delivery per subscribed webhook; the webhook
//! workers send them later. So no event leaves without its change having committed,
//! and no committed change lacks its event, whatever happens to the process.

use serde_json::{Value, json};

use crate::store::{self, StoreResult, Tx, charges::ChargeRow, ledger::TransactionRow};

pub const CHARGE_CREATED: &str = "OPENPIX:CHARGE_CREATED";
pub const CHARGE_COMPLETED: &str = "OPENPIX:CHARGE_COMPLETED";
pub const CHARGE_EXPIRED: &str = "OPENPIX:CHARGE_EXPIRED";
pub const TRANSACTION_RECEIVED: &str = "OPENPIX:TRANSACTION_RECEIVED";
pub const TRANSACTION_REFUND_RECEIVED: &str = "OPENPIX:TRANSACTION_REFUND_RECEIVED";
pub const MOVEMENT_CONFIRMED: &str = "OPENPIX:MOVEMENT_CONFIRMED";
pub const DISPUTE_CREATE: &str = "DISPUTE_CREATE";
pub const DISPUTE_ACCEPTED: &str = "DISPUTE_ACCEPTED";
pub const DISPUTE_REJECTED: &str = "DISPUTE_REJECTED";
pub const DISPUTE_CANCELED: &str = "DISPUTE_CANCELED";
pub const KYC_ONBOARDING_IN_REVIEW: &str = "KYC_ONBOARDING_IN_REVIEW";
pub const KYC_ONBOARDING_APPROVED: &str = "KYC_ONBOARDING_APPROVED";
pub const KYC_ONBOARDING_REJECTED: &str = "KYC_ONBOARDING_REJECTED";
pub const KYC_ONBOARDING_DOCUMENTS_REQUESTED: &str = "KYC_ONBOARDING_DOCUMENTS_REQUESTED";

/// Every event a webhook may subscribe to, with what causes it.
pub const EVENTS: &[(&str, &str)] = &[
    (CHARGE_CREATED, "a charge was created"),
    (CHARGE_COMPLETED, "a charge was paid"),
    (CHARGE_EXPIRED, "a charge expired unpaid"),
    (
        TRANSACTION_RECEIVED,
        "a Pix was received (a charge paid or a Pix to a key)",
    ),
    (
        TRANSACTION_REFUND_RECEIVED,
        "a refund was sent back to a payer",
    ),
    (MOVEMENT_CONFIRMED, "a withdrawal (Pix out) was confirmed"),
    (DISPUTE_CREATE, "a dispute was opened on a received Pix"),
    (DISPUTE_ACCEPTED, "a dispute ended for the payer"),
    (DISPUTE_REJECTED, "a dispute ended for the receiver"),
    (DISPUTE_CANCELED, "a dispute was canceled"),
    (
        KYC_ONBOARDING_IN_REVIEW,
        "a KYC onboarding was submitted (or resubmitted) for review (MASTER only)",
    ),
    (
        KYC_ONBOARDING_APPROVED,
        "support approved a KYC onboarding (MASTER only)",
    ),
    (
        KYC_ONBOARDING_REJECTED,
        "support rejected a KYC onboarding (MASTER only)",
    ),
    (
        KYC_ONBOARDING_DOCUMENTS_REQUESTED,
        "support asked for more documents on a KYC onboarding (MASTER only)",
    ),
];

pub fn is_known(event: &str) -> bool {
    EVENTS.iter().any(|(name, _)| *name == event)
}

/// Onboarding events belong to the MASTER application (seed section 6): only a MASTER
/// caller may register a webhook for them.
pub fn is_master_only(event: &str) -> bool {
    event.starts_with("KYC_ONBOARDING_")
}

fn rfc3339(millis: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// A charge as event payloads show it.
pub fn charge_json(c: &ChargeRow) -> Value {
    json!({
        "status": c.status,
        "value": c.value,
        "comment": c.comment,
        "correlationID": c.correlation_id,
        "transactionID": c.transaction_id,
        "globalID": super::charges::global_id(&c.id),
        "brCode": c.br_code,
        "pixKey": c.pix_key,
        "expiresDate": rfc3339(c.expires_at),
        "createdAt": rfc3339(c.created_at),
        "updatedAt": rfc3339(c.updated_at),
        "paidAt": c.paid_at.map(rfc3339),
    })
}

/// A ledger transaction as event payloads show it (`pix` in Woovi's payloads).
pub fn transaction_json(t: &TransactionRow) -> Value {
    json!({
        "transactionID": t.id,
        "endToEndId": t.end_to_end_id,
        "type": t.kind,
        "value": t.value,
        "time": rfc3339(t.created_at),
        "counterparty": serde_json::from_str::<Value>(&t.counterparty).unwrap_or(Value::Null),
        "accountId": t.account_id,
    })
}

/// Writes `event` with `payload` (which gains `event` and `eventId`) in `tx`, with a
/// delivery for each active webhook of the company subscribed to it.
pub async fn emit(
    tx: &mut Tx,
    now: i64,
    company_id: &str,
    application_id: Option<&str>,
    event: &str,
    mut payload: Value,
) -> StoreResult<String> {
    debug_assert!(is_known(event), "unknown event {event}");
    let id = store::new_id("evt");
    if let Value::Object(map) = &mut payload {
        map.insert("event".into(), Value::String(event.to_owned()));
        map.insert("eventId".into(), Value::String(id.clone()));
    }
    store::events::insert_event(
        tx,
        &id,
        company_id,
        application_id,
        event,
        &payload.to_string(),
        now,
    )
    .await?;
    Ok(id)
}
