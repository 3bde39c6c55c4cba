//! The connection loop. `axum::serve` sets no timer on hyper, so a client that sends
//! its headers one byte a minute (slow-loris) or idles between requests would hold a
//! connection and a task forever. Here every connection gets hyper's header read
//! timeout, and the number of open connections is capped so the process keeps file
//! descriptors for the clients that behave.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// Limits of every connection.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// From the first byte of a request (or the end of the previous one) to the end of
    /// its headers; a connection that takes longer is closed.
    pub header_read_timeout: Duration,
    /// Open connections at once; further clients wait in the listen backlog.
    pub max_connections: usize,
}

/// Serves `router` on `listener` until the task is dropped; handlers see the peer as
/// `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_read_timeout));
    let builder = Arc::new(builder);
    loop {
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors or a connection reset before accept: not fatal.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = router.clone().map_request(
            move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req.map(axum::body::Body::new)
            },
        );
        let builder = builder.clone();
        tokio::spawn(async move {
            let io = TokioIo::new(stream);
            let served = builder
                .serve_connection_with_upgrades(io, TowerToHyperService::new(service))
                .await;
            if let Err(err) = served {
                tracing::debug!(%err, %peer, "connection closed with an error");
            }
            drop(permit);
        });
    }
}
