//! `/api/v1/qrcode-static` (also `/api/v1/pixQrCode`, the seed's name): static QR codes.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::accounts::PageQuery;
use super::error::ApiResult;
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::PageInfo;
use crate::service::applications::Caller;
use crate::service::qr_codes::NewQrCode;
use crate::store::charges::StaticQrRow;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one))
        .routes(routes!(create_pix_qr_code, list_pix_qr_codes))
        .routes(routes!(get_pix_qr_code))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrCodeBody {
    name: Option<String>,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    /// Centavos; absent lets the payer type the value.
    value: Option<i64>,
    comment: Option<String>,
    /// A key of the account; default its default key.
    pix_key: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrCodeDto {
    name: String,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    identifier: String,
    value: Option<i64>,
    comment: Option<String>,
    pix_key: String,
    br_code: String,
    qr_code_image: String,
    created_at: String,
}

impl QrCodeDto {
    fn new(q: StaticQrRow, public_url: &str) -> Self {
        Self {
            qr_code_image: format!("{public_url}/qr/static/{}.png", q.identifier),
            name: q.name,
            correlation_id: q.correlation_id,
            identifier: q.identifier,
            value: q.value,
            comment: q.comment,
            pix_key: q.pix_key,
            br_code: q.br_code,
            created_at: rfc3339(q.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrCodeResponse {
    pix_qr_code: QrCodeDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QrCodesResponse {
    pix_qr_codes: Vec<QrCodeDto>,
    page_info: PageInfo,
}

async fn do_create(
    state: AppState,
    caller: Caller,
    body: QrCodeBody,
) -> ApiResult<(StatusCode, ApiJson<QrCodeResponse>)> {
    let new = NewQrCode {
        name: body.name,
        correlation_id: body.correlation_id,
        value: body.value,
        comment: body.comment,
        pix_key: body.pix_key,
    };
    let (row, created) = state.services.qr_codes.create(&caller, new).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(QrCodeResponse {
            pix_qr_code: QrCodeDto::new(row, &state.settings.public_url()),
        }),
    ))
}

async fn do_list(
    state: AppState,
    caller: Caller,
    query: PageQuery,
) -> ApiResult<ApiJson<QrCodesResponse>> {
    let (rows, page_info) = state.services.qr_codes.list(&caller, query.page()?).await?;
    let public = state.settings.public_url();
    Ok(ApiJson(QrCodesResponse {
        pix_qr_codes: rows
            .into_iter()
            .map(|q| QrCodeDto::new(q, &public))
            .collect(),
        page_info,
    }))
}

async fn do_get(state: AppState, caller: Caller, id: String) -> ApiResult<ApiJson<QrCodeResponse>> {
    let row = state.services.qr_codes.get(&caller, &id).await?;
    Ok(ApiJson(QrCodeResponse {
        pix_qr_code: QrCodeDto::new(row, &state.settings.public_url()),
    }))
}

/// Creates a static QR code for a key of the account.
#[utoipa::path(
    post, path = "/api/v1/qrcode-static", tag = "qrcode", request_body = QrCodeBody,
    security(("AppID" = ["QRCODE_STATIC_POST"])),
    responses((status = 201, body = QrCodeResponse), (status = 200, body = QrCodeResponse, description = "same correlationID"),
              (status = 400, description = "VALIDATION_ERROR, ACCOUNT_WITHOUT_PIX_KEY"),
              (status = 401), (status = 403),
              (status = 404, description = "PIX_KEY_NOT_FOUND: pixKey is not a key of the AppID's account"),
              (status = 409, description = "CORRELATION_ID_CONFLICT"))
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<QrCodeBody>,
) -> ApiResult<(StatusCode, ApiJson<QrCodeResponse>)> {
    do_create(state, caller, body).await
}

/// The account's static QR codes.
#[utoipa::path(
    get, path = "/api/v1/qrcode-static", tag = "qrcode", params(PageQuery),
    security(("AppID" = ["QRCODE_STATIC_GET"])),
    responses((status = 200, body = QrCodesResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<ApiJson<QrCodesResponse>> {
    do_list(state, caller, q).await
}

/// A static QR code by id, identifier or correlationID.
#[utoipa::path(
    get, path = "/api/v1/qrcode-static/{id}", tag = "qrcode", params(("id" = String, Path)),
    security(("AppID" = ["QRCODE_STATIC_GET"])),
    responses((status = 200, body = QrCodeResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<QrCodeResponse>> {
    do_get(state, caller, id).await
}

/// The same as `POST /api/v1/qrcode-static`, under the seed's name.
#[utoipa::path(
    post, path = "/api/v1/pixQrCode", tag = "qrcode", request_body = QrCodeBody,
    security(("AppID" = ["QRCODE_STATIC_POST"])),
    responses((status = 201, body = QrCodeResponse), (status = 200, body = QrCodeResponse, description = "same correlationID"),
              (status = 400, description = "VALIDATION_ERROR, ACCOUNT_WITHOUT_PIX_KEY"),
              (status = 401), (status = 403),
              (status = 404, description = "PIX_KEY_NOT_FOUND: pixKey is not a key of the AppID's account"),
              (status = 409, description = "CORRELATION_ID_CONFLICT"))
)]
async fn create_pix_qr_code(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<QrCodeBody>,
) -> ApiResult<(StatusCode, ApiJson<QrCodeResponse>)> {
    do_create(state, caller, body).await
}

/// The same as `GET /api/v1/qrcode-static`.
#[utoipa::path(
    get, path = "/api/v1/pixQrCode", tag = "qrcode", params(PageQuery),
    security(("AppID" = ["QRCODE_STATIC_GET"])),
    responses((status = 200, body = QrCodesResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list_pix_qr_codes(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<ApiJson<QrCodesResponse>> {
    do_list(state, caller, q).await
}

/// The same as `GET /api/v1/qrcode-static/{id}`.
#[utoipa::path(
    get, path = "/api/v1/pixQrCode/{id}", tag = "qrcode", params(("id" = String, Path)),
    security(("AppID" = ["QRCODE_STATIC_GET"])),
    responses((status = 200, body = QrCodeResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_pix_qr_code(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<QrCodeResponse>> {
    do_get(state, caller, id).await
}
