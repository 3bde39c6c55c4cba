//! Charges: a value to receive by Pix, with a single-use BR Code for the account's
//! default key. ACTIVE -> COMPLETED (paid) | EXPIRED (past `expiresDate`).

use rand::Rng;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::applications::Caller;
use super::br_code::{BrCode, MAX_AMOUNT_CENTS};
use super::clock::SharedClock;
use super::customers::{CustomerInput, Customers};
use super::events;
use super::ledger::{self, Kind, LedgerError, Movement};
use super::plugins::{Denial, Plugins};
use super::{FieldError, Page, PageInfo, Problem, Validation, idempotency};
use crate::store::{
    self, Store, StoreError, charges::ChargeRow, idempotency::Claim, ledger::TransactionRow,
};

/// Seconds a charge lives unless told otherwise, and the least it may live.
pub const DEFAULT_EXPIRES_IN: i64 = 86_400;
pub const MIN_EXPIRES_IN: i64 = 300;
/// At most a year.
pub const MAX_EXPIRES_IN: i64 = 31_536_000;
/// The city written into BR Codes (the field is mandatory; companies have no city yet).
pub const MERCHANT_CITY: &str = "SAO PAULO";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Active,
    Completed,
    Expired,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "ACTIVE",
            Status::Completed => "COMPLETED",
            Status::Expired => "EXPIRED",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s.trim().to_ascii_uppercase().as_str() {
            "ACTIVE" => Some(Status::Active),
            "COMPLETED" => Some(Status::Completed),
            "EXPIRED" => Some(Status::Expired),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChargeError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the account has no Pix key to receive with")]
    AccountWithoutPixKey,
    #[error("the correlationID was used with another request body")]
    CorrelationIdConflict,
    #[error("charge not found")]
    NotFound,
    #[error("the charge is {0}, not ACTIVE")]
    NotActive(&'static str),
    #[error("a charge that received money cannot be deleted")]
    Paid,
    #[error("a company rule refused the charge: {0}")]
    Denied(Denial),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for ChargeError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ChargeError::NotFound,
            other => ChargeError::Store(other),
        }
    }
}

impl From<LedgerError> for ChargeError {
    fn from(err: LedgerError) -> Self {
        match err {
            LedgerError::Store(e) => e.into(),
            // A Pix in never lacks funds; surface it as the failure it would be.
            LedgerError::InsufficientFunds => ChargeError::Store(StoreError::InsufficientFunds),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AdditionalInfo {
    pub key: String,
    pub value: String,
}

/// What a client asks for.
#[derive(Clone, Debug, Default)]
pub struct NewCharge {
    pub correlation_id: Option<String>,
    pub value: Option<i64>,
    pub comment: Option<String>,
    pub expires_in: Option<i64>,
    /// An absolute expiry (ms) instead of `expires_in`, for charges issued ahead of
    /// their due date (subscription instalments); not limited to a year.
    pub expires_at: Option<i64>,
    pub customer: Option<CustomerInput>,
    pub additional_info: Vec<AdditionalInfo>,
}

#[derive(Clone, Debug)]
pub struct Charge {
    pub row: ChargeRow,
    pub customer: Option<super::customers::Customer>,
    pub additional_info: Vec<AdditionalInfo>,
}

impl Charge {
    pub fn status(&self) -> Status {
        Status::parse(&self.row.status).unwrap_or(Status::Active)
    }

    /// `Charge:<id>` in base64, the global id integrators know.
    pub fn global_id(&self) -> String {
        global_id(&self.row.id)
    }
}

pub fn global_id(id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("Charge:{id}"))
}

fn id_from_global(global: &str) -> Option<String> {
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(global)
        .ok()?;
    String::from_utf8(decoded)
        .ok()?
        .strip_prefix("Charge:")
        .map(str::to_owned)
}

/// A txid of 32 characters `[a-zA-Z0-9]` (Pix API: 26 to 35), unique per receiver.
fn new_txid() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::thread_rng();
    (0..32)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

#[derive(Clone, Debug)]
pub struct Charges {
    store: Store,
    plugins: Plugins,
    clock: SharedClock,
    customers: Customers,
}

impl Charges {
    pub fn new(store: Store, clock: SharedClock, customers: Customers, plugins: Plugins) -> Self {
        Self {
            plugins,
            store,
            clock,
            customers,
        }
    }

    async fn load(
        &self,
        conn: &mut sqlx::AnyConnection,
        row: ChargeRow,
    ) -> Result<Charge, ChargeError> {
        let customer = match &row.customer_id {
            Some(id) => Some(
                self.customers
                    .get_in(conn, &row.company_id, id)
                    .await
                    .map_err(|_| StoreError::Corrupt(format!("customer of charge {}", row.id)))?,
            ),
            None => None,
        };
        let additional_info = serde_json::from_str(&row.additional_info)
            .map_err(|_| StoreError::Corrupt(format!("additional info of charge {}", row.id)))?;
        Ok(Charge {
            row,
            customer,
            additional_info,
        })
    }

    /// Creates a charge for the caller's account. With the same correlationID and body
    /// it answers the charge it made before (`Ok((charge, false))`), also under
    /// concurrent repeats; with another body `CorrelationIdConflict`.
    #[instrument(name = "service.charges.create", skip_all, fields(account_id = %caller.account_id))]
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewCharge,
    ) -> Result<(Charge, bool), ChargeError> {
        let mut v = Validation::default();
        let correlation_id = v.correlation_id(new.correlation_id.as_deref());
        match new.value {
            None => v.add("value", Problem::Required),
            Some(value) if !(1..=MAX_AMOUNT_CENTS).contains(&value) => {
                v.add("value", Problem::Invalid)
            }
            Some(_) => {}
        }
        let now = self.clock.now_millis();
        let expires_in = match new.expires_at {
            Some(at) => (at - now) / 1000,
            None => new.expires_in.unwrap_or(DEFAULT_EXPIRES_IN),
        };
        match new.expires_at {
            Some(_) if expires_in < MIN_EXPIRES_IN => v.add("expiresAt", Problem::Invalid),
            Some(_) => {}
            None if !(MIN_EXPIRES_IN..=MAX_EXPIRES_IN).contains(&expires_in) => {
                v.add("expiresIn", Problem::Invalid)
            }
            None => {}
        }
        let comment = new
            .comment
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        if comment.as_ref().is_some_and(|c| c.chars().count() > 140) {
            v.add("comment", Problem::TooLong { max: 140 });
        }
        if new.additional_info.len() > 10 {
            v.add("additionalInfo", Problem::Invalid);
        }
        for (i, info) in new.additional_info.iter().enumerate() {
            if info.key.trim().is_empty()
                || info.key.chars().count() > 50
                || info.value.chars().count() > 200
            {
                v.add(format!("additionalInfo[{i}]"), Problem::Invalid);
            }
        }
        let customer_row = match &new.customer {
            Some(input) => match self
                .customers
                .prepare(&caller.company_id, "customer.", input)
            {
                Ok(row) => Some(row),
                Err(errors) => {
                    for e in errors {
                        v.add(e.field, e.problem);
                    }
                    None
                }
            },
            None => None,
        };
        v.finish().map_err(ChargeError::Validation)?;
        let correlation_id = correlation_id.expect("validated above");
        let value = new.value.expect("validated above");
        let request_hash = idempotency::request_hash(&serde_json::json!({
            "value": value,
            "comment": comment,
            // An absolute expiry is part of the body; a relative one is as sent.
            "expiresIn": new.expires_at.map_or(expires_in, |_| 0),
            "expiresAt": new.expires_at,
            "customer": customer_row.as_ref().map(|c| (&c.name, &c.email, &c.phone, &c.tax_id)),
            "additionalInfo": new.additional_info,
        }));

        // Company rules may set the expiry, the comment and additional info, or refuse.
        let shaped = self
            .plugins
            .shape_charge(
                &caller.company_id,
                cofre_plugin_host::ChargeDraft {
                    now_ms: now,
                    account_id: caller.account_id.clone(),
                    correlation_id: correlation_id.as_str().to_owned(),
                    value,
                    comment: comment.clone(),
                    expires_in,
                    additional_info: new
                        .additional_info
                        .iter()
                        .map(|i| (i.key.clone(), i.value.clone()))
                        .collect(),
                },
            )
            .await
            .map_err(ChargeError::Denied)?;
        let comment = shaped
            .comment
            .map(|c| c.chars().take(140).collect::<String>())
            .filter(|c| !c.trim().is_empty());
        let expires_in = if (MIN_EXPIRES_IN..=MAX_EXPIRES_IN).contains(&shaped.expires_in) {
            shaped.expires_in
        } else {
            expires_in
        };
        let additional_info: Vec<AdditionalInfo> = shaped
            .additional_info
            .into_iter()
            .take(10)
            .map(|(key, value)| AdditionalInfo { key, value })
            .collect();
        let id = store::new_id("chg");
        let mut tx = self.store.begin().await?;
        let claim = store::idempotency::claim(
            &mut tx,
            &caller.company_id,
            "charge",
            correlation_id.as_str(),
            &request_hash,
            &id,
            now,
        )
        .await?;
        if let Claim::Existing {
            request_hash: existing,
            resource_id,
        } = claim
        {
            drop(tx);
            if existing != request_hash {
                return Err(ChargeError::CorrelationIdConflict);
            }
            let mut conn = self
                .store
                .pool()
                .acquire()
                .await
                .map_err(StoreError::from)?;
            let row = store::charges::find(&mut *conn, Some(&caller.company_id), &resource_id)
                .await?
                .ok_or(ChargeError::NotFound)?;
            return Ok((self.load(&mut conn, row).await?, false));
        }
        let keys = store::pix_keys::list_for_account(&mut *tx, &caller.account_id).await?;
        let key = keys
            .into_iter()
            .find(|k| k.is_default)
            .ok_or(ChargeError::AccountWithoutPixKey)?;
        let company = store::companies::get(&mut *tx, &caller.company_id).await?;
        let customer_id = match customer_row {
            Some(row) => {
                match store::customers::find(&mut *tx, &caller.company_id, &row.correlation_id)
                    .await?
                {
                    Some(existing) => Some(existing.id),
                    None => {
                        store::customers::insert(&mut tx, &row).await?;
                        Some(row.id)
                    }
                }
            }
            None => None,
        };
        let transaction_id = new_txid();
        let br_code = BrCode {
            single_use: true,
            pix_key: key.key.clone(),
            amount: Some(value),
            merchant_name: company.name,
            merchant_city: MERCHANT_CITY.into(),
            txid: transaction_id.clone(),
            description: None,
        }
        .encode();
        let row = ChargeRow {
            id,
            company_id: caller.company_id.clone(),
            account_id: caller.account_id.clone(),
            application_id: Some(caller.application_id.clone()),
            correlation_id: correlation_id.as_str().to_owned(),
            transaction_id,
            value,
            comment,
            status: Status::Active.as_str().to_owned(),
            pix_key: key.key,
            br_code,
            customer_id,
            additional_info: serde_json::to_string(&additional_info).expect("serialises"),
            expires_at: new.expires_at.unwrap_or(now + expires_in * 1000),
            paid_at: None,
            payment_id: None,
            created_at: now,
            updated_at: now,
        };
        store::charges::insert(&mut tx, &row).await?;
        events::emit(
            &mut tx,
            now,
            &row.company_id,
            row.application_id.as_deref(),
            events::CHARGE_CREATED,
            serde_json::json!({ "charge": events::charge_json(&row) }),
        )
        .await?;
        let charge = self.load(&mut tx, row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(charge_id = %charge.row.id, value, "charge created");
        Ok((charge, true))
    }

    /// A charge of the caller's account by id, correlationID, transactionID or globalID.
    pub async fn get(&self, caller: &Caller, any_id: &str) -> Result<Charge, ChargeError> {
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        let row = self.find_row(&mut conn, caller, any_id).await?;
        self.load(&mut conn, row).await
    }

    async fn find_row(
        &self,
        conn: &mut sqlx::AnyConnection,
        caller: &Caller,
        any_id: &str,
    ) -> Result<ChargeRow, ChargeError> {
        let id = id_from_global(any_id).unwrap_or_else(|| any_id.to_owned());
        let row = store::charges::find(&mut *conn, Some(&caller.company_id), &id)
            .await?
            .ok_or(ChargeError::NotFound)?;
        // Another account's charge of the same company is not the caller's to see.
        if row.account_id != caller.account_id && !caller.is_master() {
            return Err(ChargeError::NotFound);
        }
        Ok(row)
    }

    /// A charge by its transactionID for the public payment page and QR image.
    pub async fn public(&self, transaction_id: &str) -> Result<ChargeRow, ChargeError> {
        let row = store::charges::find(self.store.pool(), None, transaction_id)
            .await?
            .ok_or(ChargeError::NotFound)?;
        if row.transaction_id != transaction_id {
            return Err(ChargeError::NotFound);
        }
        Ok(row)
    }

    pub async fn list(
        &self,
        caller: &Caller,
        status: Option<Status>,
        start: i64,
        end: i64,
        page: Page,
    ) -> Result<(Vec<Charge>, PageInfo), ChargeError> {
        let filter = store::charges::ChargeFilter {
            status: status.map(|s| s.as_str().to_owned()),
            start,
            end,
        };
        let (rows, total) = store::charges::list(
            self.store.pool(),
            &caller.account_id,
            &filter,
            page.skip,
            page.limit,
        )
        .await?;
        let mut conn = self
            .store
            .pool()
            .acquire()
            .await
            .map_err(StoreError::from)?;
        let mut charges = Vec::with_capacity(rows.len());
        for row in rows {
            charges.push(self.load(&mut conn, row).await?);
        }
        Ok((charges, page.info(total)))
    }

    /// Deletes a charge that received no money; its BR Code can no longer be paid.
    #[instrument(name = "service.charges.delete", skip_all)]
    pub async fn delete(&self, caller: &Caller, any_id: &str) -> Result<(), ChargeError> {
        let mut tx = self.store.begin().await?;
        let row = self.find_row(&mut tx, caller, any_id).await?;
        let row = store::charges::lock(&mut tx, self.store.backend(), &row.id).await?;
        if row.payment_id.is_some() {
            return Err(ChargeError::Paid);
        }
        store::charges::delete(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    /// Pays an ACTIVE, unexpired charge (the sandbox's payer): the Pix in and the
    /// charge's completion commit together.
    #[instrument(name = "service.charges.pay", skip_all)]
    pub async fn pay(
        &self,
        caller: &Caller,
        any_id: &str,
        payer: serde_json::Value,
    ) -> Result<(Charge, TransactionRow), ChargeError> {
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let found = self.find_row(&mut tx, caller, any_id).await?;
        let row = store::charges::lock(&mut tx, self.store.backend(), &found.id).await?;
        match Status::parse(&row.status) {
            Some(Status::Active) if row.expires_at > now => {}
            Some(Status::Active) | Some(Status::Expired) => {
                return Err(ChargeError::NotActive("EXPIRED"));
            }
            _ => return Err(ChargeError::NotActive("COMPLETED")),
        }
        let payment = ledger::record(
            &mut tx,
            now,
            Movement {
                id: None,
                kind: Kind::PixIn,
                company_id: row.company_id.clone(),
                account_id: row.account_id.clone(),
                value: row.value,
                charge_id: Some(row.id.clone()),
                description: row.comment.clone(),
                counterparty: payer,
                original_id: None,
                correlation_id: None,
            },
        )
        .await?;
        store::charges::complete(&mut tx, &row.id, &payment.id, now).await?;
        let paid = store::charges::lock(&mut tx, self.store.backend(), &row.id).await?;
        let payload = serde_json::json!({
            "charge": events::charge_json(&paid),
            "pix": events::transaction_json(&payment),
        });
        for event in [events::CHARGE_COMPLETED, events::TRANSACTION_RECEIVED] {
            events::emit(
                &mut tx,
                now,
                &paid.company_id,
                paid.application_id.as_deref(),
                event,
                payload.clone(),
            )
            .await?;
        }
        let charge = self.load(&mut tx, paid).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(charge_id = %charge.row.id, "charge paid");
        Ok((charge, payment))
    }

    /// Moves every ACTIVE charge past its expiry to EXPIRED (the background task).
    pub async fn expire_due(&self) -> Result<Vec<String>, ChargeError> {
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let ids = store::charges::expire_due(&mut tx, now).await?;
        for id in &ids {
            let row = store::charges::lock(&mut tx, self.store.backend(), id).await?;
            events::emit(
                &mut tx,
                now,
                &row.company_id,
                row.application_id.as_deref(),
                events::CHARGE_EXPIRED,
                serde_json::json!({ "charge": events::charge_json(&row) }),
            )
            .await?;
        }
        tx.commit().await.map_err(StoreError::from)?;
        if !ids.is_empty() {
            tracing::info!(count = ids.len(), "charges expired");
        }
        Ok(ids)
    }
}
