//! Console sessions in the same database as everything else, so that any `cofre`
//! process behind a load balancer can serve any signed-in admin.

use async_trait::async_trait;
use sqlx::Row;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

use super::{Store, StoreError};

/// `tower_sessions::SessionStore` over the `console_sessions` table.
#[derive(Clone, Debug)]
pub struct SessionTable {
    store: Store,
}

impl SessionTable {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Removes expired sessions; run periodically by `serve`.
    pub async fn delete_expired(&self) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM console_sessions WHERE expires_at < $1")
            .bind(super::now_millis())
            .execute(self.store.pool())
            .await?;
        Ok(done.rows_affected())
    }
}

fn backend(err: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(err.to_string())
}

fn expiry_millis(record: &Record) -> i64 {
    (record.expiry_date.unix_timestamp_nanos() / 1_000_000) as i64
}

#[async_trait]
impl SessionStore for SessionTable {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        // A colliding random id is astronomically unlikely; draw again if it happens.
        loop {
            let inserted = sqlx::query(
                "INSERT INTO console_sessions (id, data, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(record.id.to_string())
            .bind(&data)
            .bind(expiry_millis(record))
            .execute(self.store.pool())
            .await
            .map_err(backend)?;
            if inserted.rows_affected() == 1 {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    /// Updates a session loaded earlier in the request. A session deleted meanwhile
    /// (signed out, cycled at sign-in, expired) stays deleted: tower-sessions calls
    /// `create` for new ones, so an upsert here would only bring ended sessions back.
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        sqlx::query("UPDATE console_sessions SET data = $2, expires_at = $3 WHERE id = $1")
            .bind(record.id.to_string())
            .bind(&data)
            .bind(expiry_millis(record))
            .execute(self.store.pool())
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row = sqlx::query(
            "SELECT data, expires_at FROM console_sessions WHERE id = $1 AND expires_at > $2",
        )
        .bind(id.to_string())
        .bind(super::now_millis())
        .fetch_optional(self.store.pool())
        .await
        .map_err(backend)?;
        let Some(row) = row else { return Ok(None) };
        let data: String = row.try_get("data").map_err(backend)?;
        let expires_at: i64 = row.try_get("expires_at").map_err(backend)?;
        Ok(Some(Record {
            id: *id,
            data: serde_json::from_str(&data)
                .map_err(|e| session_store::Error::Decode(e.to_string()))?,
            expiry_date: time::OffsetDateTime::from_unix_timestamp_nanos(
                i128::from(expires_at) * 1_000_000,
            )
            .map_err(|e| session_store::Error::Decode(e.to_string()))?,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sqlx::query("DELETE FROM console_sessions WHERE id = $1")
            .bind(id.to_string())
            .execute(self.store.pool())
            .await
            .map_err(backend)?;
        Ok(())
    }
}
