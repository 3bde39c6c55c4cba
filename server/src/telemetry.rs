//! Logging with `tracing`: human-readable text or JSON lines, by configuration. Every
//! line inside a request carries its `request_id` (see `http::app`).

use tracing_subscriber::EnvFilter;

use crate::config::Log;

/// Installs the global subscriber; a second call (tests) keeps the first.
pub fn init(log: &Log) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&log.level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if log.format == "json" {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init()
    } else {
        builder.try_init()
    };
}
