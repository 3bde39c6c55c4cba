//! `/api/v1/refund`: refunds of received Pix.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiResult;
use super::json::{ApiJson, ApiPath};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::store::ledger::TransactionRow;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(get_one))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundDto {
    /// Refunds complete at once (the sandbox's Pix network has no delay).
    status: &'static str,
    value: i64,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    refund_id: String,
    end_to_end_id: String,
    original_end_to_end_id: String,
    comment: Option<String>,
    time: String,
}

impl RefundDto {
    pub fn new(t: TransactionRow, original: &TransactionRow) -> Self {
        Self {
            status: "CONFIRMED",
            value: t.value,
            correlation_id: t.correlation_id,
            refund_id: t.id,
            end_to_end_id: t.end_to_end_id,
            original_end_to_end_id: original.end_to_end_id.clone(),
            comment: t.description,
            time: rfc3339(t.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct RefundResponse {
    pub refund: RefundDto,
}

#[derive(Serialize, ToSchema)]
pub struct RefundsResponse {
    pub refunds: Vec<RefundDto>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundBody {
    /// The endToEndId (or id) of the received Pix.
    transaction_end_to_end_id: Option<String>,
    /// Centavos; default everything not yet refunded.
    value: Option<i64>,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    comment: Option<String>,
}

/// Refunds a received Pix, fully or partly, never above what was received.
#[utoipa::path(
    post, path = "/api/v1/refund", tag = "refund", request_body = RefundBody,
    security(("AppID" = ["REFUND_POST"])),
    responses(
        (status = 201, body = RefundResponse), (status = 200, body = RefundResponse, description = "same correlationID"),
        (status = 400, description = "VALIDATION_ERROR, REFUND_ABOVE_RECEIVED, INSUFFICIENT_FUNDS, TRANSACTION_NOT_REFUNDABLE"),
        (status = 401), (status = 403), (status = 404), (status = 409),
    )
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<RefundBody>,
) -> ApiResult<(StatusCode, ApiJson<RefundResponse>)> {
    let original = body.transaction_end_to_end_id.unwrap_or_default();
    let (refund, created) = state
        .services
        .refunds
        .create(
            &caller,
            original.trim(),
            body.value,
            body.correlation_id.as_deref(),
            body.comment.as_deref(),
        )
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(RefundResponse {
            refund: RefundDto::new(refund.transaction, &refund.original),
        }),
    ))
}

/// A refund by id, endToEndId or correlationID.
#[utoipa::path(
    get, path = "/api/v1/refund/{id}", tag = "refund", params(("id" = String, Path)),
    security(("AppID" = ["REFUND_GET"])),
    responses((status = 200, body = RefundResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<RefundResponse>> {
    let refund = state.services.refunds.get(&caller, &id).await?;
    Ok(ApiJson(RefundResponse {
        refund: RefundDto::new(refund.transaction, &refund.original),
    }))
}
