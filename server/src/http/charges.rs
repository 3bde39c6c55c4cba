//! `/api/v1/charge`: charges with a BR Code, their refunds, and the public links
//! (`qrCodeImage`, `paymentLinkUrl`).

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::customers::{CustomerBody, CustomerDto};
use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::refunds::{RefundDto, RefundResponse, RefundsResponse};
use super::{AppState, date_range, rfc3339};
use crate::service::PageInfo;
use crate::service::applications::Caller;
use crate::service::charges::{AdditionalInfo, Charge, NewCharge, Status};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one, delete))
        .routes(routes!(refund, refunds))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeBody {
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    /// Centavos.
    value: Option<i64>,
    comment: Option<String>,
    /// Seconds until the charge expires (at least 300; default 86400).
    expires_in: Option<i64>,
    customer: Option<CustomerBody>,
    #[serde(default)]
    additional_info: Vec<AdditionalInfo>,
}

#[derive(Deserialize, IntoParams)]
pub struct CreateQuery {
    /// Accepted for compatibility: a repeated correlationID always answers the existing charge.
    #[allow(dead_code)]
    return_existing: Option<bool>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeDto {
    status: &'static str,
    value: i64,
    comment: Option<String>,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    #[serde(rename = "transactionID")]
    transaction_id: String,
    #[serde(rename = "globalID")]
    global_id: String,
    br_code: String,
    /// PNG of the BR Code, served by Cofre without authentication.
    qr_code_image: String,
    /// A public page with the value, the QR code and the copy-paste code.
    payment_link_url: String,
    pix_key: String,
    /// Seconds from creation to expiry.
    expires_in: i64,
    expires_date: String,
    created_at: String,
    updated_at: String,
    paid_at: Option<String>,
    customer: Option<CustomerDto>,
    additional_info: Vec<AdditionalInfo>,
}

impl ChargeDto {
    pub fn new(c: Charge, public_url: &str) -> Self {
        let status = c.status().as_str();
        let global_id = c.global_id();
        let row = c.row;
        Self {
            status,
            value: row.value,
            comment: row.comment,
            correlation_id: row.correlation_id,
            qr_code_image: format!("{public_url}/qr/{}.png", row.transaction_id),
            payment_link_url: format!("{public_url}/pay/{}", row.transaction_id),
            transaction_id: row.transaction_id,
            global_id,
            br_code: row.br_code,
            pix_key: row.pix_key,
            expires_in: (row.expires_at - row.created_at) / 1000,
            expires_date: rfc3339(row.expires_at),
            created_at: rfc3339(row.created_at),
            updated_at: rfc3339(row.updated_at),
            paid_at: row.paid_at.map(rfc3339),
            customer: c.customer.map(Into::into),
            additional_info: c.additional_info,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeResponse {
    charge: ChargeDto,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    br_code: String,
}

impl ChargeResponse {
    pub fn new(c: Charge, public_url: &str) -> Self {
        let charge = ChargeDto::new(c, public_url);
        Self {
            correlation_id: charge.correlation_id.clone(),
            br_code: charge.br_code.clone(),
            charge,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargesResponse {
    charges: Vec<ChargeDto>,
    page_info: PageInfo,
}

/// Creates a charge for the account of the AppID used, with a single-use BR Code for
/// the account's default Pix key. A repeated correlationID with the same body answers
/// the existing charge with 200.
#[utoipa::path(
    post, path = "/api/v1/charge", tag = "charge", request_body = ChargeBody, params(CreateQuery),
    security(("AppID" = ["CHARGE_POST"])),
    responses(
        (status = 201, body = ChargeResponse), (status = 200, body = ChargeResponse, description = "existing charge"),
        (status = 400, description = "VALIDATION_ERROR, ACCOUNT_WITHOUT_PIX_KEY"), (status = 401), (status = 403),
        (status = 409, description = "CORRELATION_ID_CONFLICT"),
    )
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(_query): ApiQuery<CreateQuery>,
    ApiJson(body): ApiJson<ChargeBody>,
) -> ApiResult<(StatusCode, ApiJson<ChargeResponse>)> {
    let new = NewCharge {
        correlation_id: body.correlation_id,
        value: body.value,
        comment: body.comment,
        expires_in: body.expires_in,
        expires_at: None,
        customer: body.customer.map(Into::into),
        additional_info: body.additional_info,
    };
    let (charge, created) = state.services.charges.create(&caller, new).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(ChargeResponse::new(charge, &state.settings.public_url())),
    ))
}

#[derive(Deserialize, IntoParams)]
pub struct ListQuery {
    /// ACTIVE, COMPLETED or EXPIRED.
    status: Option<String>,
    /// RFC 3339; inclusive.
    start: Option<String>,
    /// RFC 3339; exclusive.
    end: Option<String>,
    skip: Option<i64>,
    limit: Option<i64>,
}

/// Charges of the account of the AppID used, newest first.
#[utoipa::path(
    get, path = "/api/v1/charge", tag = "charge", params(ListQuery),
    security(("AppID" = ["CHARGE_GET"])),
    responses((status = 200, body = ChargesResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<ApiJson<ChargesResponse>> {
    let status = match q.status.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(Status::parse(s).ok_or_else(|| {
            ApiError::validation(vec![crate::service::FieldError::new(
                "status",
                crate::service::Problem::UnknownValue,
            )])
        })?),
        None => None,
    };
    let (start, end) = date_range(q.start.as_deref(), q.end.as_deref())?;
    let page = crate::service::Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (charges, page_info) = state
        .services
        .charges
        .list(&caller, status, start, end, page)
        .await?;
    let public = state.settings.public_url();
    Ok(ApiJson(ChargesResponse {
        charges: charges
            .into_iter()
            .map(|c| ChargeDto::new(c, &public))
            .collect(),
        page_info,
    }))
}

/// A charge by id, correlationID, transactionID or globalID.
#[utoipa::path(
    get, path = "/api/v1/charge/{id}", tag = "charge", params(("id" = String, Path)),
    security(("AppID" = ["CHARGE_GET"])),
    responses((status = 200, body = ChargeResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<ChargeResponse>> {
    let charge = state.services.charges.get(&caller, &id).await?;
    Ok(ApiJson(ChargeResponse::new(
        charge,
        &state.settings.public_url(),
    )))
}

#[derive(Serialize, ToSchema)]
pub struct StatusResponse {
    /// `OK`.
    status: &'static str,
}

impl StatusResponse {
    pub fn ok() -> Self {
        Self { status: "OK" }
    }
}

/// Deletes a charge that received no money (409 `CHARGE_PAID` otherwise).
#[utoipa::path(
    delete, path = "/api/v1/charge/{id}", tag = "charge", params(("id" = String, Path)),
    security(("AppID" = ["CHARGE_DELETE"])),
    responses((status = 200, body = StatusResponse), (status = 401), (status = 403), (status = 404), (status = 409))
)]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<StatusResponse>> {
    state.services.charges.delete(&caller, &id).await?;
    Ok(ApiJson(StatusResponse::ok()))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChargeRefundBody {
    /// Centavos; default everything not yet refunded.
    value: Option<i64>,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    comment: Option<String>,
}

/// Refunds a paid charge, fully or partly, never above what was received.
#[utoipa::path(
    post, path = "/api/v1/charge/{id}/refund", tag = "charge", params(("id" = String, Path)),
    request_body = ChargeRefundBody,
    security(("AppID" = ["REFUND_POST"])),
    responses((status = 201, body = RefundResponse), (status = 200, body = RefundResponse), (status = 400),
              (status = 401), (status = 403), (status = 404), (status = 409))
)]
async fn refund(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ChargeRefundBody>,
) -> ApiResult<(StatusCode, ApiJson<RefundResponse>)> {
    let charge = state.services.charges.get(&caller, &id).await?;
    let payment = charge
        .row
        .payment_id
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "CHARGE_NOT_PAID"))?;
    let (refund, created) = state
        .services
        .refunds
        .create(
            &caller,
            &payment,
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

/// The refunds of a charge.
#[utoipa::path(
    get, path = "/api/v1/charge/{id}/refund", tag = "charge", params(("id" = String, Path)),
    security(("AppID" = ["REFUND_GET"])),
    responses((status = 200, body = RefundsResponse), (status = 401), (status = 403), (status = 404))
)]
async fn refunds(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<RefundsResponse>> {
    let charge = state.services.charges.get(&caller, &id).await?;
    let Some(payment) = charge.row.payment_id else {
        return Ok(ApiJson(RefundsResponse { refunds: vec![] }));
    };
    let (original, refunds) = state.services.refunds.of(&payment).await?;
    Ok(ApiJson(RefundsResponse {
        refunds: refunds
            .into_iter()
            .map(|r| RefundDto::new(r, &original))
            .collect(),
    }))
}
