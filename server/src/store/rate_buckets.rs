//! Token buckets of API requests, one per AppID, kept in the database so that every
//! `cofre` process on it shares one bucket per application (`rate_limit.store`).
//!
//! One statement refills the bucket for the time since its last take, takes a token
//! when there is one, and records whether it did: there is no read-then-write race
//! between processes, and the row lock is held for that statement only.

use sqlx::Row;

use super::StoreResult;

/// What a take found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    Admitted,
    /// Empty: milliseconds until the next token.
    Refused {
        wait_ms: i64,
    },
}

/// Takes one token from the bucket of `key`, which holds at most `burst` tokens and
/// gains `per_second` tokens a second. A new key starts full.
pub async fn take(
    pool: &sqlx::AnyPool,
    key: &str,
    per_second: i64,
    burst: i64,
    now: i64,
) -> StoreResult<Take> {
    let full = burst * 1000;
    // Millitokens after the refill; a clock that went backwards refills nothing.
    let refilled = "CASE WHEN rate_buckets.updated_at >= $3 THEN rate_buckets.millitokens \
                    WHEN rate_buckets.millitokens + ($3 - rate_buckets.updated_at) * $4 >= $2 \
                    THEN $2 \
                    ELSE rate_buckets.millitokens + ($3 - rate_buckets.updated_at) * $4 END";
    let sql = format!(
        "INSERT INTO rate_buckets (key, millitokens, updated_at, admitted) \
         VALUES ($1, $2 - 1000, $3, 1) \
         ON CONFLICT (key) DO UPDATE SET \
           millitokens = CASE WHEN ({refilled}) >= 1000 THEN ({refilled}) - 1000 \
                         ELSE ({refilled}) END, \
           admitted = CASE WHEN ({refilled}) >= 1000 THEN 1 ELSE 0 END, \
           updated_at = CASE WHEN rate_buckets.updated_at >= $3 \
                        THEN rate_buckets.updated_at ELSE $3 END \
         RETURNING millitokens, admitted"
    );
    let row = sqlx::query(&sql)
        .bind(key)
        .bind(full)
        .bind(now)
        .bind(per_second)
        .fetch_one(pool)
        .await?;
    let millitokens: i64 = row.try_get("millitokens")?;
    let admitted: i64 = row.try_get("admitted")?;
    Ok(if admitted != 0 {
        Take::Admitted
    } else {
        let missing = 1000 - millitokens;
        Take::Refused {
            wait_ms: (missing + per_second - 1) / per_second.max(1),
        }
    })
}
