//! `/api/v1/kyc`: KYC onboarding submitted by the MASTER application, addressed by its
//! correlationID.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiResult;
use super::json::{ApiJson, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::kyc::{Onboarding, OnboardingInput, Representative, RepresentativeInput};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(submit, get_onboarding))
        .routes(routes!(representatives))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocumentDto {
    id: String,
    name: String,
    content_type: String,
    size: i64,
    sha256: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepresentativeDto {
    name: String,
    #[serde(rename = "taxID")]
    tax_id: String,
    email: String,
    /// YYYY-MM-DD.
    birth_date: String,
    documents: Vec<DocumentDto>,
}

impl From<Representative> for RepresentativeDto {
    fn from(r: Representative) -> Self {
        Self {
            name: r.row.name,
            tax_id: r.row.tax_id,
            email: r.row.email,
            birth_date: r.row.birth_date,
            documents: r
                .documents
                .into_iter()
                .map(|f| DocumentDto {
                    id: f.id,
                    name: f.name,
                    content_type: f.content_type,
                    size: f.size,
                    sha256: f.sha256,
                })
                .collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OnboardingDto {
    id: String,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    #[serde(rename = "taxID")]
    tax_id: String,
    /// IN_REVIEW, APPROVED, REJECTED or DOCUMENTS_REQUESTED.
    status: String,
    /// Support's note: why it was rejected or which documents are missing.
    review_note: Option<String>,
    representatives: Vec<RepresentativeDto>,
    created_at: String,
    updated_at: String,
}

impl From<Onboarding> for OnboardingDto {
    fn from(o: Onboarding) -> Self {
        Self {
            id: o.row.id,
            correlation_id: o.row.correlation_id,
            tax_id: o.row.tax_id,
            status: o.row.status,
            review_note: o.row.review_note,
            representatives: o.representatives.into_iter().map(Into::into).collect(),
            created_at: rfc3339(o.row.created_at),
            updated_at: rfc3339(o.row.updated_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct OnboardingResponse {
    onboarding: OnboardingDto,
}

#[derive(Serialize, ToSchema)]
pub struct RepresentativesResponse {
    representatives: Vec<RepresentativeDto>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepresentativeBody {
    name: Option<String>,
    /// CPF.
    #[serde(rename = "taxID")]
    tax_id: Option<String>,
    email: Option<String>,
    /// YYYY-MM-DD.
    birth_date: Option<String>,
    /// 1 to 10 ids of files uploaded with purpose KYC_DOCUMENT.
    documents: Option<Vec<String>>,
}

#[derive(Deserialize, ToSchema)]
pub struct OnboardingBody {
    /// CNPJ or CPF of who is onboarded.
    #[serde(rename = "taxID")]
    tax_id: Option<String>,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    /// 1 to 10.
    representatives: Option<Vec<RepresentativeBody>>,
}

/// Submits a KYC onboarding for support's review. 201 when new; 200 with the existing
/// one when the correlationID is known: in review it changes nothing (whatever the
/// body); after support asked for documents it is resubmitted.
#[utoipa::path(
    post, path = "/api/v1/kyc/onboarding", tag = "kyc", request_body = OnboardingBody,
    security(("MasterAppID" = ["KYC_ONBOARDING_POST"])),
    responses(
        (status = 201, body = OnboardingResponse), (status = 200, body = OnboardingResponse, description = "existing"),
        (status = 400, description = "VALIDATION_ERROR, FILE_PURPOSE_MISMATCH (a file that is not KYC_DOCUMENT)"),
        (status = 401), (status = 403), (status = 404, description = "FILE_NOT_FOUND"),
    )
)]
async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<OnboardingBody>,
) -> ApiResult<(StatusCode, ApiJson<OnboardingResponse>)> {
    let input = OnboardingInput {
        tax_id: body.tax_id,
        correlation_id: body.correlation_id,
        representatives: body.representatives.map(|reps| {
            reps.into_iter()
                .map(|r| RepresentativeInput {
                    name: r.name,
                    tax_id: r.tax_id,
                    email: r.email,
                    birth_date: r.birth_date,
                    documents: r.documents,
                })
                .collect()
        }),
    };
    let (onboarding, created) = state.services.kyc.submit(&caller, input).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(OnboardingResponse {
            onboarding: onboarding.into(),
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
pub struct CorrelationQuery {
    /// The correlationID sent on submission.
    #[serde(rename = "correlationID")]
    #[param(rename = "correlationID")]
    correlation_id: Option<String>,
}

/// The onboarding submitted with this correlationID.
#[utoipa::path(
    get, path = "/api/v1/kyc/onboarding", tag = "kyc", params(CorrelationQuery),
    security(("MasterAppID" = ["KYC_ONBOARDING_GET"])),
    responses((status = 200, body = OnboardingResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn get_onboarding(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CorrelationQuery>,
) -> ApiResult<ApiJson<OnboardingResponse>> {
    let onboarding = state
        .services
        .kyc
        .by_correlation(&caller, q.correlation_id.as_deref().unwrap_or_default())
        .await?;
    Ok(ApiJson(OnboardingResponse {
        onboarding: onboarding.into(),
    }))
}

/// The representatives of the onboarding submitted with this correlationID.
#[utoipa::path(
    get, path = "/api/v1/kyc/representatives", tag = "kyc", params(CorrelationQuery),
    security(("MasterAppID" = ["KYC_ONBOARDING_GET"])),
    responses((status = 200, body = RepresentativesResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn representatives(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<CorrelationQuery>,
) -> ApiResult<ApiJson<RepresentativesResponse>> {
    let onboarding = state
        .services
        .kyc
        .by_correlation(&caller, q.correlation_id.as_deref().unwrap_or_default())
        .await?;
    Ok(ApiJson(RepresentativesResponse {
        representatives: onboarding
            .representatives
            .into_iter()
            .map(Into::into)
            .collect(),
    }))
}
