//! External entries of the simulated Pix directory (DICT): other banks' customers,
//! imported by `cofre dict import` and read-only afterwards.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DictEntryRow {
    pub key: String,
    pub kind: String,
    pub holder_name: String,
    pub holder_tax_id: String,
    pub ispb: String,
    pub branch: String,
    pub account_number: String,
    pub account_type: String,
}

fn entry(row: &AnyRow) -> StoreResult<DictEntryRow> {
    Ok(DictEntryRow {
        key: row.try_get("key")?,
        kind: row.try_get("type")?,
        holder_name: row.try_get("holder_name")?,
        holder_tax_id: row.try_get("holder_tax_id")?,
        ispb: row.try_get("ispb")?,
        branch: row.try_get("branch")?,
        account_number: row.try_get("account_number")?,
        account_type: row.try_get("account_type")?,
    })
}

const COLUMNS: &str =
    "key, type, holder_name, holder_tax_id, ispb, branch, account_number, account_type";

/// Inserts the entry unless its key is already there; answers whether it inserted.
pub async fn insert_if_absent(tx: &mut Tx, e: &DictEntryRow, at: i64) -> StoreResult<bool> {
    let done = sqlx::query(&format!(
        "INSERT INTO dict_entries ({COLUMNS}, imported_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (key) DO NOTHING"
    ))
    .bind(&e.key)
    .bind(&e.kind)
    .bind(&e.holder_name)
    .bind(&e.holder_tax_id)
    .bind(&e.ispb)
    .bind(&e.branch)
    .bind(&e.account_number)
    .bind(&e.account_type)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn find<'e, E>(db: E, key: &str) -> StoreResult<Option<DictEntryRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM dict_entries WHERE key = $1"
    ))
    .bind(key)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(entry).transpose()
}

pub async fn count<'e, E>(db: E) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(sqlx::query("SELECT COUNT(*) AS n FROM dict_entries")
        .fetch_one(db)
        .await?
        .try_get("n")?)
}
