//! One `Settings` struct: defaults < `cofre.toml` < `COFRE__SECTION__KEY` environment
//! variables < command-line flags (`--database-url`, `--bind`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub database: Database,
    pub server: Server,
    pub sandbox: Sandbox,
    pub webhooks: Webhooks,
    pub rate_limit: RateLimit,
    pub log: Log,
    pub console: Console,
    pub plugins: Plugins,
    pub files: Files,
}

/// Sandbox limits of every plugin call.
/// Where uploaded files live and how their download links behave.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Files {
    /// `local` (a folder, the default) or `s3` (any S3-compatible bucket; credentials
    /// from the usual `AWS_*` environment variables).
    pub store: String,
    /// The folder of the `local` store.
    pub local_dir: PathBuf,
    /// Largest accepted file; larger uploads answer 413.
    pub max_bytes: u64,
    /// Lifetime of a download link.
    pub url_ttl_secs: u64,
    /// HMAC key of download links; unset: generated once and kept in the database.
    pub url_secret: Option<String>,
    pub s3_bucket: Option<String>,
    /// For S3-compatible services other than AWS (MinIO, R2, ...).
    pub s3_endpoint: Option<String>,
    pub s3_region: Option<String>,
    pub s3_allow_http: bool,
    /// Credentials; unset: the `AWS_*` environment variables (or the instance's role).
    pub s3_access_key_id: Option<String>,
    pub s3_secret_access_key: Option<String>,
}

impl Default for Files {
    fn default() -> Self {
        Self {
            store: "local".into(),
            local_dir: PathBuf::from("files"),
            max_bytes: 10 * 1024 * 1024,
            url_ttl_secs: 15 * 60,
            url_secret: None,
            s3_bucket: None,
            s3_endpoint: None,
            s3_region: None,
            s3_allow_http: false,
            s3_access_key_id: None,
            s3_secret_access_key: None,
        }
    }
}

impl Files {
    /// The object store these settings name.
    pub fn options(&self) -> anyhow::Result<crate::service::files::FileOptions> {
        use crate::service::files::FileOptions;
        let mut options = match self.store.as_str() {
            "local" => FileOptions::local(&self.local_dir)?,
            "s3" => {
                let bucket = self
                    .s3_bucket
                    .as_deref()
                    .ok_or_else(|| anyhow::anyhow!("files.store = \"s3\" needs files.s3_bucket"))?;
                let mut builder = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_allow_http(self.s3_allow_http);
                if let Some(endpoint) = &self.s3_endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                if let Some(region) = &self.s3_region {
                    builder = builder.with_region(region);
                }
                if let (Some(id), Some(secret)) =
                    (&self.s3_access_key_id, &self.s3_secret_access_key)
                {
                    builder = builder
                        .with_access_key_id(id)
                        .with_secret_access_key(secret);
                }
                FileOptions {
                    objects: std::sync::Arc::new(builder.build()?),
                    // S3's smallest multipart part (all but the last).
                    part_size: 5 * 1024 * 1024,
                    ..FileOptions::in_memory()
                }
            }
            other => anyhow::bail!("files.store must be \"local\" or \"s3\", not {other:?}"),
        };
        options.max_bytes = self.max_bytes.max(1);
        options.url_ttl = std::time::Duration::from_secs(self.url_ttl_secs.max(1));
        options.url_secret = self.url_secret.clone().filter(|s| !s.is_empty());
        Ok(options)
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Plugins {
    pub memory_mb: usize,
    pub deadline_ms: u64,
}

impl Default for Plugins {
    fn default() -> Self {
        Self {
            memory_mb: 16,
            deadline_ms: 10,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Database {
    /// `sqlite://FILE` (created if missing) or `postgres://...`.
    pub url: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Server {
    pub bind: String,
    /// Origin written into links Cofre hands out; default `http://<bind>`.
    pub public_url: Option<String>,
    /// Largest request body accepted, in bytes (file uploads have their own limit).
    pub max_body_bytes: usize,
    /// Take the client address from `X-Forwarded-For` (only behind a trusted proxy).
    pub trust_forwarded_for: bool,
    /// A connection must send a request's headers within this time (and may idle this
    /// long between requests); slower ones are closed.
    pub header_read_timeout_ms: u64,
    /// Connections open at once; more wait in the listen backlog.
    pub max_connections: usize,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sandbox {
    /// Unset: on for the embedded SQLite setup, off for Postgres (production).
    pub enabled: Option<bool>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Webhooks {
    pub allow_private_networks: bool,
    /// How long one delivery may take before it counts as failed.
    pub timeout_ms: u64,
    /// Deliveries in flight at once per process.
    pub workers: usize,
    /// How often idle workers look for due deliveries.
    pub poll_ms: u64,
}

/// Token bucket per AppID.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
    /// Where the buckets live. `auto`: in the database on Postgres (so every process
    /// on it shares them), in this process's memory on SQLite (one process owns the
    /// file). `memory` or `database` choose one.
    pub store: RateLimitStore,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateLimitStore {
    #[default]
    Auto,
    Memory,
    Database,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Log {
    /// `text` or `json`.
    pub format: String,
    /// A `tracing` filter, e.g. `info,cofre_server=debug`; `RUST_LOG` wins when set.
    pub level: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Console {
    /// Folder with the built console assets (`pkg/`, CSS), made by `scripts/build-site`.
    pub site_root: PathBuf,
    /// Mark the session cookie `Secure` (on behind HTTPS; off for plain local HTTP).
    pub secure_cookies: bool,
}

impl Default for Webhooks {
    fn default() -> Self {
        Self {
            allow_private_networks: true,
            timeout_ms: 5_000,
            workers: 32,
            poll_ms: 200,
        }
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_second: 50,
            burst: 100,
            store: RateLimitStore::Auto,
        }
    }
}

impl Default for Log {
    fn default() -> Self {
        Self {
            format: "text".into(),
            level: "info".into(),
        }
    }
}

impl Default for Database {
    fn default() -> Self {
        Self {
            url: "sqlite://cofre.db".into(),
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:3000".into(),
            public_url: None,
            max_body_bytes: 1024 * 1024,
            trust_forwarded_for: false,
            header_read_timeout_ms: 10_000,
            max_connections: 10_000,
        }
    }
}

impl Default for Console {
    fn default() -> Self {
        Self {
            site_root: PathBuf::from("target/site"),
            secure_cookies: false,
        }
    }
}

impl Settings {
    /// Loads defaults, then `file` (or `cofre.toml` in the working directory if present),
    /// then `COFRE__*` variables (`COFRE__DATABASE__URL`, `COFRE__SERVER__BIND`, ...).
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let defaults = config::Config::try_from(&Settings::default())?;
        let mut builder = config::Config::builder().add_source(defaults);
        match file {
            Some(path) => builder = builder.add_source(config::File::from(path).required(true)),
            None => {
                builder = builder.add_source(config::File::with_name("cofre.toml").required(false))
            }
        }
        builder = builder.add_source(
            config::Environment::with_prefix("COFRE")
                .prefix_separator("__")
                .separator("__")
                .try_parsing(true),
        );
        Ok(builder.build()?.try_deserialize()?)
    }

    /// Whether the sandbox routes exist (see [`Sandbox::enabled`]).
    pub fn sandbox_enabled(&self) -> bool {
        self.sandbox
            .enabled
            .unwrap_or_else(|| self.database.url.starts_with("sqlite:"))
    }

    /// The origin of links handed out to clients.
    pub fn public_url(&self) -> String {
        self.server
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.server.bind))
            .trim_end_matches('/')
            .to_owned()
    }
}
