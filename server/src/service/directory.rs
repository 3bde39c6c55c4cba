//! The simulated Pix directory (DICT). This module holds its external part: entries of
//! other banks' customers, imported from a file and read-only afterwards.

use serde::Deserialize;
use tracing::instrument;

use super::pix_key::{PixKey, PixKeyType};
use super::tax_id::TaxId;
use crate::store::{self, Store, StoreError, directory::DictEntryRow};

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
    pub fn new(store: Store) -> Self {
        Self { store }
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
