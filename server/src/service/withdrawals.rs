//! Withdrawals: a Pix out of an account to its selected withdraw key
//! (CONTRACT.md "Withdraw key").

use tracing::instrument;

use super::accounts::{Account, AccountError, Accounts, visible_to};
use super::applications::Caller;
use super::clock::SharedClock;
use super::events;
use super::ledger::{self, Kind, LedgerError, Movement};
use super::plugins::{Denial, Plugins};
use super::withdraw_keys::withdraw_type_name;
use super::{CorrelationId, idempotency};
use crate::store::{self, Store, StoreError, idempotency::Claim, ledger::TransactionRow};

#[derive(Debug, thiserror::Error)]
pub enum WithdrawError {
    #[error("account not found")]
    NotFound,
    #[error("the account has no withdraw key selected")]
    WithdrawKeyNotSet,
    #[error("the value must be a positive number of centavos")]
    InvalidValue,
    #[error("the available balance is smaller than the value")]
    InsufficientFunds,
    #[error("a company rule refused the withdrawal: {0}")]
    Denied(Denial),
    #[error("the correlationID was used with another request body")]
    CorrelationIdConflict,
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for WithdrawError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => WithdrawError::NotFound,
            StoreError::InsufficientFunds => WithdrawError::InsufficientFunds,
            other => WithdrawError::Store(other),
        }
    }
}

impl From<LedgerError> for WithdrawError {
    fn from(err: LedgerError) -> Self {
        match err {
            LedgerError::InsufficientFunds => WithdrawError::InsufficientFunds,
            LedgerError::Store(e) => e.into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Withdrawals {
    store: Store,
    plugins: Plugins,
    clock: SharedClock,
    accounts: Accounts,
}

impl Withdrawals {
    /// The `authorize-withdraw` hook, with what the rule needs to decide. Whatever it
    /// cannot judge (unknown account, no key) is left to the withdrawal itself.
    async fn ask_rules(
        &self,
        caller: &Caller,
        account_id: &str,
        value: Option<i64>,
        now: i64,
    ) -> Result<(), WithdrawError> {
        let pool = self.store.pool();
        let Ok(account) = store::accounts::get(pool, account_id).await else {
            return Ok(());
        };
        if !self
            .plugins
            .any_bound(&account.company_id, "authorize-withdraw")
            .await?
        {
            return Ok(());
        }
        let Some(key_id) = account
            .withdraw_key_id
            .clone()
            .filter(|_| visible_to(caller, &account))
        else {
            return Ok(());
        };
        let key = store::withdraw_keys::get(pool, &key_id).await?;
        let (available, blocked) = store::accounts::balance(pool, &account.id).await?;
        let recent = store::ledger::times_of_kind(
            pool,
            &account.id,
            Kind::PixOut.as_str(),
            now - 86_400_000,
        )
        .await?;
        let kind = super::pix_key::PixKeyType::parse(&key.kind)
            .map(withdraw_type_name)
            .unwrap_or("RANDOM");
        self.plugins
            .authorize_withdraw(
                &account.company_id,
                cofre_plugin_host::Withdrawal {
                    now_ms: now,
                    account_id: account.id.clone(),
                    value: value.unwrap_or(available),
                    withdraw_key: key.key,
                    withdraw_key_type: kind.to_owned(),
                    available,
                    blocked,
                    recent_withdrawals_ms: recent,
                },
            )
            .await
            .map_err(WithdrawError::Denied)
    }

    pub fn new(store: Store, clock: SharedClock, accounts: Accounts, plugins: Plugins) -> Self {
        Self {
            plugins,
            store,
            clock,
            accounts,
        }
    }

    /// Sends `value` (default: everything available) to the account's withdraw key.
    /// The balance update refuses to go below zero, so concurrent withdrawals can never
    /// overdraw, on any number of processes.
    ///
    /// With a `correlation_id` it is idempotent: a client that got no answer (its
    /// connection or the server died) sends the same request again and gets the
    /// withdrawal that was made, or the one made now, never two. The same id with
    /// another account or value is `CorrelationIdConflict`.
    #[instrument(name = "service.withdrawals.withdraw", skip_all, fields(account_id = %account_id))]
    pub async fn withdraw(
        &self,
        caller: &Caller,
        account_id: &str,
        value: Option<i64>,
        correlation_id: Option<CorrelationId>,
    ) -> Result<(Account, TransactionRow), WithdrawError> {
        if value.is_some_and(|v| v <= 0) {
            return Err(WithdrawError::InvalidValue);
        }
        let now = self.clock.now_millis();
        let hash = idempotency::request_hash(&serde_json::json!({
            "accountId": account_id,
            "value": value,
        }));
        let replay = match &correlation_id {
            Some(c) => store::idempotency::find(
                self.store.pool(),
                &caller.company_id,
                "withdrawal",
                c.as_str(),
            )
            .await?
            .is_some(),
            None => false,
        };
        // Company rules answer before the write transaction: a plugin call must never
        // hold the database's write lock or one of its connections. A repeat of a
        // withdrawal already made answers it as it is, whatever the rules say now.
        if !replay {
            self.ask_rules(caller, account_id, value, now).await?;
        }
        let mut tx = self.store.begin().await?;
        let account = store::accounts::get(&mut *tx, account_id).await?;
        if !visible_to(caller, &account) {
            return Err(WithdrawError::NotFound);
        }
        let transaction_id = store::new_id("txn");
        if let Some(c) = &correlation_id {
            let claim = store::idempotency::claim(
                &mut tx,
                &caller.company_id,
                "withdrawal",
                c.as_str(),
                &hash,
                &transaction_id,
                now,
            )
            .await?;
            if let Claim::Existing {
                request_hash,
                resource_id,
            } = claim
            {
                if request_hash != hash {
                    return Err(WithdrawError::CorrelationIdConflict);
                }
                let made = store::ledger::get(&mut *tx, &resource_id).await?;
                let view = self.accounts.view(&mut tx, account).await?;
                // Nothing was written: the claim found the earlier withdrawal.
                tx.rollback().await.map_err(StoreError::from)?;
                return Ok((view, made));
            }
        }
        let key_id = account
            .withdraw_key_id
            .clone()
            .ok_or(WithdrawError::WithdrawKeyNotSet)?;
        let key = store::withdraw_keys::get(&mut *tx, &key_id).await?;
        let value = match value {
            Some(v) => v,
            None => {
                let (available, _) = store::accounts::balance(&mut *tx, &account.id).await?;
                if available <= 0 {
                    return Err(WithdrawError::InsufficientFunds);
                }
                available
            }
        };
        let kind = super::pix_key::PixKeyType::parse(&key.kind)
            .map(withdraw_type_name)
            .unwrap_or("RANDOM");
        let transaction = ledger::record(
            &mut tx,
            now,
            Movement {
                id: Some(transaction_id),
                kind: Kind::PixOut,
                company_id: account.company_id.clone(),
                account_id: account.id.clone(),
                value,
                charge_id: None,
                description: Some("withdraw".into()),
                counterparty: serde_json::json!({
                    "pixKey": key.key, "type": kind, "name": key.holder_name, "ispb": key.ispb,
                }),
                original_id: None,
                correlation_id: correlation_id.map(|c| c.as_str().to_owned()),
            },
        )
        .await?;
        events::emit(
            &mut tx,
            now,
            &transaction.company_id,
            Some(&caller.application_id),
            events::MOVEMENT_CONFIRMED,
            serde_json::json!({ "movement": events::transaction_json(&transaction) }),
        )
        .await?;
        let view = self.accounts.view(&mut tx, account).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(value, "withdrawal sent");
        Ok((view, transaction))
    }
}
