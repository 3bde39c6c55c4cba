//! `/api/v1/webhook`: registrations, the event list, deliveries with their attempts,
//! resend, and the public signing keys.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::charges::StatusResponse;
use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::webhooks::{Delivery, NewWebhook};
use crate::service::{Page, PageInfo, events};
use crate::store::events::WebhookRow;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(delete))
        .routes(routes!(event_names))
        .routes(routes!(deliveries))
        .routes(routes!(resend))
        .routes(routes!(public_keys))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookInput {
    name: Option<String>,
    /// One of `GET /api/v1/webhook/events`.
    event: Option<String>,
    url: Option<String>,
    /// Sent as the `Authorization` header of every delivery.
    authorization: Option<String>,
    is_active: Option<bool>,
    /// Extra headers sent with every delivery.
    #[schema(value_type = Option<Object>)]
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    /// The clientId of an application: payloads then name the application that
    /// originated the charge.
    application: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub struct WebhookBody {
    webhook: Option<WebhookInput>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDto {
    id: String,
    name: String,
    event: String,
    url: String,
    /// Whether an Authorization value is set (the value itself is never shown again).
    has_authorization: bool,
    is_active: bool,
    #[schema(value_type = Object)]
    headers: serde_json::Value,
    application_id: Option<String>,
    created_at: String,
}

impl From<WebhookRow> for WebhookDto {
    fn from(w: WebhookRow) -> Self {
        Self {
            headers: serde_json::from_str(&w.headers).unwrap_or_default(),
            has_authorization: w.authorization.is_some(),
            id: w.id,
            name: w.name,
            event: w.event,
            url: w.url,
            is_active: w.is_active,
            application_id: w.application_id,
            created_at: rfc3339(w.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct WebhookResponse {
    webhook: WebhookDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhooksResponse {
    webhooks: Vec<WebhookDto>,
    page_info: PageInfo,
}

/// Registers a webhook for one event of the company.
#[utoipa::path(
    post, path = "/api/v1/webhook", tag = "webhook", request_body = WebhookBody,
    security(("AppID" = ["WEBHOOK_POST"])),
    responses((status = 201, body = WebhookResponse),
              (status = 400, description = "VALIDATION_ERROR, WEBHOOK_URL_NOT_ALLOWED"), (status = 401), (status = 403),
              (status = 404, description = "APPLICATION_NOT_FOUND"))
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<WebhookBody>,
) -> ApiResult<(StatusCode, ApiJson<WebhookResponse>)> {
    let input = body.webhook.unwrap_or(WebhookInput {
        name: None,
        event: None,
        url: None,
        authorization: None,
        is_active: None,
        headers: None,
        application: None,
    });
    let new = NewWebhook {
        name: input.name,
        event: input.event,
        url: input.url,
        authorization: input.authorization,
        is_active: input.is_active,
        headers: input.headers,
        application_client_id: input.application,
    };
    let row = state.services.webhooks.create(&caller, new).await?;
    Ok((
        StatusCode::CREATED,
        ApiJson(WebhookResponse {
            webhook: row.into(),
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
pub struct ListQuery {
    /// Only webhooks with exactly this URL.
    url: Option<String>,
    skip: Option<i64>,
    limit: Option<i64>,
}

/// The company's webhooks.
#[utoipa::path(
    get, path = "/api/v1/webhook", tag = "webhook", params(ListQuery),
    security(("AppID" = ["WEBHOOK_GET"])),
    responses((status = 200, body = WebhooksResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<ApiJson<WebhooksResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (rows, page_info) = state
        .services
        .webhooks
        .list(&caller, q.url.as_deref(), page)
        .await?;
    Ok(ApiJson(WebhooksResponse {
        webhooks: rows.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// Deletes a webhook; none of its pending deliveries is sent afterwards.
#[utoipa::path(
    delete, path = "/api/v1/webhook/{id}", tag = "webhook", params(("id" = String, Path)),
    security(("AppID" = ["WEBHOOK_DELETE"])),
    responses((status = 200, body = StatusResponse), (status = 401), (status = 403), (status = 404))
)]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<StatusResponse>> {
    state.services.webhooks.delete(&caller, &id).await?;
    Ok(ApiJson(StatusResponse::ok()))
}

#[derive(Serialize, ToSchema)]
pub struct EventNameDto {
    name: &'static str,
    description: &'static str,
}

#[derive(Serialize, ToSchema)]
pub struct EventNamesResponse {
    events: Vec<EventNameDto>,
}

/// The events a webhook may subscribe to.
#[utoipa::path(
    get, path = "/api/v1/webhook/events", tag = "webhook",
    security(("AppID" = ["WEBHOOK_GET"])),
    responses((status = 200, body = EventNamesResponse), (status = 401), (status = 403))
)]
async fn event_names() -> ApiJson<EventNamesResponse> {
    ApiJson(EventNamesResponse {
        events: events::EVENTS
            .iter()
            .map(|(name, description)| EventNameDto { name, description })
            .collect(),
    })
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptDto {
    attempt: i64,
    status_code: Option<i64>,
    latency_ms: i64,
    error: Option<String>,
    time: String,
    next_resend_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryDto {
    id: String,
    event_id: String,
    event: String,
    /// PENDING, DELIVERED, FAILED (8 attempts failed; resend by hand) or CANCELED.
    status: String,
    attempts: Vec<AttemptDto>,
    /// When the next attempt is due, while PENDING.
    next_resend_at: Option<String>,
    delivered_at: Option<String>,
    created_at: String,
}

impl From<Delivery> for DeliveryDto {
    fn from(d: Delivery) -> Self {
        Self {
            next_resend_at: (d.row.status == "PENDING").then(|| rfc3339(d.row.next_attempt_at)),
            delivered_at: d.row.delivered_at.map(rfc3339),
            created_at: rfc3339(d.row.created_at),
            attempts: d
                .attempts
                .into_iter()
                .map(|a| AttemptDto {
                    attempt: a.attempt,
                    status_code: a.status_code,
                    latency_ms: a.latency_ms,
                    error: a.error,
                    time: rfc3339(a.attempted_at),
                    next_resend_at: a.next_resend_at.map(rfc3339),
                })
                .collect(),
            id: d.row.id,
            event_id: d.row.event_id,
            event: d.row.event,
            status: d.row.status,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesResponse {
    deliveries: Vec<DeliveryDto>,
    page_info: PageInfo,
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryResponse {
    delivery: DeliveryDto,
}

#[derive(Deserialize, IntoParams)]
pub struct PageParams {
    skip: Option<i64>,
    limit: Option<i64>,
}

/// A webhook's deliveries, newest first, with every attempt.
#[utoipa::path(
    get, path = "/api/v1/webhook/{id}/deliveries", tag = "webhook", params(("id" = String, Path), PageParams),
    security(("AppID" = ["WEBHOOK_GET"])),
    responses((status = 200, body = DeliveriesResponse), (status = 401), (status = 403), (status = 404))
)]
async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<ApiJson<DeliveriesResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (rows, page_info) = state
        .services
        .webhooks
        .deliveries(&caller, &id, page)
        .await?;
    Ok(ApiJson(DeliveriesResponse {
        deliveries: rows.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// Sends a delivery again now (also one that gave up).
#[utoipa::path(
    post, path = "/api/v1/webhook/deliveries/{id}/resend", tag = "webhook", params(("id" = String, Path)),
    security(("AppID" = ["WEBHOOK_POST"])),
    responses((status = 200, body = DeliveryResponse), (status = 401), (status = 403), (status = 404))
)]
async fn resend(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<DeliveryResponse>> {
    let delivery = state
        .services
        .webhooks
        .resend(Some(&caller.company_id), &id)
        .await?;
    Ok(ApiJson(DeliveryResponse {
        delivery: delivery.into(),
    }))
}

#[derive(Serialize, ToSchema)]
pub struct PublicKeyDto {
    /// SHA-256 of the DER public key, hex.
    key_identifier: String,
    is_current: bool,
    /// PEM (SPKI).
    key: String,
}

#[derive(Serialize, ToSchema)]
pub struct PublicKeysResponse {
    public_keys: Vec<PublicKeyDto>,
}

/// The keys that sign `x-webhook-signature` (RSA PKCS#1 v1.5 SHA-256 over the raw
/// body); receivers accept any listed key, so rotation never breaks them. No AppID.
#[utoipa::path(
    get, path = "/api/v1/webhook/public-keys", tag = "webhook",
    security(()),
    responses((status = 200, body = PublicKeysResponse))
)]
async fn public_keys(State(state): State<AppState>) -> ApiResult<ApiJson<PublicKeysResponse>> {
    let keys = state
        .services
        .webhooks
        .signer()
        .public_keys(state.services.clock.now_millis())
        .await
        .map_err(ApiError::internal)?;
    Ok(ApiJson(PublicKeysResponse {
        public_keys: keys
            .into_iter()
            .map(|k| PublicKeyDto {
                key_identifier: k.key_identifier,
                is_current: k.is_current,
                key: k.pem,
            })
            .collect(),
    }))
}
