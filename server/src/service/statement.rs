//! The statement and transactions of an account (seed rule 6): an application reads its
//! own account; a MASTER of a company with `MASTER_APP_READ_ANY_ACCOUNT` may name
//! another account of its company with `companyBankAccount`.

use super::applications::{AuthError, Caller};
use super::features::Feature;
use super::{Page, PageInfo};
use crate::store::{self, Store, StoreError, accounts::AccountRow, ledger::TransactionRow};

#[derive(Debug, thiserror::Error)]
pub enum StatementError {
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("account not found")]
    AccountNotFound,
    #[error("transaction not found")]
    TransactionNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Clone, Debug)]
pub struct Statement {
    store: Store,
}

impl Statement {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The account a read is about: the caller's own, or `company_bank_account` under
    /// rule 6 (else 403; an account of another company is 404).
    pub async fn account_for_read(
        &self,
        caller: &Caller,
        company_bank_account: Option<&str>,
    ) -> Result<AccountRow, StatementError> {
        let Some(requested) = company_bank_account
            .map(str::trim)
            .filter(|a| !a.is_empty())
        else {
            return Ok(store::accounts::get(self.store.pool(), &caller.account_id).await?);
        };
        if requested == caller.account_id {
            return Ok(store::accounts::get(self.store.pool(), requested).await?);
        }
        caller.require_master()?;
        let features = store::companies::features(self.store.pool(), &caller.company_id).await?;
        if !features
            .iter()
            .any(|f| f == Feature::MasterAppReadAnyAccount.as_str())
        {
            return Err(AuthError::FeatureDisabled(Feature::MasterAppReadAnyAccount).into());
        }
        match store::accounts::get(self.store.pool(), requested).await {
            Ok(account) if account.company_id == caller.company_id => Ok(account),
            Ok(_) | Err(StoreError::NotFound) => Err(StatementError::AccountNotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// The account's movements within `[start, end)`, newest first.
    pub async fn list(
        &self,
        caller: &Caller,
        company_bank_account: Option<&str>,
        start: i64,
        end: i64,
        page: Page,
    ) -> Result<(Vec<TransactionRow>, PageInfo), StatementError> {
        let account = self.account_for_read(caller, company_bank_account).await?;
        let rows = store::ledger::list_for_account(
            self.store.pool(),
            &account.id,
            start,
            end,
            page.skip,
            page.limit,
        )
        .await?;
        let total =
            store::ledger::count_for_account(self.store.pool(), &account.id, start, end).await?;
        Ok((rows, page.info(total)))
    }

    /// One transaction (by id or endToEndId) of the account being read.
    pub async fn transaction(
        &self,
        caller: &Caller,
        company_bank_account: Option<&str>,
        id: &str,
    ) -> Result<TransactionRow, StatementError> {
        let account = self.account_for_read(caller, company_bank_account).await?;
        store::ledger::find(self.store.pool(), id)
            .await?
            .filter(|t| t.account_id == account.id)
            .ok_or(StatementError::TransactionNotFound)
    }
}
