//! Static QR codes (`/api/v1/qrcode-static`, also `/api/v1/pixQrCode`): a reusable BR
//! Code for a key of the account, with or without a fixed value.

use rand::Rng;
use tracing::instrument;

use super::applications::Caller;
use super::br_code::{BrCode, MAX_AMOUNT_CENTS};
use super::charges::MERCHANT_CITY;
use super::clock::SharedClock;
use super::pix_key::PixKey;
use super::{FieldError, Page, PageInfo, Problem, Validation, idempotency};
use crate::store::{self, Store, StoreError, charges::StaticQrRow, idempotency::Claim};

#[derive(Debug, thiserror::Error)]
pub enum QrCodeError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the account has no such Pix key")]
    PixKeyNotFound,
    #[error("the account has no Pix key")]
    AccountWithoutPixKey,
    #[error("the correlationID was used with another request body")]
    CorrelationIdConflict,
    #[error("QR code not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a client asks for.
#[derive(Clone, Debug, Default)]
pub struct NewQrCode {
    pub name: Option<String>,
    pub correlation_id: Option<String>,
    pub value: Option<i64>,
    pub comment: Option<String>,
    pub pix_key: Option<String>,
}

#[derive(Clone, Debug)]
pub struct QrCodes {
    store: Store,
    clock: SharedClock,
}

/// 25 alphanumeric characters: the txid field of a static code holds at most 25.
fn new_identifier() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::thread_rng();
    (0..25)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

impl QrCodes {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    #[instrument(name = "service.qr_codes.create", skip_all, fields(account_id = %caller.account_id))]
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewQrCode,
    ) -> Result<(StaticQrRow, bool), QrCodeError> {
        let mut v = Validation::default();
        let name = v.text("name", new.name.as_deref(), 100);
        let correlation_id = v.correlation_id(new.correlation_id.as_deref());
        if new
            .value
            .is_some_and(|x| !(1..=MAX_AMOUNT_CENTS).contains(&x))
        {
            v.add("value", Problem::Invalid);
        }
        let comment = new
            .comment
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        if comment.as_ref().is_some_and(|c| c.chars().count() > 60) {
            v.add("comment", Problem::TooLong { max: 60 });
        }
        let wanted_key = match new
            .pix_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            Some(k) => PixKey::detect(k)
                .map_err(|_| v.add("pixKey", Problem::Invalid))
                .ok(),
            None => None,
        };
        v.finish().map_err(QrCodeError::Validation)?;
        let correlation_id = correlation_id.expect("validated above");
        let hash = idempotency::request_hash(&serde_json::json!({
            "name": name, "value": new.value, "comment": comment, "pixKey": wanted_key.as_ref().map(|k| k.as_str()),
        }));
        let now = self.clock.now_millis();
        let id = store::new_id("qrs");
        let mut tx = self.store.begin().await?;
        let claim = store::idempotency::claim(
            &mut tx,
            &caller.company_id,
            "qrcode-static",
            correlation_id.as_str(),
            &hash,
            &id,
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
                return Err(QrCodeError::CorrelationIdConflict);
            }
            let row =
                store::charges::find_static(self.store.pool(), &caller.company_id, &resource_id)
                    .await?;
            return Ok((row.ok_or(QrCodeError::NotFound)?, false));
        }
        let keys = store::pix_keys::list_for_account(&mut *tx, &caller.account_id).await?;
        let key = match &wanted_key {
            Some(k) => keys
                .into_iter()
                .find(|own| own.key == k.as_str())
                .ok_or(QrCodeError::PixKeyNotFound)?,
            None => keys
                .into_iter()
                .find(|own| own.is_default)
                .ok_or(QrCodeError::AccountWithoutPixKey)?,
        };
        let company = store::companies::get(&mut *tx, &caller.company_id).await?;
        let identifier = new_identifier();
        let br_code = BrCode {
            single_use: false,
            pix_key: key.key.clone(),
            amount: new.value,
            merchant_name: company.name,
            merchant_city: MERCHANT_CITY.into(),
            txid: identifier.clone(),
            description: comment.clone(),
        }
        .encode();
        let row = StaticQrRow {
            id,
            company_id: caller.company_id.clone(),
            account_id: caller.account_id.clone(),
            correlation_id: correlation_id.as_str().to_owned(),
            identifier,
            name,
            value: new.value,
            comment,
            pix_key: key.key,
            br_code,
            created_at: now,
        };
        store::charges::insert_static(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok((row, true))
    }

    pub async fn get(&self, caller: &Caller, any_id: &str) -> Result<StaticQrRow, QrCodeError> {
        store::charges::find_static(self.store.pool(), &caller.company_id, any_id)
            .await?
            .filter(|q| caller.is_master() || q.account_id == caller.account_id)
            .ok_or(QrCodeError::NotFound)
    }

    /// A static QR code by its public identifier (its image needs no AppID).
    pub async fn public(&self, identifier: &str) -> Result<StaticQrRow, QrCodeError> {
        store::charges::find_static_by_identifier(self.store.pool(), identifier)
            .await?
            .ok_or(QrCodeError::NotFound)
    }

    pub async fn list(
        &self,
        caller: &Caller,
        page: Page,
    ) -> Result<(Vec<StaticQrRow>, PageInfo), QrCodeError> {
        let (rows, total) = store::charges::list_static(
            self.store.pool(),
            &caller.account_id,
            page.skip,
            page.limit,
        )
        .await?;
        Ok((rows, page.info(total)))
    }
}
