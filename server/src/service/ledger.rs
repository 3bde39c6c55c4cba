//! Every movement of money, as double-entry postings (CONTRACT.md "Money"). A movement
//! is recorded inside the caller's transaction, so the change that caused it (a charge
//! paid, a withdrawal) and the money commit together or not at all.

use super::directory::new_end_to_end_id;
use crate::store::{self, StoreError, Tx, ledger::TransactionRow};

/// The kinds of movement and which side of the account they touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Money in from outside (a charge paid, a Pix to a key).
    PixIn,
    /// Money out to another bank (a withdrawal).
    PixOut,
    /// Money given back to the payer of a Pix in.
    Refund,
    /// A dispute freezes received money: available -> blocked.
    DisputeBlock,
    /// A dispute that ended for the receiver unfreezes it: blocked -> available.
    DisputeRelease,
    /// A dispute that ended for the payer takes the frozen money out.
    DisputeDebit,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::PixIn => "PIX_IN",
            Kind::PixOut => "PIX_OUT",
            Kind::Refund => "REFUND",
            Kind::DisputeBlock => "DISPUTE_BLOCK",
            Kind::DisputeRelease => "DISPUTE_RELEASE",
            Kind::DisputeDebit => "DISPUTE_DEBIT",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        [
            Kind::PixIn,
            Kind::PixOut,
            Kind::Refund,
            Kind::DisputeBlock,
            Kind::DisputeRelease,
            Kind::DisputeDebit,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// `(available, blocked)` change of the account for a movement of `value`.
    fn deltas(self, value: i64) -> (i64, i64) {
        match self {
            Kind::PixIn => (value, 0),
            Kind::PixOut | Kind::Refund => (-value, 0),
            Kind::DisputeBlock => (-value, value),
            Kind::DisputeRelease => (value, -value),
            Kind::DisputeDebit => (0, -value),
        }
    }

    /// Whether money enters (+) or leaves (-) the account as a whole.
    pub fn sign(self) -> i64 {
        let (a, b) = self.deltas(1);
        a + b
    }
}

/// A movement to record.
#[derive(Clone, Debug)]
pub struct Movement {
    /// A transaction id chosen beforehand (an idempotency record names it); else new.
    pub id: Option<String>,
    pub kind: Kind,
    pub company_id: String,
    pub account_id: String,
    pub value: i64,
    pub charge_id: Option<String>,
    pub description: Option<String>,
    pub counterparty: serde_json::Value,
    pub original_id: Option<String>,
    pub correlation_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("insufficient funds")]
    InsufficientFunds,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for LedgerError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::InsufficientFunds => LedgerError::InsufficientFunds,
            other => LedgerError::Store(other),
        }
    }
}

/// Records `movement` in `tx`: the transaction, postings that sum to zero, and the
/// balance change, which refuses to take the account below zero.
pub async fn record(
    tx: &mut Tx,
    now: i64,
    movement: Movement,
) -> Result<TransactionRow, LedgerError> {
    debug_assert!(movement.value > 0);
    let (available_delta, blocked_delta) = movement.kind.deltas(movement.value);
    let world_delta = -(available_delta + blocked_delta);
    let mut postings = Vec::with_capacity(3);
    if available_delta != 0 {
        postings.push((
            store::ledger::available(&movement.account_id),
            available_delta,
        ));
    }
    if blocked_delta != 0 {
        postings.push((store::ledger::blocked(&movement.account_id), blocked_delta));
    }
    if world_delta != 0 {
        postings.push((store::ledger::WORLD.to_owned(), world_delta));
    }
    let row = TransactionRow {
        id: movement.id.unwrap_or_else(|| store::new_id("txn")),
        company_id: movement.company_id,
        account_id: movement.account_id,
        kind: movement.kind.as_str().to_owned(),
        value: movement.value,
        end_to_end_id: new_end_to_end_id(now),
        charge_id: movement.charge_id,
        description: movement.description,
        counterparty: movement.counterparty.to_string(),
        original_id: movement.original_id,
        correlation_id: movement.correlation_id,
        created_at: now,
    };
    store::ledger::post(tx, &row, &postings, available_delta, blocked_delta).await?;
    Ok(row)
}

/// Every violated ledger invariant, in words; empty when the books are right.
pub async fn verify(store: &store::Store) -> Result<Vec<String>, StoreError> {
    store::ledger::violations(store.pool()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_balances_to_zero_with_the_world() {
        for kind in [
            Kind::PixIn,
            Kind::PixOut,
            Kind::Refund,
            Kind::DisputeBlock,
            Kind::DisputeRelease,
            Kind::DisputeDebit,
        ] {
            let (a, b) = kind.deltas(100);
            let world = -(a + b);
            assert_eq!(a + b + world, 0);
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Kind::PixIn.sign(), 100 / 100);
        assert_eq!(Kind::DisputeBlock.sign(), 0);
        assert_eq!(Kind::Refund.sign(), -1);
    }
}
