//! The sandbox: money movements a real payer or the central bank would cause, for
//! trying Cofre without a bank (on in the embedded default, off in production).
//! Disputes the central bank opens go through [`super::disputes`].

use tracing::instrument;

use super::br_code::MAX_AMOUNT_CENTS;
use super::clock::SharedClock;
use super::events;
use super::ledger::{self, Kind, LedgerError, Movement};
use super::pix_key::PixKey;
use super::{FieldError, Problem, Validation};
use crate::store::{self, Store, StoreError, ledger::TransactionRow};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("no Cofre account has this Pix key")]
    PixKeyNotFound,
    #[error("the available balance is smaller than the disputed value")]
    InsufficientFunds,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for SandboxError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::InsufficientFunds => SandboxError::InsufficientFunds,
            other => SandboxError::Store(other),
        }
    }
}

impl From<LedgerError> for SandboxError {
    fn from(err: LedgerError) -> Self {
        match err {
            LedgerError::InsufficientFunds => SandboxError::InsufficientFunds,
            LedgerError::Store(e) => e.into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Sandbox {
    store: Store,
    clock: SharedClock,
}

impl Sandbox {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// A payer at another bank sends `value` to a Cofre key. A deleted key is unknown.
    #[instrument(name = "service.sandbox.pix_in", skip_all)]
    pub async fn pix_in(
        &self,
        key: Option<&str>,
        value: Option<i64>,
        payer: serde_json::Value,
    ) -> Result<TransactionRow, SandboxError> {
        let mut v = Validation::default();
        let key = match key.map(str::trim).filter(|k| !k.is_empty()) {
            None => {
                v.add("pixKey", Problem::Required);
                None
            }
            Some(k) => PixKey::detect(k)
                .map_err(|_| v.add("pixKey", Problem::Invalid))
                .ok(),
        };
        match value {
            None => v.add("value", Problem::Required),
            // The same ceiling as a charge: far below what a balance can hold, so no
            // number of payments can overflow one.
            Some(x) if !(1..=MAX_AMOUNT_CENTS).contains(&x) => v.add("value", Problem::Invalid),
            Some(_) => {}
        }
        v.finish().map_err(SandboxError::Validation)?;
        let key = key.expect("validated above");
        let mut tx = self.store.begin().await?;
        let owner = store::pix_keys::find(&mut *tx, key.as_str())
            .await?
            .ok_or(SandboxError::PixKeyNotFound)?;
        let transaction = ledger::record(
            &mut tx,
            self.clock.now_millis(),
            Movement {
                id: None,
                kind: Kind::PixIn,
                company_id: owner.company_id,
                account_id: owner.account_id,
                value: value.expect("validated above"),
                charge_id: None,
                description: Some(format!("Pix to {}", owner.key)),
                counterparty: payer,
                original_id: None,
                correlation_id: None,
            },
        )
        .await?;
        events::emit(
            &mut tx,
            transaction.created_at,
            &transaction.company_id,
            None,
            events::TRANSACTION_RECEIVED,
            serde_json::json!({ "pix": events::transaction_json(&transaction) }),
        )
        .await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(transaction)
    }
}
