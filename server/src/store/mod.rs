//! The only place with SQL. One [`Store`] over SQLite (embedded default) or Postgres
//! (scale-out), chosen by the URL's scheme. Queries are written once in the SQL both
//! databases accept (`$n` placeholders, BIGINT milliseconds, TEXT ids); what differs
//! between the backends lives in [`Backend`] and the per-backend migrations.

pub mod accounts;
pub mod applications;
pub mod audit;
pub mod charges;
pub mod companies;
pub mod customers;
pub mod dict_buckets;
pub mod directory;
pub mod disputes;
pub mod events;
pub mod files;
pub mod idempotency;
pub mod kyc;
pub mod ledger;
pub mod pix_keys;
pub mod plugins;
pub mod rate_buckets;
pub mod sessions;
pub mod subscriptions;
pub mod users;
pub mod withdraw_keys;

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Which database a [`Store`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("row not found")]
    NotFound,
    /// A unique constraint refused the write; the service decides what that means.
    #[error("unique constraint violated")]
    Duplicate,
    #[error("unsupported database url: {0}")]
    UnsupportedUrl(String),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A balance update would take `available` or `blocked` below zero.
    #[error("insufficient funds")]
    InsufficientFunds,
    /// A stored value that no longer parses: a bug or a hand-edited database.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Database(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> Self {
        match &err {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Duplicate,
            _ => StoreError::Database(err),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A transaction of either backend; every write of a service runs inside one.
pub type Tx = sqlx::Transaction<'static, sqlx::Any>;

#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

impl Store {
    /// Connects to `sqlite://...` (file created if missing, WAL) or `postgres://...`.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl(redact(url)));
        };
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}mode=rwc")
            }
            _ => url.to_owned(),
        };
        let options = AnyConnectOptions::from_str(&url).map_err(StoreError::Database)?;
        let pool_options = match backend {
            // SQLite has one writer; a few connections serve concurrent readers, and
            // BEGIN IMMEDIATE (see `begin`) queues writers on the busy timeout.
            Backend::Sqlite => AnyPoolOptions::new()
                .max_connections(8)
                .after_connect(sqlite_pragmas),
            Backend::Postgres => AnyPoolOptions::new().max_connections(16),
        };
        let pool = pool_options
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await?;
        Ok(Self { pool, backend })
    }

    /// Applies the backend's migrations; safe to run on every start.
    pub async fn migrate(&self) -> StoreResult<()> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&self.pool).await?;
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Starts a write transaction. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`), so a read-then-write transaction never fails to upgrade.
    pub async fn begin(&self) -> StoreResult<Tx> {
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(tx)
    }

    /// Answers whether the database takes a trivial query (`/healthz`).
    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// The names of the migrations applied to this database, oldest first.
    pub async fn applied_migrations(&self) -> StoreResult<Vec<String>> {
        let rows = sqlx::query("SELECT description FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<String, _>(0)?))
            .collect()
    }
}

/// WAL for concurrent readers, a busy timeout so writers queue instead of failing, and
/// foreign keys (off by default in SQLite).
fn sqlite_pragmas(
    conn: &mut sqlx::AnyConnection,
    _: sqlx::pool::PoolConnectionMetadata,
) -> futures_util::future::BoxFuture<'_, Result<(), sqlx::Error>> {
    Box::pin(async move {
        sqlx::Executor::execute(
            &mut *conn,
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
             PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
        )
        .await?;
        Ok(())
    })
}

/// Reads a boolean column: Postgres answers a BOOLEAN, SQLite an INTEGER.
pub(crate) fn get_bool(row: &AnyRow, column: &str) -> StoreResult<bool> {
    match row.try_get::<bool, _>(column) {
        Ok(b) => Ok(b),
        Err(_) => Ok(row.try_get::<i64, _>(column)? != 0),
    }
}

/// Keeps passwords of a database URL out of error messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

/// Milliseconds since the Unix epoch, the time unit of every stored timestamp.
pub fn now_millis() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp_nanos() as i64 / 1_000_000
}

/// A new opaque, unguessable id: a prefix naming the resource and 26 random base32
/// characters (130 bits).
pub fn new_id(prefix: &str) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut rng = rand::thread_rng();
    let body: String = (0..26)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}_{body}")
}
