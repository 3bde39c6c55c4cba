//! Hosts the Leptos console: server-rendered pages, hydration assets and server fns,
//! with sessions in the database. The [`backend::ServiceBackend`] given to server fns
//! is a thin adapter over the same services as the REST API.
//!
//! Forms are CSRF-safe twice over: the session cookie is `SameSite=Lax` (a browser
//! does not send it with another site's POST), and a server fn call whose `Origin` or
//! `Sec-Fetch-Site` says it came from another site is refused before it runs.
//!
//! Every console response forbids framing and sniffing and keeps the referrer on this
//! origin; pages run only their own inline scripts (this response's nonce) and the
//! console's script and WebAssembly; pages, server fns and the payment book are never
//! cached, since they hold a company's data.

mod backend;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::{Redirect, Response};
use cofre_app::backend::Backend;
use cofre_app::i18n::{COOKIE as LANG_COOKIE, Lang as ConsoleLang};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, Session, SessionManagerLayer};

use super::AppState;
use super::error::{ApiError, LANG, Lang};
use super::json::ApiQuery;
use crate::config::Settings;
use crate::store::sessions::SessionTable;

/// Build output of the console: `site_root/pkg/cofre.js`, `cofre_bg.wasm`, `cofre.css`.
pub fn leptos_options(settings: &Settings) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("cofre")
        .site_root(settings.console.site_root.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .build()
}

fn provide_backend(backend: Backend) -> impl Fn() + Clone + Send + 'static {
    move || provide_context(backend.clone())
}

/// Console pages, server fns and assets, behind the session layer.
pub fn routes(state: &AppState) -> Router<AppState> {
    let backend: Backend = Arc::new(backend::ServiceBackend(state.services.clone()));
    let context = provide_backend(backend);
    let options = state.leptos.clone();
    // Behind an https public URL the cookie never travels over plain http, even when
    // `console.secure_cookies` was left off.
    let secure = state.settings.console.secure_cookies
        || state.settings.public_url().starts_with("https://");
    let sessions = SessionManagerLayer::new(SessionTable::new(state.services.store.clone()))
        .with_name("cofre_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure)
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(8)));
    let pkg = state.settings.console.site_root.join("pkg");
    let dynamic = Router::new()
        .route("/console/lang", axum::routing::get(switch_language))
        .route(
            "/console/subscriptions/{id}/payment-book",
            axum::routing::get(payment_book),
        )
        // Also mounts every server fn under `SERVER_FN_PREFIX`.
        .leptos_routes_with_context(
            &state.clone(),
            generate_route_list(cofre_app::App),
            context,
            move || {
                page_policy();
                cofre_app::shell(options.clone())
            },
        )
        .layer(axum::middleware::from_fn(guard_server_fns))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        // Pages set their own policy (with their nonce); nothing else runs scripts.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ),
        ));
    Router::new()
        .merge(dynamic)
        .nest_service("/pkg", ServeDir::new(pkg))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        .layer(sessions)
}

/// The Content-Security-Policy of a server-rendered page: its inline scripts
/// (hydration, streamed resources) carry this response's nonce; the console's script,
/// WebAssembly and stylesheet come from this origin; no plugins, no `<base>`, forms
/// only to this origin, and no framing.
fn page_policy() {
    let (Some(nonce), Some(response)) = (
        leptos::nonce::use_nonce(),
        use_context::<leptos_axum::ResponseOptions>(),
    ) else {
        return;
    };
    let policy = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response.insert_header(header::CONTENT_SECURITY_POLICY, value);
    }
}

fn console_lang(headers: &HeaderMap) -> Lang {
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match ConsoleLang::from_cookie_header(cookie) {
        ConsoleLang::En => Lang::En,
        ConsoleLang::PtBr => Lang::PtBr,
    }
}

/// Server fn calls: refused when a browser says they came from another site (403
/// `CSRF_REJECTED`; clients that are not browsers send neither header and pass, and
/// cannot carry a victim's cookie anyway), and answered in the console's language.
async fn guard_server_fns(req: Request<Body>, next: Next) -> Response {
    if !req.uri().path().starts_with(cofre_app::SERVER_FN_PREFIX) {
        return next.run(req).await;
    }
    let headers = req.headers();
    if from_another_site(headers) {
        return ApiError::new(StatusCode::FORBIDDEN, "CSRF_REJECTED").into_response();
    }
    let lang = console_lang(headers);
    LANG.scope(lang, next.run(req)).await
}

/// Whether a browser says the request came from another site: `Sec-Fetch-Site` other
/// than `same-origin` or `none` (typed or bookmarked), or an `Origin` that is not this
/// host. Clients that are not browsers send neither and pass.
fn from_another_site(headers: &HeaderMap) -> bool {
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    let cross_site = matches!(fetch_site, Some(site) if site != "same-origin" && site != "none");
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let foreign_origin = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|origin| {
            let authority = origin.split_once("://").map(|(_, a)| a).unwrap_or("null");
            Some(authority) != host
        });
    if cross_site || foreign_origin {
        tracing::warn!(?fetch_site, "cross-site console request refused");
    }
    cross_site || foreign_origin
}

#[derive(serde::Deserialize)]
struct BookQuery {
    month: Option<i64>,
    year: Option<i64>,
}

/// `GET /console/subscriptions/{id}/payment-book?month=&year=`: the payment book (PDF)
/// of one of the signed-in user's company's subscriptions, for the browser to open.
/// Server fns answer JSON, so this is a plain route; it reads the session as they do
/// and lets `service::console` decide. Refusals are the REST API's error body in the
/// console's language: 401 `NOT_SIGNED_IN` without a session, 403 from another site
/// (it issues charges, and a `SameSite=Lax` cookie goes along with a cross-site link).
async fn payment_book(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<ApiQuery<BookQuery>, ApiError>,
) -> Response {
    LANG.scope(console_lang(&headers), async move {
        if from_another_site(&headers) {
            return ApiError::new(StatusCode::FORBIDDEN, "CSRF_REJECTED").into_response();
        }
        match signed_in_book(&state, &session, &id, query).await {
            Ok((pdf, name)) => {
                let mut response = pdf.into_response();
                let headers = response.headers_mut();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/pdf"),
                );
                if let Ok(disposition) =
                    HeaderValue::from_str(&format!("inline; filename=\"{name}\""))
                {
                    headers.insert(header::CONTENT_DISPOSITION, disposition);
                }
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            Err(err) => err.into_response(),
        }
    })
    .await
}

/// The PDF and its file name, for the session's user.
async fn signed_in_book(
    state: &AppState,
    session: &Session,
    id: &str,
    query: Result<ApiQuery<BookQuery>, ApiError>,
) -> Result<(Vec<u8>, String), ApiError> {
    let user_id: Option<String> = session
        .get(cofre_app::api::USER_KEY)
        .await
        .map_err(|e| ApiError::internal(format!("session: {e}")))?;
    let user_id =
        user_id.ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "NOT_SIGNED_IN"))?;
    let console = state.services.console();
    let actor = console.actor(&user_id).await?;
    let ApiQuery(q) = query?;
    let pdf = console.payment_book(&actor, id, q.month, q.year).await?;
    let name = format!(
        "carne-{}-{:02}.pdf",
        q.year.unwrap_or_default(),
        q.month.unwrap_or_default()
    );
    Ok((pdf, name))
}

#[derive(serde::Deserialize)]
struct LangQuery {
    to: String,
}

/// `GET /console/lang?to=en|pt-BR`: remembers the choice in a cookie for a year and
/// goes back to the page the link was on (same site only).
async fn switch_language(Query(q): Query<LangQuery>, headers: HeaderMap) -> Response {
    let value = if q.to.eq_ignore_ascii_case("en") {
        "en"
    } else {
        "pt-BR"
    };
    let back = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| url::Url::parse(r).ok())
        .filter(|u| {
            Some(u.host_str().unwrap_or_default())
                == headers
                    .get(header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .map(|h| h.split(':').next().unwrap_or(h))
        })
        .map(|u| u.path().to_owned())
        .filter(|p| p.starts_with('/') && !p.starts_with("//"))
        .unwrap_or_else(|| "/".to_owned());
    let mut response = Redirect::to(&back).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "{LANG_COOKIE}={value}; Path=/; Max-Age=31536000; SameSite=Lax"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}
