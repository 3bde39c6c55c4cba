//! Pix keys of an account, managed with the account's own AppID (seed 2.3, CONTRACT.md
//! "Pix keys"). A key is unique in the whole directory: Cofre's keys and the external
//! entries. The first key of an account is its default, the one charges use.

use tracing::instrument;

use super::accounts::{Account, AccountError, Accounts};
use super::applications::{AuthError, Caller};
use super::clock::SharedClock;
use super::pix_key::{PixKey, PixKeyError, PixKeyType};
use super::plugins::{Denial, Plugins};
use super::tax_id::TaxId;
use super::{FieldError, Problem};
use crate::store::{self, Store, StoreError, pix_keys::PixKeyRow};

/// Keys an account may hold (DICT: 20 for companies).
pub const MAX_KEYS_PER_ACCOUNT: i64 = 20;

#[derive(Debug, thiserror::Error)]
pub enum PixKeyServiceError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error(transparent)]
    Invalid(PixKeyError),
    #[error("a CPF or CNPJ key must be the account holder's own tax id")]
    NotHolders,
    #[error("the account already has {MAX_KEYS_PER_ACCOUNT} keys")]
    LimitReached,
    #[error("the key is already registered in the directory")]
    AlreadyExists,
    #[error("key not found")]
    NotFound,
    #[error("a company rule refused the key: {0}")]
    Denied(Denial),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for PixKeyServiceError {
    fn from(err: StoreError) -> Self {
        PixKeyServiceError::Store(err)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixKeyView {
    pub key: String,
    pub kind: PixKeyType,
    pub is_default: bool,
    pub created_at: i64,
}

fn view(row: PixKeyRow) -> Result<PixKeyView, StoreError> {
    Ok(PixKeyView {
        kind: PixKeyType::parse(&row.kind)
            .ok_or_else(|| StoreError::Corrupt(format!("type of key {}", row.key)))?,
        key: row.key,
        is_default: row.is_default,
        created_at: row.created_at,
    })
}

#[derive(Clone, Debug)]
pub struct PixKeys {
    store: Store,
    plugins: Plugins,
    clock: SharedClock,
    accounts: Accounts,
}

impl PixKeys {
    pub fn new(store: Store, clock: SharedClock, accounts: Accounts, plugins: Plugins) -> Self {
        Self {
            plugins,
            store,
            clock,
            accounts,
        }
    }

    /// Registers a key for the caller's account. EVP keys are generated here, never
    /// taken from the client; CPF/CNPJ keys must be the holder's own.
    #[instrument(name = "service.pix_keys.create", skip_all, fields(account_id = %caller.account_id))]
    pub async fn create(
        &self,
        caller: &Caller,
        kind: Option<&str>,
        value: Option<&str>,
    ) -> Result<PixKeyView, PixKeyServiceError> {
        let kind = match kind.map(str::trim).filter(|k| !k.is_empty()) {
            None => {
                return Err(PixKeyServiceError::Validation(vec![FieldError::new(
                    "type",
                    Problem::Required,
                )]));
            }
            Some(k) => match PixKeyType::parse(k) {
                Some(kind) => kind,
                None => {
                    return Err(PixKeyServiceError::Validation(vec![FieldError::new(
                        "type",
                        Problem::UnknownValue,
                    )]));
                }
            },
        };
        let key = match kind {
            PixKeyType::Evp => PixKey::new_evp(),
            _ => {
                let value = value
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        PixKeyServiceError::Validation(vec![FieldError::new(
                            "pixKey",
                            Problem::Required,
                        )])
                    })?;
                PixKey::parse(kind, value).map_err(PixKeyServiceError::Invalid)?
            }
        };
        self.plugins
            .check_pix_key(
                &caller.company_id,
                cofre_plugin_host::PixKeyRequest {
                    now_ms: self.clock.now_millis(),
                    account_id: caller.account_id.clone(),
                    key: key.as_str().to_owned(),
                    key_type: kind.as_str().to_owned(),
                },
            )
            .await
            .map_err(PixKeyServiceError::Denied)?;

        let mut tx = self.store.begin().await?;
        // Serialises key changes of one account: the count and the default hold.
        let account =
            store::accounts::lock(&mut tx, self.store.backend(), &caller.account_id).await?;
        if matches!(kind, PixKeyType::Cpf | PixKeyType::Cnpj) {
            let company = store::companies::get(&mut *tx, &account.company_id).await?;
            let holder = TaxId::parse(&company.tax_id)
                .map_err(|_| StoreError::Corrupt("company tax id".into()))?;
            if holder.as_str() != key.as_str() {
                return Err(PixKeyServiceError::NotHolders);
            }
        }
        let count = store::pix_keys::count_for_account(&mut tx, &account.id).await?;
        if count >= MAX_KEYS_PER_ACCOUNT {
            return Err(PixKeyServiceError::LimitReached);
        }
        if store::directory::find(&mut *tx, key.as_str())
            .await?
            .is_some()
        {
            return Err(PixKeyServiceError::AlreadyExists);
        }
        let row = PixKeyRow {
            key: key.as_str().to_owned(),
            kind: kind.as_str().to_owned(),
            account_id: account.id.clone(),
            company_id: account.company_id.clone(),
            is_default: count == 0,
            created_at: self.clock.now_millis(),
        };
        store::pix_keys::insert(&mut tx, &row)
            .await
            .map_err(|e| match e {
                StoreError::Duplicate => PixKeyServiceError::AlreadyExists,
                other => other.into(),
            })?;
        tx.commit().await.map_err(|e| match StoreError::from(e) {
            StoreError::Duplicate => PixKeyServiceError::AlreadyExists,
            other => other.into(),
        })?;
        tracing::info!(key_type = kind.as_str(), "pix key registered");
        Ok(view(row)?)
    }

    /// The caller's account's keys and the account itself.
    pub async fn list(
        &self,
        caller: &Caller,
    ) -> Result<(Vec<PixKeyView>, Account), PixKeyServiceError> {
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        let rows = store::pix_keys::list_for_account(&mut *conn, &caller.account_id).await?;
        let account_row = store::accounts::get(&mut *conn, &caller.account_id).await?;
        let account = self.accounts.view(&mut conn, account_row).await?;
        let keys = rows.into_iter().map(view).collect::<Result<_, _>>()?;
        Ok((keys, account))
    }

    /// Finds a key of the caller's account by the value as stored or as typed
    /// (e.g. an email in capitals).
    async fn own_key(
        &self,
        tx: &mut store::Tx,
        caller: &Caller,
        value: &str,
    ) -> Result<PixKeyRow, PixKeyServiceError> {
        let mut candidates = vec![value.trim().to_owned()];
        if let Ok(key) = PixKey::detect(value) {
            candidates.push(key.as_str().to_owned());
        }
        for candidate in candidates {
            if let Some(row) = store::pix_keys::find(&mut **tx, &candidate).await? {
                return if row.account_id == caller.account_id {
                    Ok(row)
                } else {
                    Err(PixKeyServiceError::NotFound)
                };
            }
        }
        Err(PixKeyServiceError::NotFound)
    }

    /// Deletes a key: from the commit on, the directory no longer knows it, so no money
    /// can be sent to it. If it was the default, the oldest remaining key takes over.
    #[instrument(name = "service.pix_keys.delete", skip_all, fields(account_id = %caller.account_id))]
    pub async fn delete(&self, caller: &Caller, value: &str) -> Result<(), PixKeyServiceError> {
        let mut tx = self.store.begin().await?;
        let row = self.own_key(&mut tx, caller, value).await?;
        store::pix_keys::delete(&mut tx, &row.key).await?;
        if row.is_default {
            store::pix_keys::promote_oldest(&mut tx, &row.account_id).await?;
        }
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!("pix key deleted");
        Ok(())
    }

    /// Makes the key the account's default (the one charges use).
    pub async fn set_default(
        &self,
        caller: &Caller,
        value: &str,
    ) -> Result<PixKeyView, PixKeyServiceError> {
        let mut tx = self.store.begin().await?;
        let row = self.own_key(&mut tx, caller, value).await?;
        store::pix_keys::set_default(&mut tx, &row.account_id, &row.key).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(view(PixKeyRow {
            is_default: true,
            ..row
        })?)
    }
}
