//! Token buckets of directory lookups, one per account holder, kept in the database
//! so that every `cofre` process and every AppID of a holder share one bucket.

use sqlx::Row;

use super::{Backend, StoreResult, Tx};

/// Locks the holder's bucket for the rest of the transaction (created full on first
/// use) and answers `(millitokens, updated_at)` as stored.
pub async fn lock(
    tx: &mut Tx,
    backend: Backend,
    holder_tax_id: &str,
    full_millitokens: i64,
    now: i64,
) -> StoreResult<(i64, i64)> {
    sqlx::query(
        "INSERT INTO dict_buckets (holder_tax_id, millitokens, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (holder_tax_id) DO NOTHING",
    )
    .bind(holder_tax_id)
    .bind(full_millitokens)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    // SQLite's BEGIN IMMEDIATE already holds the only write lock.
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let row = sqlx::query(&format!(
        "SELECT millitokens, updated_at FROM dict_buckets WHERE holder_tax_id = $1{lock}"
    ))
    .bind(holder_tax_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok((row.try_get("millitokens")?, row.try_get("updated_at")?))
}

pub async fn store(
    tx: &mut Tx,
    holder_tax_id: &str,
    millitokens: i64,
    updated_at: i64,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE dict_buckets SET millitokens = $1, updated_at = $2 WHERE holder_tax_id = $3",
    )
    .bind(millitokens)
    .bind(updated_at)
    .bind(holder_tax_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The stored state without locking (for `GET /api/v1/pix-keys/tokens`).
pub async fn peek<'e, E>(db: E, holder_tax_id: &str) -> StoreResult<Option<(i64, i64)>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row =
        sqlx::query("SELECT millitokens, updated_at FROM dict_buckets WHERE holder_tax_id = $1")
            .bind(holder_tax_id)
            .fetch_optional(db)
            .await?;
    row.map(|r| Ok((r.try_get("millitokens")?, r.try_get("updated_at")?)))
        .transpose()
}
