//! Endpoints removed from the public contract. They answer 410 `ENDPOINT_REMOVED`
//! naming their change-log entry, so that old clients learn why instead of seeing 404.

use axum::http::StatusCode;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::error::ApiError;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(account_register_post, account_register_patch))
        .routes(routes!(account_register_patch_one))
}

/// The change-log entry of the account register endpoints' removal.
const ACCOUNT_REGISTER_REMOVED: &str =
    "2026-04 Removed: account register endpoints (POST/PATCH), previously deprecated";

fn account_register_removed() -> ApiError {
    ApiError::new(StatusCode::GONE, "ENDPOINT_REMOVED").with_arg(ACCOUNT_REGISTER_REMOVED)
}

/// Removed in 2026-04 (see the change log): answers 410 `ENDPOINT_REMOVED`.
#[utoipa::path(
    post, path = "/api/v1/account-register", tag = "meta", security(()),
    responses((status = 410, description = "ENDPOINT_REMOVED (change log 2026-04)"))
)]
async fn account_register_post() -> ApiError {
    account_register_removed()
}

/// Removed in 2026-04 (see the change log): answers 410 `ENDPOINT_REMOVED`.
#[utoipa::path(
    patch, path = "/api/v1/account-register", tag = "meta", security(()),
    responses((status = 410, description = "ENDPOINT_REMOVED (change log 2026-04)"))
)]
async fn account_register_patch() -> ApiError {
    account_register_removed()
}

/// Removed in 2026-04 (see the change log): answers 410 `ENDPOINT_REMOVED`.
#[utoipa::path(
    patch, path = "/api/v1/account-register/{id}", tag = "meta", params(("id" = String, Path)),
    security(()),
    responses((status = 410, description = "ENDPOINT_REMOVED (change log 2026-04)"))
)]
async fn account_register_patch_one() -> ApiError {
    account_register_removed()
}
