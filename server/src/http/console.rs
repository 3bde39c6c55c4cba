//! Hosts the Leptos console: server-rendered pages, hydration assets and server fns,
//! with sessions in the database. The [`ConsoleBackend`] given to server fns is a thin
//! adapter over the same services as the REST API.

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::IntoResponse;
use cofre_app::backend::{Backend, ConsoleBackend, ConsoleCompany, ConsoleError, ConsoleUser};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list, handle_server_fns_with_context};
use tower_http::services::ServeDir;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

use super::AppState;
use crate::config::Settings;
use crate::service::Services;
use crate::service::users::UserError;
use crate::store::sessions::SessionTable;

/// Build output of the console: `site_root/pkg/cofre.js`, `cofre_bg.wasm`, `cofre.css`.
pub fn leptos_options(settings: &Settings) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name("cofre")
        .site_root(settings.console.site_root.to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .build()
}

struct ServiceBackend(Services);

#[async_trait]
impl ConsoleBackend for ServiceBackend {
    async fn sign_in(&self, email: &str, password: &str) -> Result<String, ConsoleError> {
        match self.0.users.sign_in(email, password).await {
            Ok(user) => Ok(user.id),
            Err(UserError::InvalidCredentials | UserError::NotFound) => {
                Err(ConsoleError::InvalidCredentials)
            }
            Err(err) => {
                tracing::error!(%err, "console sign-in failed");
                Err(ConsoleError::Unavailable)
            }
        }
    }

    async fn user(&self, user_id: &str) -> Result<Option<ConsoleUser>, ConsoleError> {
        let unavailable = |err: &dyn std::fmt::Display| {
            tracing::error!(%err, "console user lookup failed");
            ConsoleError::Unavailable
        };
        let user = match self.0.users.get(user_id).await {
            Ok(user) => user,
            Err(UserError::NotFound) => return Ok(None),
            Err(err) => return Err(unavailable(&err)),
        };
        let company = match &user.company_id {
            Some(id) => {
                let company = self
                    .0
                    .companies
                    .get(id)
                    .await
                    .map_err(|e| unavailable(&e))?;
                let main = crate::store::accounts::main_of(self.0.store.pool(), id)
                    .await
                    .map_err(|e| unavailable(&e))?;
                Some(ConsoleCompany {
                    id: company.id,
                    name: company.name,
                    tax_id: company.tax_id.formatted(),
                    features: company.features,
                    main_account_id: main.id,
                })
            }
            None => None,
        };
        Ok(Some(ConsoleUser {
            id: user.id,
            email: user.email,
            role: user.role.as_str().to_owned(),
            permissions: user.permissions,
            company,
        }))
    }
}

fn provide_backend(backend: Backend) -> impl Fn() + Clone + Send + 'static {
    move || provide_context(backend.clone())
}

/// Console pages, server fns and assets, behind the session layer.
pub fn routes(state: &AppState) -> Router<AppState> {
    let backend: Backend = Arc::new(ServiceBackend(state.services.clone()));
    let context = provide_backend(backend);
    let server_fn_context = context.clone();
    let server_fns = move |State(_): State<AppState>, req: Request<Body>| {
        let context = server_fn_context.clone();
        async move {
            handle_server_fns_with_context(context, req)
                .await
                .into_response()
        }
    };
    let options = state.leptos.clone();
    let sessions = SessionManagerLayer::new(SessionTable::new(state.services.store.clone()))
        .with_name("cofre_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.settings.console.secure_cookies)
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(8)));
    let pkg = state.settings.console.site_root.join("pkg");
    Router::new()
        .route(
            &format!("{}/{{*fn_name}}", cofre_app::SERVER_FN_PREFIX),
            axum::routing::post(server_fns),
        )
        .leptos_routes_with_context(
            &state.clone(),
            generate_route_list(cofre_app::App),
            context,
            move || cofre_app::shell(options.clone()),
        )
        .nest_service("/pkg", ServeDir::new(pkg))
        .layer(sessions)
}
