//! Customers (payers) of a company, addressed by id or by correlationID.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomerRow {
    pub id: String,
    pub company_id: String,
    pub correlation_id: String,
    pub name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub tax_id: Option<String>,
    /// JSON object of the address fields.
    pub address: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str =
    "id, company_id, correlation_id, name, email, phone, tax_id, address, created_at, updated_at";

fn customer(row: &AnyRow) -> StoreResult<CustomerRow> {
    Ok(CustomerRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        correlation_id: row.try_get("correlation_id")?,
        name: row.try_get("name")?,
        email: row.try_get("email")?,
        phone: row.try_get("phone")?,
        tax_id: row.try_get("tax_id")?,
        address: row.try_get("address")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// `Duplicate` when the company already has a customer with this correlationID.
pub async fn insert(tx: &mut Tx, c: &CustomerRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO customers ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(&c.id)
    .bind(&c.company_id)
    .bind(&c.correlation_id)
    .bind(&c.name)
    .bind(&c.email)
    .bind(&c.phone)
    .bind(&c.tax_id)
    .bind(&c.address)
    .bind(c.created_at)
    .bind(c.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub async fn update(tx: &mut Tx, c: &CustomerRow) -> StoreResult<()> {
    sqlx::query(
        "UPDATE customers SET name = $1, email = $2, phone = $3, tax_id = $4, address = $5, updated_at = $6 WHERE id = $7",
    )
    .bind(&c.name)
    .bind(&c.email)
    .bind(&c.phone)
    .bind(&c.tax_id)
    .bind(&c.address)
    .bind(c.updated_at)
    .bind(&c.id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The company's customer by id or correlationID.
pub async fn find<'e, E>(
    db: E,
    company_id: &str,
    id_or_correlation: &str,
) -> StoreResult<Option<CustomerRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM customers WHERE company_id = $1 AND (id = $2 OR correlation_id = $2)"
    ))
    .bind(company_id)
    .bind(id_or_correlation)
    .fetch_optional(db)
    .await?;
    row.as_ref().map(customer).transpose()
}

pub async fn list<'e, E>(
    db: E,
    company_id: &str,
    skip: i64,
    limit: i64,
) -> StoreResult<Vec<CustomerRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM customers WHERE company_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
    ))
    .bind(company_id)
    .bind(limit)
    .bind(skip)
    .fetch_all(db)
    .await?;
    rows.iter().map(customer).collect()
}

pub async fn count<'e, E>(db: E, company_id: &str) -> StoreResult<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    Ok(
        sqlx::query("SELECT COUNT(*) AS n FROM customers WHERE company_id = $1")
            .bind(company_id)
            .fetch_one(db)
            .await?
            .try_get("n")?,
    )
}
