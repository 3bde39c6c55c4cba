//! Hosts the Leptos console: server-rendered pages, hydration assets and server fns,
//! with sessions in the database. The [`backend::ServiceBackend`] given to server fns
//! is a thin adapter over the same services as the REST API.
//!
//! Forms are CSRF-safe twice over: the session cookie is `SameSite=Lax` (a browser
//! does not send it with another site's POST), and a server fn call whose `Origin` or
//! `Sec-Fetch-Site` says it came from another site is refused before it runs.

mod backend;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use axum::response::{Redirect, Response};
use cofre_app::backend::Backend;
use cofre_app::i18n::{COOKIE as LANG_COOKIE, Lang as ConsoleLang};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::services::ServeDir;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

use super::AppState;
use super::error::{ApiError, LANG, Lang};
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
    let sessions = SessionManagerLayer::new(SessionTable::new(state.services.store.clone()))
        .with_name("cofre_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.settings.console.secure_cookies)
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(8)));
    let pkg = state.settings.console.site_root.join("pkg");
    Router::new()
        .route("/console/lang", axum::routing::get(switch_language))
        // Also mounts every server fn under `SERVER_FN_PREFIX`.
        .leptos_routes_with_context(
            &state.clone(),
            generate_route_list(cofre_app::App),
            context,
            move || cofre_app::shell(options.clone()),
        )
        .nest_service("/pkg", ServeDir::new(pkg))
        .layer(axum::middleware::from_fn(guard_server_fns))
        .layer(sessions)
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
        tracing::warn!(?fetch_site, "cross-site console call refused");
        return ApiError::new(StatusCode::FORBIDDEN, "CSRF_REJECTED").into_response();
    }
    let lang = console_lang(headers);
    LANG.scope(lang, next.run(req)).await
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
