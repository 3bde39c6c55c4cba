//! `/api/v1/application`: create applications, rotate secrets, list the scopes.

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ApiResult};
use super::json::ApiJson;
use super::{AppState, rfc3339};
use crate::service::applications::{Application, Caller, IssuedApplication, NewApplication};
use crate::service::scopes::{self, ScopeGroup};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(rotate_secret))
        .routes(routes!(list_scopes))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateApplicationBody {
    /// The account the application is bound to (an account of the caller's company).
    account_id: Option<String>,
    application: Option<ApplicationInput>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationInput {
    name: Option<String>,
    /// `API` or `MASTER`.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Scopes to grant; empty or absent means every scope of the type.
    #[serde(default)]
    scopes: Vec<String>,
    /// CIDRs or addresses allowed to use the AppID; empty means any.
    #[serde(default)]
    allowed_ips: Vec<String>,
}

/// An application; `clientSecret` and `appID` only in the answer that issued them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationDto {
    name: String,
    is_active: bool,
    #[serde(rename = "type")]
    kind: String,
    client_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(rename = "appID", skip_serializing_if = "Option::is_none")]
    app_id: Option<String>,
    company_bank_account: String,
    scopes: Vec<String>,
    allowed_ips: Vec<String>,
    created_at: String,
}

impl ApplicationDto {
    fn listed(a: Application) -> Self {
        Self {
            name: a.name,
            is_active: a.is_active,
            kind: a.kind.as_str().to_owned(),
            client_id: a.client_id,
            client_secret: None,
            app_id: None,
            company_bank_account: a.account_id,
            scopes: a.scopes,
            allowed_ips: a.allowed_ips,
            created_at: rfc3339(a.created_at),
        }
    }

    fn issued(issued: IssuedApplication) -> Self {
        Self {
            client_secret: Some(issued.client_secret),
            app_id: Some(issued.app_id),
            ..Self::listed(issued.application)
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct ApplicationResponse {
    application: ApplicationDto,
}

/// Creates an application bound to an account of the caller's company.
#[utoipa::path(
    post, path = "/api/v1/application", tag = "application",
    request_body = CreateApplicationBody,
    security(("MasterAppID" = ["APPLICATION_POST"])),
    responses(
        (status = 201, body = ApplicationResponse, description = "created; clientSecret and appID are shown only now"),
        (status = 400, description = "VALIDATION_ERROR with details"),
        (status = 401), (status = 403), (status = 404, description = "ACCOUNT_NOT_FOUND"),
    )
)]
async fn create(
    state: axum::extract::State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateApplicationBody>,
) -> ApiResult<(StatusCode, ApiJson<ApplicationResponse>)> {
    let company = state.services.companies.get(&caller.company_id).await?;
    let input = body.application.unwrap_or(ApplicationInput {
        name: None,
        kind: None,
        scopes: vec![],
        allowed_ips: vec![],
    });
    let new = NewApplication {
        name: input.name,
        kind: input.kind,
        account_id: body.account_id,
        scopes: input.scopes,
        allowed_ips: input.allowed_ips,
    };
    let issued = state.services.applications.create(&company, new).await?;
    Ok((
        StatusCode::CREATED,
        ApiJson(ApplicationResponse {
            application: ApplicationDto::issued(issued),
        }),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotateSecretBody {
    /// The `clientId` of the application whose secret is replaced.
    client_id: Option<String>,
}

/// Issues a new client secret; the old AppID stops working at once.
#[utoipa::path(
    post, path = "/api/v1/application/rotate-secret", tag = "application",
    request_body = RotateSecretBody,
    security(("MasterAppID" = ["APPLICATION_ROTATE_POST"])),
    responses(
        (status = 200, body = ApplicationResponse, description = "the new clientSecret and appID, shown only now"),
        (status = 400), (status = 401), (status = 403), (status = 404, description = "APPLICATION_NOT_FOUND"),
    )
)]
async fn rotate_secret(
    state: axum::extract::State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<RotateSecretBody>,
) -> ApiResult<ApiJson<ApplicationResponse>> {
    let client_id = body
        .client_id
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| {
            ApiError::validation(vec![crate::service::FieldError::new(
                "clientId",
                crate::service::Problem::Required,
            )])
        })?;
    let issued = state
        .services
        .applications
        .rotate_secret(&caller.company_id, &client_id)
        .await?;
    Ok(ApiJson(ApplicationResponse {
        application: ApplicationDto::issued(issued),
    }))
}

#[derive(Serialize, ToSchema)]
pub struct ScopesResponse {
    scopes: &'static [ScopeGroup],
}

/// The scope groups an application may request. Needs an AppID but no scope.
#[utoipa::path(
    get, path = "/api/v1/application/scopes", tag = "application",
    security(("AppID" = [])),
    responses((status = 200, body = ScopesResponse), (status = 401))
)]
async fn list_scopes() -> ApiJson<ScopesResponse> {
    ApiJson(ScopesResponse {
        scopes: scopes::GROUPS,
    })
}
