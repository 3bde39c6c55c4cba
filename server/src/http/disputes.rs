//! `/api/v1/dispute`: disputes on received Pix and the evidence the receiver sends.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::disputes::{Dispute, DocumentInput};
use crate::service::{Page, PageInfo};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(get_one))
        .routes(routes!(add_evidence))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceDto {
    id: String,
    url: Option<String>,
    #[serde(rename = "fileId")]
    file_id: Option<String>,
    description: Option<String>,
    created_at: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisputeDto {
    id: String,
    /// IN_REVIEW, ACCEPTED, REJECTED or CANCELED.
    status: String,
    /// Centavos blocked while IN_REVIEW.
    value: i64,
    reason: String,
    /// The disputed Pix.
    #[serde(rename = "transactionID")]
    transaction_id: String,
    end_to_end_id: String,
    company_bank_account: String,
    resolution_note: Option<String>,
    documents: Vec<EvidenceDto>,
    created_at: String,
    updated_at: String,
    closed_at: Option<String>,
}

impl From<Dispute> for DisputeDto {
    fn from(d: Dispute) -> Self {
        Self {
            id: d.row.id,
            status: d.row.status,
            value: d.row.value,
            reason: d.row.reason,
            transaction_id: d.pix.id,
            end_to_end_id: d.pix.end_to_end_id,
            company_bank_account: d.row.account_id,
            resolution_note: d.row.resolution_note,
            documents: d
                .evidence
                .into_iter()
                .map(|e| EvidenceDto {
                    id: e.id,
                    url: e.url,
                    file_id: e.file_id,
                    description: e.description,
                    created_at: rfc3339(e.created_at),
                })
                .collect(),
            created_at: rfc3339(d.row.created_at),
            updated_at: rfc3339(d.row.updated_at),
            closed_at: d.row.closed_at.map(rfc3339),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct DisputeResponse {
    pub dispute: DisputeDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisputesResponse {
    disputes: Vec<DisputeDto>,
    page_info: PageInfo,
}

#[derive(Deserialize, IntoParams)]
pub struct ListQuery {
    /// IN_REVIEW, ACCEPTED, REJECTED or CANCELED.
    status: Option<String>,
    skip: Option<i64>,
    limit: Option<i64>,
}

/// Disputes of the company (MASTER) or of the AppID's account, newest first.
#[utoipa::path(
    get, path = "/api/v1/dispute", tag = "dispute", params(ListQuery),
    security(("AppID" = ["DISPUTE_GET"])),
    responses((status = 200, body = DisputesResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<ApiJson<DisputesResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (disputes, page_info) = state
        .services
        .disputes
        .list(&caller, q.status.as_deref(), page)
        .await?;
    Ok(ApiJson(DisputesResponse {
        disputes: disputes.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// One dispute with its evidence.
#[utoipa::path(
    get, path = "/api/v1/dispute/{id}", tag = "dispute", params(("id" = String, Path)),
    security(("AppID" = ["DISPUTE_GET"])),
    responses((status = 200, body = DisputeResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<DisputeResponse>> {
    let dispute = state.services.disputes.get(&caller, &id).await?;
    Ok(ApiJson(DisputeResponse {
        dispute: dispute.into(),
    }))
}

#[derive(Deserialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct DocumentBody {
    /// A link to the evidence; never together with `fileId`.
    url: Option<String>,
    /// A file uploaded with purpose DISPUTE_EVIDENCE; needs the company feature
    /// DISPUTE_EVIDENCE_FILE_ID.
    file_id: Option<String>,
    description: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct EvidenceBody {
    /// 1 to 20 documents; a dispute keeps at most 50.
    documents: Option<Vec<DocumentBody>>,
}

/// Adds evidence to a dispute IN_REVIEW (seed rule 4): each document has `url` or
/// `fileId`, never both; a `fileId` without the company feature
/// DISPUTE_EVIDENCE_FILE_ID is 403 with `errorCode`; every fileId is resolved before
/// anything is saved, so one bad id saves nothing.
#[utoipa::path(
    post, path = "/api/v1/dispute/{id}/evidence", tag = "dispute", params(("id" = String, Path)),
    request_body = EvidenceBody,
    security(("AppID" = ["DISPUTE_EVIDENCE_POST"])),
    responses(
        (status = 200, body = DisputeResponse),
        (status = 400, description = "VALIDATION_ERROR, DISPUTE_EVIDENCE_URL_AND_FILE_ID, FILE_PURPOSE_MISMATCH"),
        (status = 401),
        (status = 403, description = "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED (also in errorCode)"),
        (status = 404, description = "DISPUTE_NOT_FOUND, FILE_NOT_FOUND"),
        (status = 409, description = "DISPUTE_CLOSED, DISPUTE_EVIDENCE_LIMIT"),
    )
)]
async fn add_evidence(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<EvidenceBody>,
) -> ApiResult<ApiJson<DisputeResponse>> {
    let documents = body.documents.map(|docs| {
        docs.into_iter()
            .map(|d| DocumentInput {
                url: d.url,
                file_id: d.file_id,
                description: d.description,
            })
            .collect()
    });
    let dispute = state
        .services
        .disputes
        .add_evidence(&caller, &id, documents)
        .await?;
    Ok(ApiJson(DisputeResponse {
        dispute: dispute.into(),
    }))
}
