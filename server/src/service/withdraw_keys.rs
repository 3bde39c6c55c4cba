//! The withdraw key of an account: where the campaign's withdrawals go. Exactly the
//! seed's state table (section 3):
//!
//! | state | call | condition | result |
//! | --- | --- | --- | --- |
//! | none selected | POST | passes lookup and holder check | registered and selected, 200 |
//! | any | POST | the company already has the key | unchanged, 400 `Chave pix já existente` |
//! | registered, not selected | PUT | the company has the key | selected, 200 |
//! | already selected | PUT | same key | unchanged, 200 |
//! | any | PUT | the company does not have the key | unchanged, 404 |
//!
//! Both calls need the account's withdraw key API, which support enables (else 403).

use tracing::instrument;

use super::accounts::{Account, AccountError, Accounts};
use super::applications::Caller;
use super::clock::SharedClock;
use super::directory::{Directory, LookupError};
use super::pix_key::{PixKey, PixKeyError, PixKeyType};
use super::{FieldError, Problem};
use crate::store::{self, Store, StoreError, withdraw_keys::WithdrawKeyRow};

#[derive(Debug, thiserror::Error)]
pub enum WithdrawKeyError {
    #[error("the withdraw key API is not enabled for this account")]
    ApiDisabled,
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error(transparent)]
    Invalid(PixKeyError),
    #[error("the company already has this withdraw key")]
    AlreadyExists,
    #[error("the company has no such withdraw key")]
    NotRegistered,
    #[error("the key belongs to a Cofre account")]
    Internal,
    #[error("the key's holder is not the account's holder")]
    HolderMismatch,
    #[error(transparent)]
    Lookup(LookupError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for WithdrawKeyError {
    fn from(err: StoreError) -> Self {
        WithdrawKeyError::Store(err)
    }
}

/// The withdraw key types of the seed (2.4); `RANDOM` is the directory's `EVP`.
pub fn withdraw_type_name(kind: PixKeyType) -> &'static str {
    match kind {
        PixKeyType::Evp => "RANDOM",
        other => other.as_str(),
    }
}

/// A withdraw key that passed every check and is ready to be saved.
#[derive(Debug)]
pub struct CheckedWithdrawKey(WithdrawKeyRow);

impl CheckedWithdrawKey {
    pub fn key(&self) -> (&str, &str) {
        (&self.0.key, &self.0.kind)
    }
}

#[derive(Clone, Debug)]
pub struct WithdrawKeys {
    store: Store,
    clock: SharedClock,
    accounts: Accounts,
    directory: Directory,
}

impl WithdrawKeys {
    pub fn new(store: Store, clock: SharedClock, accounts: Accounts, directory: Directory) -> Self {
        Self {
            store,
            clock,
            accounts,
            directory,
        }
    }

    /// The caller's account, refused with 403 unless support enabled its withdraw key API.
    async fn enabled_account(
        &self,
        caller: &Caller,
    ) -> Result<store::accounts::AccountRow, WithdrawKeyError> {
        let account = store::accounts::get(self.store.pool(), &caller.account_id).await?;
        if !account.withdraw_key_api_enabled {
            return Err(WithdrawKeyError::ApiDisabled);
        }
        Ok(account)
    }

    fn parse_key(kind: Option<&str>, value: Option<&str>) -> Result<PixKey, WithdrawKeyError> {
        let value = value
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                WithdrawKeyError::Validation(vec![FieldError::new("pixKey", Problem::Required)])
            })?;
        match kind.map(str::trim).filter(|k| !k.is_empty()) {
            None => PixKey::detect(value).map_err(WithdrawKeyError::Invalid),
            Some(k) => {
                let kind = PixKeyType::parse(k).ok_or_else(|| {
                    WithdrawKeyError::Validation(vec![FieldError::new(
                        "type",
                        Problem::UnknownValue,
                    )])
                })?;
                PixKey::parse(kind, value).map_err(WithdrawKeyError::Invalid)
            }
        }
    }

    async fn account_view(&self, account_id: &str) -> Result<Account, WithdrawKeyError> {
        let row = store::accounts::get(self.store.pool(), account_id).await?;
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        Ok(self.accounts.view(&mut conn, row).await?)
    }

    /// `POST /api/v1/pix-keys/withdraw`: looks the key up in the directory (paying from
    /// the holder's bucket), checks it, registers it for the company and selects it for
    /// the caller's account, all or nothing.
    #[instrument(name = "service.withdraw_keys.register", skip_all, fields(account_id = %caller.account_id))]
    pub async fn register(
        &self,
        caller: &Caller,
        kind: Option<&str>,
        value: Option<&str>,
    ) -> Result<Account, WithdrawKeyError> {
        let account = self.enabled_account(caller).await?;
        let key = Self::parse_key(kind, value)?;
        let checked = self.check_new(caller, &account.company_id, key).await?;
        self.save(&account.id, checked).await?;
        self.account_view(&account.id).await
    }

    /// The checks of `POST /api/v1/pix-keys/withdraw` for a key written in any format,
    /// except the per-account API switch: rule 3 governs the API endpoints, and the
    /// console's campaign wizard (a company admin) creates the account it is for.
    /// Nothing is saved; [`Self::save`] does that.
    pub async fn check_for_console(
        &self,
        caller: &Caller,
        value: &str,
    ) -> Result<CheckedWithdrawKey, WithdrawKeyError> {
        let key = Self::parse_key(None, Some(value))?;
        self.check_new(caller, &caller.company_id, key).await
    }

    /// Not yet the company's, not one of Cofre's own keys, found in the directory (paying
    /// from the holder's bucket) and held by the company itself.
    async fn check_new(
        &self,
        caller: &Caller,
        company_id: &str,
        key: PixKey,
    ) -> Result<CheckedWithdrawKey, WithdrawKeyError> {
        if store::withdraw_keys::find_for_company(self.store.pool(), company_id, key.as_str())
            .await?
            .is_some()
        {
            return Err(WithdrawKeyError::AlreadyExists);
        }
        if store::pix_keys::find(self.store.pool(), key.as_str())
            .await?
            .is_some()
        {
            return Err(WithdrawKeyError::Internal);
        }
        let lookup = self
            .directory
            .check(caller, key.as_str())
            .await
            .map_err(WithdrawKeyError::Lookup)?;
        if lookup.owner.internal {
            return Err(WithdrawKeyError::Internal);
        }
        let company = store::companies::get(self.store.pool(), company_id).await?;
        if lookup.owner.tax_id.as_str() != company.tax_id {
            return Err(WithdrawKeyError::HolderMismatch);
        }
        Ok(CheckedWithdrawKey(WithdrawKeyRow {
            id: store::new_id("wdk"),
            company_id: company_id.to_owned(),
            key: lookup.key.as_str().to_owned(),
            kind: lookup.key.kind().as_str().to_owned(),
            holder_name: lookup.owner.name.clone(),
            holder_tax_id: lookup.owner.tax_id.as_str().to_owned(),
            ispb: lookup.owner.psp.clone(),
            created_at: self.clock.now_millis(),
        }))
    }

    /// Registers a checked key for its company and selects it for `account_id`, all or
    /// nothing.
    pub async fn save(
        &self,
        account_id: &str,
        checked: CheckedWithdrawKey,
    ) -> Result<(), WithdrawKeyError> {
        let row = checked.0;
        let mut tx = self.store.begin().await?;
        store::withdraw_keys::insert(&mut tx, &row)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => WithdrawKeyError::AlreadyExists,
                other => other.into(),
            })?;
        store::accounts::select_withdraw_key(&mut tx, account_id, &row.id).await?;
        tx.commit().await.map_err(|e| match StoreError::from(e) {
            StoreError::Duplicate => WithdrawKeyError::AlreadyExists,
            other => other.into(),
        })?;
        tracing::info!(key_type = %row.kind, "withdraw key registered and selected");
        Ok(())
    }

    /// `PUT /api/v1/pix-keys/withdraw`: selects a key the company already registered.
    /// Selecting the key already selected changes nothing.
    #[instrument(name = "service.withdraw_keys.select", skip_all, fields(account_id = %caller.account_id))]
    pub async fn select(
        &self,
        caller: &Caller,
        kind: Option<&str>,
        value: Option<&str>,
    ) -> Result<Account, WithdrawKeyError> {
        let account = self.enabled_account(caller).await?;
        let key = Self::parse_key(kind, value)?;
        let registered = store::withdraw_keys::find_for_company(
            self.store.pool(),
            &account.company_id,
            key.as_str(),
        )
        .await?
        .ok_or(WithdrawKeyError::NotRegistered)?;
        if account.withdraw_key_id.as_deref() != Some(registered.id.as_str()) {
            let mut tx = self.store.begin().await?;
            store::accounts::select_withdraw_key(&mut tx, &account.id, &registered.id).await?;
            tx.commit().await.map_err(StoreError::from)?;
            tracing::info!("withdraw key selected");
        }
        self.account_view(&account.id).await
    }
}
