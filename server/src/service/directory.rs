//! The simulated Pix directory (DICT). This module holds its external part: entries of
//! other banks' customers, imported from a file and read-only afterwards.

use rand::Rng;
use serde::Deserialize;
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::pix_key::{PixKey, PixKeyError, PixKeyType};
use super::tax_id::TaxId;
use crate::store::{self, Store, StoreError, directory::DictEntryRow};

/// The token bucket of directory lookups (CONTRACT.md, after Woovi's per-holder rule):
/// 500 tokens, +20 a minute; a found key costs 1, a missing one 20, Cofre's own 0;
/// below 20 tokens a lookup is refused.
pub mod bucket {
    pub const CAPACITY: i64 = 500;
    pub const REFILL_PER_MINUTE: i64 = 20;
    pub const COST_FOUND: i64 = 1;
    pub const COST_NOT_FOUND: i64 = 20;
    pub const COST_OWN: i64 = 0;
    pub const MINIMUM: i64 = 20;
    /// Thousandths of a token, so that refill needs no floating point.
    pub const MILLI: i64 = 1000;

    /// The stored level after `elapsed_ms` of refill, capped at the capacity.
    pub fn refilled(millitokens: i64, elapsed_ms: i64) -> i64 {
        let gained = elapsed_ms.max(0).saturating_mul(REFILL_PER_MINUTE * MILLI) / 60_000;
        millitokens.saturating_add(gained).min(CAPACITY * MILLI)
    }

    /// Seconds until `millitokens` refills to the minimum.
    pub fn seconds_until_minimum(millitokens: i64) -> u64 {
        let missing = (MINIMUM * MILLI - millitokens).max(0);
        let ms = missing * 60_000 / (REFILL_PER_MINUTE * MILLI);
        (ms as u64).div_ceil(1000).max(1)
    }
}

/// The PSP name shown for keys of Cofre's own accounts.
pub const COFRE_PSP: &str = "COFRE";

/// Who holds a key, as a lookup shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub name: String,
    pub tax_id: TaxId,
    /// The ISPB of the holder's institution, or `COFRE` for Cofre's own accounts.
    pub psp: String,
    pub branch: String,
    pub account: String,
    /// The key belongs to an account of Cofre itself.
    pub internal: bool,
}

/// A successful lookup.
#[derive(Clone, Debug)]
pub struct Lookup {
    /// New on every lookup; a payment to the key quotes it.
    pub end_to_end_id: String,
    pub key: PixKey,
    pub owner: Owner,
}

/// The state of a holder's bucket, refilled to now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tokens {
    pub available: i64,
    pub capacity: i64,
    pub refill_per_minute: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error(transparent)]
    Invalid(PixKeyError),
    #[error("the key is not in the directory")]
    NotFound,
    #[error("directory lookups exhausted; retry in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An endToEndId as the Pix API shapes it: `E`, an ISPB, `yyyyMMddHHmm`, 11 characters.
pub fn new_end_to_end_id(now_millis: i64) -> String {
    const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(now_millis) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let mut rng = rand::thread_rng();
    let tail: String = (0..11)
        .map(|_| ALPHANUMERIC[rng.gen_range(0..ALPHANUMERIC.len())] as char)
        .collect();
    format!(
        "E{}{:04}{:02}{:02}{:02}{:02}{tail}",
        COFRE_ISPB,
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    )
}

/// The ISPB written into Cofre's endToEndIds (a simulator's, not a real institution's).
pub const COFRE_ISPB: &str = "99999999";

fn mask_account(number: &str) -> String {
    let visible: String = number
        .chars()
        .rev()
        .take(2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!(
        "{}{visible}",
        "*".repeat(number.chars().count().saturating_sub(2).max(2))
    )
}

/// One line of an import file (CSV with a header row, or JSON lines).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportLine {
    pub key: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub holder_name: String,
    #[serde(rename = "holderTaxID")]
    pub holder_tax_id: String,
    pub ispb: String,
    pub branch: String,
    pub account_number: String,
    pub account_type: String,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub read: usize,
    pub imported: usize,
    pub unchanged: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    /// Nothing was imported: every problem of the file is listed.
    #[error("the file has invalid lines:\n{}", .0.join("\n"))]
    InvalidFile(Vec<String>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Clone, Debug)]
pub struct Directory {
    store: Store,
    clock: SharedClock,
}

/// Parses the import file's text: JSON lines when `json_lines`, else CSV with a header.
pub fn parse_import(text: &str, json_lines: bool) -> Result<Vec<(usize, ImportLine)>, Vec<String>> {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    if json_lines {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<ImportLine>(line) {
                Ok(l) => lines.push((i + 1, l)),
                Err(e) => problems.push(format!("line {}: {e}", i + 1)),
            }
        }
    } else {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        for (i, record) in reader.deserialize::<ImportLine>().enumerate() {
            match record {
                Ok(l) => lines.push((i + 2, l)),
                Err(e) => problems.push(format!("line {}: {e}", i + 2)),
            }
        }
    }
    if problems.is_empty() {
        Ok(lines)
    } else {
        Err(problems)
    }
}

fn validate(line: usize, l: &ImportLine) -> Result<DictEntryRow, String> {
    let kind = PixKeyType::parse(&l.kind)
        .ok_or_else(|| format!("line {line}: unknown key type {:?}", l.kind))?;
    let key = PixKey::parse(kind, &l.key).map_err(|e| format!("line {line}: {e}"))?;
    let holder =
        TaxId::parse(&l.holder_tax_id).map_err(|e| format!("line {line}: holderTaxID: {e}"))?;
    let required = [
        ("holderName", &l.holder_name),
        ("ispb", &l.ispb),
        ("branch", &l.branch),
        ("accountNumber", &l.account_number),
        ("accountType", &l.account_type),
    ];
    if let Some((field, _)) = required.iter().find(|(_, v)| v.trim().is_empty()) {
        return Err(format!("line {line}: {field} is required"));
    }
    if l.ispb.len() != 8 || !l.ispb.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("line {line}: ispb must have 8 digits"));
    }
    Ok(DictEntryRow {
        key: key.as_str().to_owned(),
        kind: kind.as_str().to_owned(),
        holder_name: l.holder_name.trim().to_owned(),
        holder_tax_id: holder.as_str().to_owned(),
        ispb: l.ispb.clone(),
        branch: l.branch.trim().to_owned(),
        account_number: l.account_number.trim().to_owned(),
        account_type: l.account_type.trim().to_ascii_uppercase(),
    })
}

impl Directory {
    pub fn new(store: Store, clock: SharedClock) -> Self {
        Self { store, clock }
    }

    /// The caller's holder: the tax id of the caller's company, whose AppIDs all share
    /// one bucket.
    async fn holder_of(&self, caller: &Caller) -> Result<TaxId, StoreError> {
        let company = store::companies::get(self.store.pool(), &caller.company_id).await?;
        TaxId::parse(&company.tax_id)
            .map_err(|_| StoreError::Corrupt(format!("tax id of company {}", company.id)))
    }

    /// Looks a key up for the caller, paying its cost from the caller's bucket in the
    /// same transaction that reads the bucket, so concurrent lookups (on any process)
    /// can never overspend it.
    #[instrument(name = "service.directory.check", skip_all, fields(company_id = %caller.company_id))]
    pub async fn check(&self, caller: &Caller, value: &str) -> Result<Lookup, LookupError> {
        let key = PixKey::detect(value).map_err(LookupError::Invalid)?;
        let holder = self.holder_of(caller).await?;
        let now = self.clock.now_millis();
        let mut tx = self.store.begin().await?;
        let (stored, at) = store::dict_buckets::lock(
            &mut tx,
            self.store.backend(),
            holder.as_str(),
            bucket::CAPACITY * bucket::MILLI,
            now,
        )
        .await?;
        let level = bucket::refilled(stored, now - at);
        if level < bucket::MINIMUM * bucket::MILLI {
            return Err(LookupError::RateLimited {
                retry_after_secs: bucket::seconds_until_minimum(level),
            });
        }
        let (owner, cost) = match self.find_owner(&mut tx, &key).await? {
            Some(owner) if owner.internal => (Some(owner), bucket::COST_OWN),
            Some(owner) => (Some(owner), bucket::COST_FOUND),
            None => (None, bucket::COST_NOT_FOUND),
        };
        store::dict_buckets::store(
            &mut tx,
            holder.as_str(),
            level - cost * bucket::MILLI,
            now.max(at),
        )
        .await?;
        tx.commit().await.map_err(StoreError::from)?;
        let owner = owner.ok_or(LookupError::NotFound)?;
        Ok(Lookup {
            end_to_end_id: new_end_to_end_id(now),
            key,
            owner,
        })
    }

    /// Cofre's keys first, then the external entries.
    async fn find_owner(
        &self,
        tx: &mut store::Tx,
        key: &PixKey,
    ) -> Result<Option<Owner>, StoreError> {
        if let Some(own) = store::pix_keys::find(&mut **tx, key.as_str()).await? {
            let company = store::companies::get(&mut **tx, &own.company_id).await?;
            return Ok(Some(Owner {
                name: company.name,
                tax_id: TaxId::parse(&company.tax_id)
                    .map_err(|_| StoreError::Corrupt("company tax id".into()))?,
                psp: COFRE_PSP.into(),
                branch: "0001".into(),
                account: mask_account(own.account_id.trim_start_matches("acc_")),
                internal: true,
            }));
        }
        let Some(entry) = store::directory::find(&mut **tx, key.as_str()).await? else {
            return Ok(None);
        };
        Ok(Some(Owner {
            name: entry.holder_name,
            tax_id: TaxId::parse(&entry.holder_tax_id)
                .map_err(|_| StoreError::Corrupt("holder tax id".into()))?,
            psp: entry.ispb,
            branch: entry.branch,
            account: mask_account(&entry.account_number),
            internal: false,
        }))
    }

    /// The caller's bucket as it stands now (refilled, not charged).
    pub async fn tokens(&self, caller: &Caller) -> Result<Tokens, StoreError> {
        let holder = self.holder_of(caller).await?;
        let now = self.clock.now_millis();
        let level = match store::dict_buckets::peek(self.store.pool(), holder.as_str()).await? {
            Some((stored, at)) => bucket::refilled(stored, now - at),
            None => bucket::CAPACITY * bucket::MILLI,
        };
        Ok(Tokens {
            available: level / bucket::MILLI,
            capacity: bucket::CAPACITY,
            refill_per_minute: bucket::REFILL_PER_MINUTE,
        })
    }

    /// Imports external entries, all or nothing. An entry already present with the same
    /// data is left as it is; a key already present with other data is an error.
    #[instrument(name = "service.directory.import", skip_all, fields(lines = lines.len()))]
    pub async fn import(
        &self,
        lines: &[(usize, ImportLine)],
    ) -> Result<ImportReport, DirectoryError> {
        let mut rows = Vec::with_capacity(lines.len());
        let mut problems = Vec::new();
        for (n, l) in lines {
            match validate(*n, l) {
                Ok(row) => rows.push((*n, row)),
                Err(p) => problems.push(p),
            }
        }
        if !problems.is_empty() {
            return Err(DirectoryError::InvalidFile(problems));
        }
        let mut report = ImportReport {
            read: rows.len(),
            ..Default::default()
        };
        let now = store::now_millis();
        let mut tx = self.store.begin().await?;
        for (n, row) in &rows {
            if store::pix_keys::find(&mut *tx, &row.key).await?.is_some() {
                problems.push(format!(
                    "line {n}: key {} belongs to a Cofre account",
                    row.key
                ));
                continue;
            }
            if store::directory::insert_if_absent(&mut tx, row, now).await? {
                report.imported += 1;
                continue;
            }
            match store::directory::find(&mut *tx, &row.key).await? {
                Some(existing) if existing == *row => report.unchanged += 1,
                _ => problems.push(format!(
                    "line {n}: key {} is already in the directory with other data",
                    row.key
                )),
            }
        }
        if !problems.is_empty() {
            return Err(DirectoryError::InvalidFile(problems));
        }
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(
            imported = report.imported,
            unchanged = report.unchanged,
            "directory import"
        );
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_refills_twenty_a_minute_up_to_the_capacity() {
        assert_eq!(bucket::refilled(0, 60_000), 20_000);
        assert_eq!(bucket::refilled(0, 3_000), 1_000);
        assert_eq!(bucket::refilled(499_000, 600_000), 500_000);
        assert_eq!(bucket::refilled(10_000, -5), 10_000);
        assert_eq!(bucket::seconds_until_minimum(0), 60);
        assert_eq!(bucket::seconds_until_minimum(19_999), 1);
    }

    #[test]
    fn end_to_end_ids_have_32_characters() {
        let id = new_end_to_end_id(1_763_700_000_000);
        assert_eq!(id.len(), 32);
        assert!(id.starts_with("E99999999"));
        assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn account_numbers_are_masked_but_the_last_two() {
        assert_eq!(mask_account("123456"), "****56");
        assert_eq!(mask_account("9"), "**9");
    }
}
