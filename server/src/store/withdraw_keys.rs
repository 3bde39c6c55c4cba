//! The withdraw keys a company has registered; each account selects one of them.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WithdrawKeyRow {
    pub id: String,
    pub company_id: String,
    pub key: String,
    pub kind: String,
    pub holder_name: String,
    pub holder_tax_id: String,
    pub ispb: String,
    pub created_at: i64,
}

const COLUMNS: &str = "id, company_id, key, type, holder_name, holder_tax_id, ispb, created_at";

fn withdraw_key(row: &AnyRow) -> StoreResult<WithdrawKeyRow> {
    Ok(WithdrawKeyRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        key: row.try_get("key")?,
        kind: row.try_get("type")?,
        holder_name: row.try_get("holder_name")?,
        holder_tax_id: row.try_get("holder_tax_id")?,
        ispb: row.try_get("ispb")?,
        created_at: row.try_get("created_at")?,
    })
}

/// `Duplicate` when the company already has this key.
pub async fn insert(tx: &mut Tx, row: &WithdrawKeyRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO withdraw_keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.key)
    .bind(&row.kind)
    .bind(&row.holder_name)
    .bind(&row.holder_tax_id)
    .bind(&row.ispb)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn find_for_company<'e, E>(
    db: E,
    company_id: &str,
    key: &str,
) -> StoreResult<Option<WithdrawKeyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM withdraw_keys WHERE company_id = $1 AND key = $2"
    ))
    .bind(company_id)
    .bind(key)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(withdraw_key).transpose()
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<WithdrawKeyRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM withdraw_keys WHERE id = $1"
    ))
    .bind(id)
    .fetch_one(db)
    .await?;
    withdraw_key(&row)
}

pub async fn count_for_company<'e, E>(db: E, company_id: &str) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(
        sqlx::query("SELECT COUNT(*) AS n FROM withdraw_keys WHERE company_id = $1")
            .bind(company_id)
            .fetch_one(db)
            .await?
            .try_get("n")?,
    )
}
