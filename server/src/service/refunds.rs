//! Refunds: money given back to the payer of a Pix in, partly or fully, never more than
//! was received.

use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::events;
use super::ledger::{self, Kind, LedgerError, Movement};
use super::{FieldError, Problem, Validation, idempotency};
use crate::store::{self, Store, StoreError, idempotency::Claim, ledger::TransactionRow};

#[derive(Debug, thiserror::Error)]
pub enum RefundError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("transaction not found")]
    TransactionNotFound,
    #[error("refund not found")]
    NotFound,
    #[error("only a received Pix can be refunded")]
    NotRefundable,
    #[error("the refund is above what was received and not yet refunded ({0} centavos left)")]
    AboveReceived(i64),
    #[error("the available balance is smaller than the refund")]
    InsufficientFunds,
    #[error("the correlationID was used with another request body")]
    CorrelationIdConflict,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for RefundError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::InsufficientFunds => RefundError::InsufficientFunds,
            other => RefundError::Store(other),
        }
    }
}

impl From<LedgerError> for RefundError {
    fn from(err: LedgerError) -> Self {
        match err {
            LedgerError::InsufficientFunds => RefundError::InsufficientFunds,
            LedgerError::Store(e) => e.into(),
        }
    }
}

/// A refund and the Pix in it gives back.
#[derive(Clone, Debug)]
pub struct Refund {
    pub transaction: TransactionRow,
    pub original: TransactionRow,
}

#[derive(Clone, Debug)]
pub struct Refunds {
    store: Store,
    clock: SharedClock,
}

/// Whether the caller may see a transaction: its company's MASTER, or the application
/// bound to its account.
pub fn transaction_visible(caller: &Caller, t: &TransactionRow) -> bool {
    t.company_id == caller.company_id && (caller.is_master() || t.account_id == caller.account_id)
}

impl Refunds {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// Refunds `value` (default: all that is left) of the Pix in `original` (its id or
    /// endToEndId, or a charge's payment). Idempotent by correlationID.
    #[instrument(name = "service.refunds.create", skip_all)]
    pub async fn create(
        &self,
        caller: &Caller,
        original: &str,
        value: Option<i64>,
        correlation_id: Option<&str>,
        comment: Option<&str>,
    ) -> Result<(Refund, bool), RefundError> {
        let mut v = Validation::default();
        let correlation_id = v.correlation_id(correlation_id);
        if value.is_some_and(|v| v <= 0) {
            v.add("value", Problem::Invalid);
        }
        let comment = comment
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        if comment.as_ref().is_some_and(|c| c.chars().count() > 140) {
            v.add("comment", Problem::TooLong { max: 140 });
        }
        v.finish().map_err(RefundError::Validation)?;
        let correlation_id = correlation_id.expect("validated above");
        let hash = idempotency::request_hash(
            &serde_json::json!({"original": original, "value": value, "comment": comment}),
        );

        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let pix_in = store::ledger::find(&mut *tx, original)
            .await?
            .filter(|t| transaction_visible(caller, t))
            .ok_or(RefundError::TransactionNotFound)?;
        if pix_in.kind != Kind::PixIn.as_str() {
            return Err(RefundError::NotRefundable);
        }
        let claim_id = store::new_id("txn");
        let claim = store::idempotency::claim(
            &mut tx,
            &caller.company_id,
            "refund",
            correlation_id.as_str(),
            &hash,
            &claim_id,
            now,
        )
        .await?;
        if let Claim::Existing {
            request_hash,
            resource_id,
        } = claim
        {
            drop(tx);
            if request_hash != hash {
                return Err(RefundError::CorrelationIdConflict);
            }
            return Ok((self.get_by_id(&resource_id).await?, false));
        }
        // Serialise refunds of one account so the sum of refunds cannot race past the
        // value received.
        store::accounts::lock(&mut tx, self.store.backend(), &pix_in.account_id).await?;
        let left = pix_in.value - store::ledger::refunded_of(&mut *tx, &pix_in.id).await?;
        let value = value.unwrap_or(left);
        if value > left || value <= 0 {
            return Err(RefundError::AboveReceived(left));
        }
        let refund = ledger::record(
            &mut tx,
            now,
            Movement {
                id: Some(claim_id),
                kind: Kind::Refund,
                company_id: pix_in.company_id.clone(),
                account_id: pix_in.account_id.clone(),
                value,
                charge_id: pix_in.charge_id.clone(),
                description: comment,
                counterparty: serde_json::from_str(&pix_in.counterparty).unwrap_or_default(),
                original_id: Some(pix_in.id.clone()),
                correlation_id: Some(correlation_id.as_str().to_owned()),
            },
        )
        .await?;
        events::emit(
            &mut tx,
            now,
            &refund.company_id,
            Some(&caller.application_id),
            events::TRANSACTION_REFUND_RECEIVED,
            serde_json::json!({
                "refund": events::transaction_json(&refund),
                "pix": events::transaction_json(&pix_in),
            }),
        )
        .await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(value, "refund sent");
        Ok((
            Refund {
                transaction: refund,
                original: pix_in,
            },
            true,
        ))
    }

    async fn get_by_id(&self, id: &str) -> Result<Refund, RefundError> {
        let transaction = store::ledger::get(self.store.pool(), id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => RefundError::NotFound,
                other => other.into(),
            })?;
        let original_id = transaction
            .original_id
            .clone()
            .ok_or(RefundError::NotFound)?;
        let original = store::ledger::get(self.store.pool(), &original_id).await?;
        Ok(Refund {
            transaction,
            original,
        })
    }

    /// A refund by its id, endToEndId or correlationID.
    pub async fn get(&self, caller: &Caller, any_id: &str) -> Result<Refund, RefundError> {
        let by_id = store::ledger::find(self.store.pool(), any_id).await?;
        let id = match by_id {
            Some(t) => t.id,
            None => {
                store::idempotency::find(self.store.pool(), &caller.company_id, "refund", any_id)
                    .await?
                    .ok_or(RefundError::NotFound)?
            }
        };
        let refund = self.get_by_id(&id).await?;
        if refund.transaction.kind != Kind::Refund.as_str()
            || !transaction_visible(caller, &refund.transaction)
        {
            return Err(RefundError::NotFound);
        }
        Ok(refund)
    }

    /// A Pix in (by id) and its refunds, oldest first.
    pub async fn of(
        &self,
        original_id: &str,
    ) -> Result<(TransactionRow, Vec<TransactionRow>), RefundError> {
        let original = store::ledger::get(self.store.pool(), original_id).await?;
        let refunds = store::ledger::refunds_of(self.store.pool(), &original.id).await?;
        Ok((original, refunds))
    }
}
