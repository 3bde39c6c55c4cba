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

/// Adds to every operation of the document the answers that do not come from its
/// handler, in one place so that no route can forget one (CONTRACT.md, "Errors" and the
/// order of refusals), and gives every 4xx the `Error` body:
///
/// - with an AppID (any security but the empty one): 401, 403 (`IP_NOT_ALLOWED` and the
///   scope, MASTER and feature checks) and 429 with `Retry-After`;
/// - with a JSON body: 400 (`INVALID_JSON`, `VALIDATION_ERROR`), 413 and 415;
/// - with query or path parameters: 400 `VALIDATION_ERROR` (a path parameter that is
///   not UTF-8 once percent-decoded).
///
/// A handler's own description of one of these answers is kept.
pub fn document_shared_answers(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::{
        ContentBuilder, HeaderBuilder, ObjectBuilder, Ref, RefOr, ResponseBuilder, Type,
    };
    use utoipa::{PartialSchema, ToSchema};

    type Body<'a> = super::error::Body<'a>;
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .schemas
        .insert(Body::name().into_owned(), Body::schema());
    let error_content = || {
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(Body::name())))
            .build()
    };
    let answer = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content("application/json", error_content())
    };

    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in operations.into_iter().flatten() {
            let secured = op.security.as_ref().is_some_and(|requirements| {
                requirements.iter().any(|r| {
                    serde_json::to_value(r)
                        .is_ok_and(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                })
            });
            let json_body = op
                .request_body
                .as_ref()
                .is_some_and(|b| b.content.contains_key("application/json"));
            let parameters = op
                .parameters
                .iter()
                .flatten()
                .any(|p| matches!(p.parameter_in, ParameterIn::Query | ParameterIn::Path));
            let mut shared = Vec::new();
            if secured {
                shared.push((
                    "401",
                    answer("APP_ID_MISSING, APP_ID_INVALID, APPLICATION_INACTIVE"),
                ));
                shared.push((
                    "403",
                    answer("IP_NOT_ALLOWED, MASTER_APPLICATION_REQUIRED, SCOPE_MISSING, FEATURE_DISABLED"),
                ));
                shared.push((
                    "429",
                    answer("TOO_MANY_REQUESTS: the AppID's request rate").header(
                        "Retry-After",
                        HeaderBuilder::new()
                            .schema(ObjectBuilder::new().schema_type(Type::Integer))
                            .description(Some("Seconds to wait"))
                            .build(),
                    ),
                ));
            }
            if json_body || parameters {
                shared.push(("400", answer("INVALID_JSON, VALIDATION_ERROR")));
            }
            if json_body {
                shared.push(("413", answer("PAYLOAD_TOO_LARGE")));
                shared.push((
                    "415",
                    answer("UNSUPPORTED_MEDIA_TYPE: the body must be JSON"),
                ));
            }
            let responses = &mut op.responses.responses;
            for (status, response) in shared {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| RefOr::T(response.build()));
            }
            for (status, response) in responses.iter_mut() {
                if let (true, RefOr::T(response)) = (status.starts_with('4'), response)
                    && response.content.is_empty()
                {
                    response
                        .content
                        .insert("application/json".into(), error_content());
                }
            }
        }
    }
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
