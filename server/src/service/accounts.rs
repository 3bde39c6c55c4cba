//! Bank accounts: the main account and, in BaaS mode, one per campaign. An account is
//! seen by the MASTER application of its company and by the applications bound to it.

use serde::Serialize;
use tracing::instrument;

use super::applications::{AuthError, Caller};
use super::clock::SharedClock;
use super::features::Feature;
use super::pix_key::PixKeyType;
use super::tax_id::TaxId;
use super::{CorrelationId, Page, PageInfo, idempotency};
use crate::store::{self, Store, StoreError, accounts::AccountRow, idempotency::Claim};

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("account not found")]
    NotFound,
    #[error("the correlationID was used with another request body")]
    CorrelationIdConflict,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for AccountError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => AccountError::NotFound,
            other => AccountError::Store(other),
        }
    }
}

/// Balance in centavos; `total = blocked + available` always.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Balance {
    pub total: i64,
    pub blocked: i64,
    pub available: i64,
}

impl Balance {
    pub fn new(available: i64, blocked: i64) -> Self {
        Self {
            total: available + blocked,
            blocked,
            available,
        }
    }
}

/// The withdraw key an account selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectedWithdrawKey {
    pub key: String,
    pub kind: PixKeyType,
}

/// An account as the API shows it.
#[derive(Clone, Debug)]
pub struct Account {
    pub id: String,
    pub company_id: String,
    /// The holder: the company's tax id.
    pub tax_id: TaxId,
    pub is_default: bool,
    pub balance: Balance,
    pub withdraw_key_api_enabled: bool,
    pub withdraw_key: Option<SelectedWithdrawKey>,
}

/// Whether the caller may see the account: its company's MASTER, or an application
/// bound to it. Anything else is answered as not found.
pub fn visible_to(caller: &Caller, account: &AccountRow) -> bool {
    account.company_id == caller.company_id
        && (caller.is_master() || account.id == caller.account_id)
}

#[derive(Clone, Debug)]
pub struct Accounts {
    store: Store,
    clock: SharedClock,
}

const RESOURCE: &str = "account";

impl Accounts {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// Reads an account with its balance and selected withdraw key.
    pub async fn view(
        &self,
        conn: &mut sqlx::AnyConnection,
        row: AccountRow,
    ) -> Result<Account, AccountError> {
        let company = store::companies::get(&mut *conn, &row.company_id).await?;
        let (available, blocked) = store::accounts::balance(&mut *conn, &row.id).await?;
        let withdraw_key = match &row.withdraw_key_id {
            Some(id) => {
                let key = store::withdraw_keys::get(&mut *conn, id).await?;
                Some(SelectedWithdrawKey {
                    kind: PixKeyType::parse(&key.kind)
                        .ok_or_else(|| StoreError::Corrupt(format!("type of withdraw key {id}")))?,
                    key: key.key,
                })
            }
            None => None,
        };
        Ok(Account {
            tax_id: TaxId::parse(&company.tax_id)
                .map_err(|_| StoreError::Corrupt(format!("tax id of company {}", company.id)))?,
            id: row.id,
            company_id: row.company_id,
            is_default: row.is_default,
            balance: Balance::new(available, blocked),
            withdraw_key_api_enabled: row.withdraw_key_api_enabled,
            withdraw_key,
        })
    }

    /// Opens a new account for a campaign (BaaS companies only). With a correlationID,
    /// repeating the call answers the account it made the first time.
    #[instrument(name = "service.accounts.create", skip_all, fields(company_id = %caller.company_id))]
    pub async fn create(
        &self,
        caller: &Caller,
        correlation_id: Option<CorrelationId>,
    ) -> Result<Account, AccountError> {
        caller.require_master()?;
        let features = store::companies::features(self.store.pool(), &caller.company_id).await?;
        if !features.iter().any(|f| f == Feature::Baas.as_str()) {
            return Err(AuthError::FeatureDisabled(Feature::Baas).into());
        }
        let now = self.clock.now_millis();
        let row = AccountRow {
            id: store::new_id("acc"),
            company_id: caller.company_id.clone(),
            is_default: false,
            withdraw_key_api_enabled: false,
            correlation_id: correlation_id.as_ref().map(|c| c.as_str().to_owned()),
            withdraw_key_id: None,
            created_at: now,
        };
        let mut tx = self.store.begin().await?;
        if let Some(cid) = &correlation_id {
            let hash =
                idempotency::request_hash(&serde_json::json!({ "correlationID": cid.as_str() }));
            let claim = store::idempotency::claim(
                &mut tx,
                &caller.company_id,
                RESOURCE,
                cid.as_str(),
                &hash,
                &row.id,
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
                    return Err(AccountError::CorrelationIdConflict);
                }
                let existing = store::accounts::get(self.store.pool(), &resource_id).await?;
                let mut conn = self
                    .store
                    .pool()
                    .acquire()
                    .await
                    .map_err(StoreError::from)?;
                return self.view(&mut conn, existing).await;
            }
        }
        store::accounts::insert(&mut tx, &row).await?;
        let account = self.view(&mut tx, row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(account_id = %account.id, "account created");
        Ok(account)
    }

    /// One account the caller may see.
    pub async fn get(&self, caller: &Caller, account_id: &str) -> Result<Account, AccountError> {
        let row = store::accounts::get(self.store.pool(), account_id).await?;
        if !visible_to(caller, &row) {
            return Err(AccountError::NotFound);
        }
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        self.view(&mut conn, row).await
    }

    /// MASTER: every account of the company; another application: its own account.
    pub async fn list(
        &self,
        caller: &Caller,
        page: Page,
    ) -> Result<(Vec<Account>, PageInfo), AccountError> {
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        let (rows, total) = if caller.is_master() {
            let rows = store::accounts::list_for_company(
                &mut *conn,
                &caller.company_id,
                page.skip,
                page.limit,
            )
            .await?;
            (
                rows,
                store::accounts::count_for_company(&mut *conn, &caller.company_id).await?,
            )
        } else {
            let own = store::accounts::get(&mut *conn, &caller.account_id).await?;
            let rows = if page.skip == 0 { vec![own] } else { vec![] };
            (rows, 1)
        };
        let mut accounts = Vec::with_capacity(rows.len());
        for row in rows {
            accounts.push(self.view(&mut conn, row).await?);
        }
        Ok((accounts, page.info(total)))
    }
}
