//! Operations endpoints: `/healthz`, `/metrics` (Prometheus text), the OpenAPI document
//! and the offline docs UI at `/docs` (swagger-ui-dist vendored in `server/assets/docs`).

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;

/// The process-wide Prometheus recorder (a process has one, whatever the number of apps).
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (tests); ours still renders.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// Counts requests and their latency by method, route template and status.
pub async fn record_metrics(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!("cofre_http_requests_total", &labels).increment(1);
    metrics::histogram!("cofre_http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    response
}

/// Routes outside `/api/v1`, not part of the OpenAPI document.
pub fn plain_routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics_text))
        .route("/docs", get(docs))
        .route("/docs/", get(docs))
        .route("/docs/swagger-ui.css", get(docs_css))
        .route("/docs/swagger-ui-bundle.js", get(docs_js))
}

pub fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(openapi_json))
}

async fn healthz(State(state): State<AppState>) -> Response {
    match sqlx::query("SELECT 1")
        .execute(state.services.store.pool())
        .await
    {
        Ok(_) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "OK"})),
        )
            .into_response(),
        Err(err) => {
            tracing::error!(%err, "health check: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"status": "DATABASE_UNAVAILABLE"})),
            )
                .into_response()
        }
    }
}

async fn metrics_text(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}

/// The OpenAPI 3.1 document, generated from the handlers: it lists exactly the
/// routes that exist, with the scopes each one needs.
#[utoipa::path(
    get, path = "/api/v1/openapi.json", tag = "meta",
    security(()),
    responses((status = 200, description = "OpenAPI document", content_type = "application/json"))
)]
async fn openapi_json(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi_json.as_ref().clone(),
    )
}

async fn docs() -> Html<&'static str> {
    Html(
        r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cofre API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({url: "/api/v1/openapi.json", dom_id: "#swagger-ui"});</script>
</body></html>"##,
    )
}

const CACHE: &str = "public, max-age=86400";

async fn docs_css() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css"),
            (header::CACHE_CONTROL, CACHE),
        ],
        include_str!("../../assets/docs/swagger-ui.css"),
    )
}

async fn docs_js() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript"),
            (header::CACHE_CONTROL, CACHE),
        ],
        include_str!("../../assets/docs/swagger-ui-bundle.js"),
    )
}
