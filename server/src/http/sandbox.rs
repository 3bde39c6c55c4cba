//! `/api/v1/sandbox/*`: the payer and the central bank, simulated. Mounted only when
//! `sandbox.enabled` (on in the embedded default, off in production configs).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::charges::ChargeResponse;
use super::disputes::{DisputeDto, DisputeResponse};
use super::error::ApiResult;
use super::json::{ApiJson, ApiPath, OptionalJson};
use super::statement::TransactionDto;
use crate::service::applications::Caller;
use crate::service::disputes::Resolution;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(pay_charge))
        .routes(routes!(pix_in))
        .routes(routes!(dispute))
        .routes(routes!(cancel_dispute))
}

/// Who pays, as the receiver's statement will show it.
#[derive(Deserialize, Serialize, ToSchema, Default)]
#[serde(rename_all = "camelCase")]
pub struct Payer {
    name: Option<String>,
    #[serde(rename = "taxID")]
    tax_id: Option<String>,
}

#[derive(Deserialize, ToSchema, Default)]
pub struct PayBody {
    payer: Option<Payer>,
}

fn payer_json(payer: Option<Payer>) -> serde_json::Value {
    let payer = payer.unwrap_or_default();
    serde_json::json!({
        "name": payer.name.unwrap_or_else(|| "Pagador Sandbox".into()),
        "taxID": payer.tax_id,
    })
}

#[derive(Serialize, ToSchema)]
pub struct PaymentResponse {
    #[serde(flatten)]
    charge: ChargeResponse,
    transaction: TransactionDto,
}

/// Pays an ACTIVE charge (any of its ids): the account is credited and the charge
/// COMPLETED in one transaction.
#[utoipa::path(
    post, path = "/api/v1/sandbox/charge/{id}/pay", tag = "sandbox", params(("id" = String, Path)),
    request_body(content = Option<PayBody>),
    security(("AppID" = ["SANDBOX_POST"])),
    responses((status = 200, body = PaymentResponse), (status = 401), (status = 403), (status = 404),
              (status = 409, description = "CHARGE_NOT_ACTIVE"))
)]
async fn pay_charge(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    OptionalJson(body): OptionalJson<PayBody>,
) -> ApiResult<ApiJson<PaymentResponse>> {
    let payer = payer_json(body.and_then(|b| b.payer));
    let (charge, transaction) = state.services.charges.pay(&caller, &id, payer).await?;
    Ok(ApiJson(PaymentResponse {
        charge: ChargeResponse::new(charge, &state.settings.public_url()),
        transaction: transaction.into(),
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PixBody {
    pix_key: Option<String>,
    /// Centavos.
    value: Option<i64>,
    payer: Option<Payer>,
}

#[derive(Serialize, ToSchema)]
pub struct PixResponse {
    transaction: TransactionDto,
}

/// A payer at another bank sends a Pix to a Cofre key (404 for an unknown or deleted key).
#[utoipa::path(
    post, path = "/api/v1/sandbox/pix", tag = "sandbox", request_body = PixBody,
    security(("AppID" = ["SANDBOX_POST"])),
    responses((status = 200, body = PixResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn pix_in(
    State(state): State<AppState>,
    _caller: Caller,
    ApiJson(body): ApiJson<PixBody>,
) -> ApiResult<ApiJson<PixResponse>> {
    let t = state
        .services
        .sandbox
        .pix_in(body.pix_key.as_deref(), body.value, payer_json(body.payer))
        .await?;
    Ok(ApiJson(PixResponse {
        transaction: t.into(),
    }))
}

#[derive(Deserialize, ToSchema)]
pub struct DisputeBody {
    /// The received Pix: its transaction id or endToEndId.
    #[serde(rename = "transactionID")]
    transaction_id: Option<String>,
    /// Why the payer disputes it (default "MED: fraude").
    reason: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct DisputeOpened {
    dispute: DisputeDto,
    /// The block: the value moved from available to blocked.
    transaction: TransactionDto,
}

/// The central bank opens a dispute on a received Pix: its value moves from available
/// to blocked, and `DISPUTE_CREATE` is emitted.
#[utoipa::path(
    post, path = "/api/v1/sandbox/dispute", tag = "sandbox", request_body = DisputeBody,
    security(("AppID" = ["SANDBOX_POST"])),
    responses((status = 200, body = DisputeOpened), (status = 400), (status = 401), (status = 403), (status = 404),
              (status = 409, description = "DISPUTE_ALREADY_EXISTS"))
)]
async fn dispute(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<DisputeBody>,
) -> ApiResult<ApiJson<DisputeOpened>> {
    let (dispute, block) = state
        .services
        .disputes
        .open(
            &caller,
            body.transaction_id.as_deref().unwrap_or_default(),
            body.reason.as_deref(),
            "SANDBOX",
        )
        .await?;
    Ok(ApiJson(DisputeOpened {
        dispute: dispute.into(),
        transaction: block.into(),
    }))
}

/// The payer withdraws a dispute IN_REVIEW: the blocked value is released and
/// `DISPUTE_CANCELED` is emitted.
#[utoipa::path(
    post, path = "/api/v1/sandbox/dispute/{id}/cancel", tag = "sandbox", params(("id" = String, Path)),
    security(("AppID" = ["SANDBOX_POST"])),
    responses((status = 200, body = DisputeResponse), (status = 401), (status = 403), (status = 404),
              (status = 409, description = "DISPUTE_CLOSED"))
)]
async fn cancel_dispute(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<DisputeResponse>> {
    let dispute = state
        .services
        .disputes
        .resolve(&caller, &id, Resolution::Cancel, None)
        .await?;
    Ok(ApiJson(DisputeResponse {
        dispute: dispute.into(),
    }))
}
