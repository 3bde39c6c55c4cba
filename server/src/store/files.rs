//! File records (the bytes live in the object store) and the platform secrets that
//! sign their download links.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{StoreResult, Tx};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRow {
    pub id: String,
    pub company_id: String,
    pub purpose: String,
    pub name: String,
    pub content_type: String,
    pub size: i64,
    pub sha256: String,
    pub correlation_id: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str =
    "id, company_id, purpose, name, content_type, size, sha256, correlation_id, created_at";

fn file(row: &AnyRow) -> StoreResult<FileRow> {
    Ok(FileRow {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        purpose: row.try_get("purpose")?,
        name: row.try_get("name")?,
        content_type: row.try_get("content_type")?,
        size: row.try_get("size")?,
        sha256: row.try_get("sha256")?,
        correlation_id: row.try_get("correlation_id")?,
        created_at: row.try_get("created_at")?,
    })
}

pub async fn insert(tx: &mut Tx, row: &FileRow) -> StoreResult<()> {
    sqlx::query(&format!(
        "INSERT INTO files ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ))
    .bind(&row.id)
    .bind(&row.company_id)
    .bind(&row.purpose)
    .bind(&row.name)
    .bind(&row.content_type)
    .bind(row.size)
    .bind(&row.sha256)
    .bind(&row.correlation_id)
    .bind(row.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A file by id, whatever its company: callers check the company themselves.
pub async fn find<'e, E>(db: E, id: &str) -> StoreResult<Option<FileRow>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM files WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    row.as_ref().map(file).transpose()
}

/// The files of `ids` that exist, in any order, in one query (on a pooled connection
/// or inside a transaction: `&mut *tx`).
pub async fn find_many(
    conn: &mut sqlx::AnyConnection,
    ids: &[String],
) -> StoreResult<Vec<FileRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {COLUMNS} FROM files WHERE id IN ({})",
        placeholders.join(", ")
    );
    let mut query = sqlx::query(&sql);
    for id in ids {
        query = query.bind(id);
    }
    let rows = query.fetch_all(&mut *conn).await?;
    rows.iter().map(file).collect()
}

/// The value of the platform secret `name`, created from `candidate` by the first
/// process that asks; every later call (of any process) reads the same value.
pub async fn secret(tx: &mut Tx, name: &str, candidate: &str, now: i64) -> StoreResult<String> {
    sqlx::query(
        "INSERT INTO platform_secrets (name, value, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(candidate)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let row = sqlx::query("SELECT value FROM platform_secrets WHERE name = $1")
        .bind(name)
        .fetch_one(&mut **tx)
        .await?;
    Ok(row.try_get("value")?)
}
