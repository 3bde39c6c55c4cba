//! Cofre: a Pix banking-as-a-service platform. `http -> service -> store`; the binary
//! in `main.rs` wires them up from the command line.

pub mod bench;
pub mod cli;
pub mod config;
pub mod http;
pub mod service;
pub mod store;
pub mod telemetry;

use std::net::SocketAddr;

use tokio::net::TcpListener;

pub use config::Settings;

/// A running server: its address and the task serving it.
pub struct Running {
    pub addr: SocketAddr,
    pub state: http::AppState,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Connects to the database, migrates it, binds `settings.server.bind` (port 0 picks a
/// free port) and serves until the task is dropped or the process ends.
pub async fn start(settings: Settings) -> anyhow::Result<Running> {
    let store = store::Store::connect(&settings.database.url).await?;
    store.migrate().await?;
    let listener = TcpListener::bind(&settings.server.bind).await?;
    let addr = listener.local_addr()?;
    let mut settings = settings;
    if settings.server.public_url.is_none() {
        // Links handed out must reach this server even when it picked its own port.
        settings.server.public_url = Some(format!("http://{addr}"));
    }
    let options = service::Options {
        allow_private_networks: settings.webhooks.allow_private_networks,
        webhook_timeout: std::time::Duration::from_millis(settings.webhooks.timeout_ms),
        plugin_limits: cofre_plugin_host::Limits {
            memory_bytes: settings.plugins.memory_mb * 1024 * 1024,
            deadline: std::time::Duration::from_millis(settings.plugins.deadline_ms),
            ..Default::default()
        },
        files: settings.files.options()?,
    };
    let services = service::Services::with_options(
        store.clone(),
        std::sync::Arc::new(service::clock::SystemClock),
        options,
    );
    if settings.webhooks.workers > 0 {
        tokio::spawn(services.webhooks.clone().run(
            settings.webhooks.workers,
            std::time::Duration::from_millis(settings.webhooks.poll_ms),
        ));
    }
    let (router, state) = http::app(services, settings)?;
    let sessions = store::sessions::SessionTable::new(store);
    tokio::spawn(async move {
        let period = std::time::Duration::from_secs(600);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            tick.tick().await;
            if let Err(err) = sessions.delete_expired().await {
                tracing::warn!(%err, "could not delete expired console sessions");
            }
        }
    });
    let subscriptions = state.services.subscriptions.clone();
    tokio::spawn(async move {
        // Instalments are issued on their generation day (Brasília); a minute is plenty.
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            tick.tick().await;
            if let Err(err) = subscriptions.generate_due().await {
                tracing::warn!(%err, "could not issue due subscription instalments");
            }
        }
    });
    let charges = state.services.charges.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            tick.tick().await;
            if let Err(err) = charges.expire_due().await {
                tracing::warn!(%err, "could not expire charges");
            }
        }
    });
    let limits = http::serve::ConnectionLimits {
        header_read_timeout: std::time::Duration::from_millis(
            state.settings.server.header_read_timeout_ms.max(1),
        ),
        max_connections: state.settings.server.max_connections,
    };
    let task = tokio::spawn(http::serve::serve(listener, router, limits));
    Ok(Running { addr, state, task })
}
