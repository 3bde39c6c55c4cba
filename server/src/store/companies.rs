//! Companies (tenants) and their feature switches.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug)]
pub struct CompanyRow {
    pub id: String,
    pub name: String,
    pub tax_id: String,
    pub created_at: i64,
}

fn company(row: &AnyRow) -> StoreResult<CompanyRow> {
    Ok(CompanyRow {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        tax_id: row.try_get("tax_id")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &CompanyRow) -> StoreResult<()> {
    sqlx::query("INSERT INTO companies (id, name, tax_id, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&row.id)
        .bind(&row.name)
        .bind(&row.tax_id)
        .bind(row.created_at)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn get<'e, E>(db: E, id: &str) -> StoreResult<CompanyRow>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query("SELECT id, name, tax_id, created_at FROM companies WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await?;
    company(&row)
}

pub async fn find_by_tax_id<'e, E>(db: E, tax_id: &str) -> StoreResult<Option<CompanyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query("SELECT id, name, tax_id, created_at FROM companies WHERE tax_id = $1")
        .bind(tax_id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(company).transpose()
}

pub async fn features<'e, E>(db: E, company_id: &str) -> StoreResult<Vec<String>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows =
        sqlx::query("SELECT feature FROM company_features WHERE company_id = $1 ORDER BY feature")
            .bind(company_id)
            .fetch_all(db)
            .await?;
    rows.iter().map(|r| Ok(r.try_get("feature")?)).collect()
}

/// Turns a feature on; turning on one that is already on changes nothing.
pub async fn enable_feature(
    tx: &mut Tx,
    company_id: &str,
    feature: &str,
    at: i64,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO company_features (company_id, feature, enabled_at) VALUES ($1, $2, $3) \
         ON CONFLICT (company_id, feature) DO NOTHING",
    )
    .bind(company_id)
    .bind(feature)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn disable_feature(tx: &mut Tx, company_id: &str, feature: &str) -> StoreResult<()> {
    sqlx::query("DELETE FROM company_features WHERE company_id = $1 AND feature = $2")
        .bind(company_id)
        .bind(feature)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Every company, by name (support's list).
pub async fn list_all<'e, E>(db: E) -> StoreResult<Vec<CompanyRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query("SELECT id, name, tax_id, created_at FROM companies ORDER BY name, id")
        .fetch_all(db)
        .await?;
    rows.iter().map(company).collect()
}
