//! The HTTP edge: the `/api/v1` REST API, the console, and operations endpoints in one
//! axum router. Handlers are thin: parse, call one service, map the answer.

pub mod accounts;
pub mod applications;
pub mod auth;
pub mod changelog;
pub mod charges;
pub mod console;
pub mod customers;
pub mod disputes;
pub mod error;
pub mod files;
pub mod json;
pub mod kyc;
pub mod ops;
pub mod pix_keys;
pub mod plugins;
pub mod public;
pub mod qr_codes;
pub mod refunds;
pub mod removed;
pub mod sandbox;
pub mod serve;
pub mod statement;
pub mod subscriptions;
pub mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef, Request};
use axum::http::{HeaderName, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use leptos::prelude::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use utoipa::OpenApi;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;

use crate::config::Settings;
use crate::service::Services;
use error::{ApiError, LANG, Lang};

/// Everything a handler may need; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    pub settings: Arc<Settings>,
    pub policies: Arc<auth::Policies>,
    pub rate_limiter: auth::RateLimiter,
    pub openapi_json: Arc<String>,
    pub changelog: Arc<Vec<changelog::ChangelogEntry>>,
    pub metrics: PrometheusHandle,
    pub leptos: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Cofre API",
        description = "Pix banking-as-a-service: campaign accounts, applications, Pix keys, \
                       withdraw keys. Send the bare AppID in the Authorization header.",
        version = "v1"
    ),
    modifiers(&SecuritySchemes),
    tags(
        (name = "account", description = "Bank accounts, one per campaign"),
        (name = "application", description = "Applications (AppIDs) and scopes"),
        (name = "pix-keys", description = "Pix keys, directory lookups and the withdraw key"),
        (name = "customer", description = "Customers (payers)"),
        (name = "charge", description = "Charges with a BR Code, and their refunds"),
        (name = "qrcode", description = "Static QR codes"),
        (name = "refund", description = "Refunds of received Pix"),
        (name = "statement", description = "Statement and transactions"),
        (name = "plugins", description = "Company rules as WebAssembly plugins (MASTER)"),
        (name = "webhook", description = "Webhooks, deliveries and signing keys"),
        (name = "file", description = "Uploaded documents and their signed download links"),
        (name = "dispute", description = "Disputes on received Pix and their evidence"),
        (name = "kyc", description = "KYC onboarding (MASTER)"),
        (name = "subscription", description = "Subscriptions and their payment book (carnê) PDF"),
        (name = "sandbox", description = "Simulated payers and disputes (sandbox only)"),
        (name = "meta", description = "Change log and this document"),
    )
)]
struct ApiDoc;

struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let app_id = || {
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "The bare AppID, without a Bearer prefix",
            )))
        };
        components.add_security_scheme(auth::APP_ID_SCHEME, app_id());
        components.add_security_scheme(auth::MASTER_SCHEME, app_id());
    }
}

/// The `/api/v1` routes and the OpenAPI document generated from them. The sandbox's
/// routes exist only when it is enabled.
pub fn api(sandbox: bool) -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let mut router = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(accounts::routes())
        .merge(applications::routes())
        .merge(pix_keys::routes())
        .merge(customers::routes())
        .merge(charges::routes())
        .merge(qr_codes::routes())
        .merge(refunds::routes())
        .merge(statement::routes())
        .merge(webhooks::routes())
        .merge(plugins::routes())
        .merge(files::routes())
        .merge(disputes::routes())
        .merge(kyc::routes())
        .merge(subscriptions::routes())
        .merge(removed::routes())
        .merge(changelog::routes())
        .merge(ops::api_routes());
    if sandbox {
        router = router.merge(sandbox::routes());
    }
    let (router, mut doc) = router.split_for_parts();
    ops::document_shared_answers(&mut doc);
    (router, doc)
}

/// Builds the whole application: state and router.
pub fn app(services: Services, settings: Settings) -> anyhow::Result<(Router, AppState)> {
    let (api_router, openapi) = api(settings.sandbox_enabled());
    let openapi_value = serde_json::to_value(&openapi)?;
    let policies = auth::Policies::from_openapi(&openapi_value)?;
    let leptos = console::leptos_options(&settings);
    let state = AppState {
        rate_limiter: auth::RateLimiter::new(&settings.rate_limit, &services.store),
        settings: Arc::new(settings),
        policies: Arc::new(policies),
        openapi_json: Arc::new(serde_json::to_string_pretty(&openapi_value)?),
        changelog: Arc::new(changelog::entries()?),
        metrics: ops::metrics_handle(),
        services,
        leptos,
    };

    let max_body = state.settings.server.max_body_bytes;
    let api_router = api_router
        .route("/api/v1/{*rest}", axum::routing::any(route_not_found))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::authorize,
        ));
    let router = Router::new()
        .merge(api_router)
        .merge(ops::plain_routes())
        .merge(public::routes())
        .merge(console::routes(&state))
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state.clone())
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn(ops::record_metrics))
        .layer(middleware::from_fn(language))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID.clone()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    let request_id = req
                        .headers()
                        .get(&REQUEST_ID)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default();
                    tracing::info_span!(
                        "request",
                        method = %req.method(),
                        path = %req.uri().path(),
                        request_id,
                        application_id = tracing::field::Empty,
                    )
                })
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID.clone(), MakeRequestUuid))
        .layer(CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("handler panicked").into_response()
            },
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(60),
        ));
    Ok((router, state))
}

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Runs the request with the language of its `Accept-Language` for error messages.
async fn language(req: Request, next: Next) -> Response {
    let lang = Lang::from_accept_language(
        req.headers()
            .get(axum::http::header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok()),
    );
    LANG.scope(lang, next.run(req)).await
}

async fn route_not_found() -> ApiError {
    ApiError::not_found("ROUTE_NOT_FOUND")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED")
}

/// `?start=&end=` (RFC 3339) as a millisecond range `[start, end)`; all time by default.
pub fn date_range(start: Option<&str>, end: Option<&str>) -> Result<(i64, i64), ApiError> {
    let parse = |field: &str, value: Option<&str>, default: i64| -> Result<i64, ApiError> {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => Ok(default),
            Some(v) => {
                time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc3339)
                    .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
                    .map_err(|_| {
                        ApiError::validation(vec![crate::service::FieldError::new(
                            field,
                            crate::service::Problem::Invalid,
                        )])
                    })
            }
        }
    };
    Ok((parse("start", start, 0)?, parse("end", end, i64::MAX)?))
}

/// RFC 3339 UTC text of a stored millisecond timestamp.
pub fn rfc3339(millis: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
