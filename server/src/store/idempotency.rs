//! correlationID records: which resource a create with a given correlationID made, and
//! a hash of its request so that a different body with the same id is a conflict.

use sqlx::Row;

use super::{StoreResult, Tx};

/// What a create finds when it claims its correlationID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// First use: the caller creates the resource in the same transaction.
    New,
    /// Used before, by a committed create.
    Existing {
        request_hash: String,
        resource_id: String,
    },
}

/// Claims `(company, resource, correlation_id)` for `resource_id`. Concurrent claims
/// of one id serialise on the primary key: the loser sees the winner's row.
pub async fn claim(
    tx: &mut Tx,
    company_id: &str,
    resource: &str,
    correlation_id: &str,
    request_hash: &str,
    resource_id: &str,
    now: i64,
) -> StoreResult<Claim> {
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys \
         (company_id, resource, correlation_id, request_hash, resource_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (company_id, resource, correlation_id) DO NOTHING",
    )
    .bind(company_id)
    .bind(resource)
    .bind(correlation_id)
    .bind(request_hash)
    .bind(resource_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if inserted.rows_affected() == 1 {
        return Ok(Claim::New);
    }
    let row = sqlx::query(
        "SELECT request_hash, resource_id FROM idempotency_keys \
         WHERE company_id = $1 AND resource = $2 AND correlation_id = $3",
    )
    .bind(company_id)
    .bind(resource)
    .bind(correlation_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(Claim::Existing {
        request_hash: row.try_get("request_hash")?,
        resource_id: row.try_get("resource_id")?,
    })
}

/// The resource a correlationID made, if any.
pub async fn find<'e, E>(
    db: E,
    company_id: &str,
    resource: &str,
    correlation_id: &str,
) -> StoreResult<Option<String>>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "SELECT resource_id FROM idempotency_keys WHERE company_id = $1 AND resource = $2 AND correlation_id = $3",
    )
    .bind(company_id)
    .bind(resource)
    .bind(correlation_id)
    .fetch_optional(db)
    .await?;
    row.map(|r| Ok(r.try_get("resource_id")?)).transpose()
}
