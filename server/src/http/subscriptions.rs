//! `/api/v1/subscriptions`: recurring charges and their payment book (carnê) PDF.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::customers::CustomerBody;
use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::subscriptions::{InstalmentView, NewSubscription, Payer, Subscription};
use crate::service::{Page, PageInfo};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one))
        .routes(routes!(cancel))
        .routes(routes!(installments))
        .routes(routes!(payment_book))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerDto {
    name: String,
    #[serde(rename = "taxID")]
    tax_id: String,
    email: Option<String>,
    phone: Option<String>,
}

impl From<Payer> for PayerDto {
    fn from(p: Payer) -> Self {
        Self {
            name: p.name,
            tax_id: p.tax_id,
            email: p.email,
            phone: p.phone,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionDto {
    id: String,
    #[serde(rename = "globalID")]
    global_id: String,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    /// Centavos per instalment.
    value: i64,
    customer: PayerDto,
    /// WEEKLY, BIWEEKLY, MONTHLY, BIMONTHLY, QUARTERLY, SEMIANNUALLY or ANNUALLY.
    frequency: String,
    day_generate_charge: i64,
    day_due: i64,
    #[serde(rename = "type")]
    kind: String,
    /// PIX or BOLETO.
    charge_type: String,
    /// ACTIVE or CANCELED.
    status: String,
    /// The schedule starts on or after this day (YYYY-MM-DD, Brasília).
    start_date: String,
    created_at: String,
    canceled_at: Option<String>,
}

impl From<Subscription> for SubscriptionDto {
    fn from(s: Subscription) -> Self {
        Self {
            global_id: s.global_id(),
            id: s.row.id,
            correlation_id: s.row.correlation_id,
            value: s.row.value,
            customer: s.customer.into(),
            frequency: s.row.frequency,
            day_generate_charge: s.row.day_generate_charge,
            day_due: s.row.day_due,
            kind: s.row.kind,
            charge_type: s.row.charge_type,
            status: s.row.status,
            start_date: s.row.start_date,
            created_at: rfc3339(s.row.created_at),
            canceled_at: s.row.canceled_at.map(rfc3339),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SubscriptionResponse {
    subscription: SubscriptionDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsResponse {
    subscriptions: Vec<SubscriptionDto>,
    page_info: PageInfo,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionBody {
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    /// Centavos per instalment.
    value: Option<i64>,
    /// Name and taxID required.
    customer: Option<CustomerBody>,
    frequency: Option<String>,
    /// 1 to 31; short months use their last day.
    day_generate_charge: Option<i64>,
    /// Days from generation to due date: 3 to 60.
    day_due: Option<i64>,
    /// RECURRENT.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// PIX (default) or BOLETO.
    charge_type: Option<String>,
}

/// Creates a subscription for the AppID's account. No charge is issued now: each
/// instalment's charge comes on its generation day, or earlier with the payment book.
#[utoipa::path(
    post, path = "/api/v1/subscriptions", tag = "subscription", request_body = SubscriptionBody,
    security(("AppID" = ["SUBSCRIPTION_POST"])),
    responses(
        (status = 201, body = SubscriptionResponse), (status = 200, body = SubscriptionResponse, description = "same correlationID"),
        (status = 400), (status = 401), (status = 403), (status = 409, description = "CORRELATION_ID_CONFLICT"),
    )
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<SubscriptionBody>,
) -> ApiResult<(StatusCode, ApiJson<SubscriptionResponse>)> {
    let new = NewSubscription {
        correlation_id: body.correlation_id,
        value: body.value,
        customer: body.customer.map(Into::into),
        frequency: body.frequency,
        day_generate_charge: body.day_generate_charge,
        day_due: body.day_due,
        kind: body.kind,
        charge_type: body.charge_type,
    };
    let (subscription, created) = state.services.subscriptions.create(&caller, new).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(SubscriptionResponse {
            subscription: subscription.into(),
        }),
    ))
}

#[derive(Deserialize, IntoParams)]
pub struct ListQuery {
    skip: Option<i64>,
    limit: Option<i64>,
}

/// Subscriptions of the company (MASTER) or of the AppID's account, newest first.
#[utoipa::path(
    get, path = "/api/v1/subscriptions", tag = "subscription", params(ListQuery),
    security(("AppID" = ["SUBSCRIPTION_GET"])),
    responses((status = 200, body = SubscriptionsResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<ApiJson<SubscriptionsResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (subscriptions, page_info) = state.services.subscriptions.list(&caller, page).await?;
    Ok(ApiJson(SubscriptionsResponse {
        subscriptions: subscriptions.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// A subscription by id or globalID.
#[utoipa::path(
    get, path = "/api/v1/subscriptions/{id}", tag = "subscription", params(("id" = String, Path)),
    security(("AppID" = ["SUBSCRIPTION_GET"])),
    responses((status = 200, body = SubscriptionResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<SubscriptionResponse>> {
    let subscription = state.services.subscriptions.get(&caller, &id).await?;
    Ok(ApiJson(SubscriptionResponse {
        subscription: subscription.into(),
    }))
}

/// Cancels an ACTIVE subscription: no instalment is issued after this (charges
/// already issued stay as they are).
#[utoipa::path(
    put, path = "/api/v1/subscriptions/{id}/cancel", tag = "subscription", params(("id" = String, Path)),
    security(("AppID" = ["SUBSCRIPTION_PUT"])),
    responses((status = 200, body = SubscriptionResponse), (status = 401), (status = 403), (status = 404),
              (status = 409, description = "SUBSCRIPTION_CANCELED"))
)]
async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<SubscriptionResponse>> {
    let subscription = state.services.subscriptions.cancel(&caller, &id).await?;
    Ok(ApiJson(SubscriptionResponse {
        subscription: subscription.into(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BoletoDto {
    /// 44 digits.
    barcode: String,
    /// 47 digits (linha digitável).
    digitable_line: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallmentDto {
    number: u32,
    /// YYYY-MM-DD.
    generation_date: String,
    due_date: String,
    value: i64,
    /// SCHEDULED (no charge yet), or the charge's status: ACTIVE, COMPLETED, EXPIRED.
    status: String,
    /// The charge's transactionID once issued.
    #[serde(rename = "transactionID")]
    transaction_id: Option<String>,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    br_code: Option<String>,
    boleto: Option<BoletoDto>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallmentsResponse {
    installments: Vec<InstallmentDto>,
    page_info: PageInfo,
}

fn installment(view: InstalmentView, value: i64) -> InstallmentDto {
    let date = crate::service::clock::date_text;
    InstallmentDto {
        number: view.instalment.number,
        generation_date: date(view.instalment.generation),
        due_date: date(view.instalment.due),
        value,
        status: view
            .charge
            .as_ref()
            .map_or_else(|| "SCHEDULED".to_owned(), |c| c.status.clone()),
        transaction_id: view.charge.as_ref().map(|c| c.transaction_id.clone()),
        correlation_id: view.charge.as_ref().map(|c| c.correlation_id.clone()),
        br_code: view.charge.map(|c| c.br_code),
        boleto: view
            .issued
            .and_then(|i| match (i.boleto_barcode, i.boleto_line) {
                (Some(barcode), Some(digitable_line)) => Some(BoletoDto {
                    barcode,
                    digitable_line,
                }),
                _ => None,
            }),
    }
}

/// The schedule up to the end of next year, with each issued instalment's charge.
#[utoipa::path(
    get, path = "/api/v1/subscriptions/{id}/installments", tag = "subscription",
    params(("id" = String, Path), ListQuery),
    security(("AppID" = ["SUBSCRIPTION_GET"])),
    responses((status = 200, body = InstallmentsResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn installments(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<ApiJson<InstallmentsResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (subscription, views, page_info) = state
        .services
        .subscriptions
        .instalments(&caller, &id, page)
        .await?;
    Ok(ApiJson(InstallmentsResponse {
        installments: views
            .into_iter()
            .map(|v| installment(v, subscription.row.value))
            .collect(),
        page_info,
    }))
}

#[derive(Deserialize, IntoParams)]
pub struct BookQuery {
    /// 1 to 12; required.
    month: Option<i64>,
    /// Required; at most next year.
    year: Option<i64>,
}

/// The payment book (seed rule 5): issues the charge of every instalment generated up
/// to the end of `month`/`year` that has none yet (idempotent per instalment, also
/// under concurrent calls; with chargeType BOLETO a registered boleto each) and answers
/// the PDF, one page per instalment.
#[utoipa::path(
    get, path = "/api/v1/subscriptions/{id}/payment-book", tag = "subscription",
    params(("id" = String, Path), BookQuery),
    security(("AppID" = ["SUBSCRIPTION_PAYMENT_BOOK_GET"])),
    responses(
        (status = 200, description = "the payment book", content_type = "application/pdf"),
        (status = 400, description = "VALIDATION_ERROR (month/year missing, invalid or past the end of next year), PAYMENT_BOOK_EMPTY, ACCOUNT_WITHOUT_PIX_KEY"),
        (status = 401), (status = 403), (status = 404), (status = 409, description = "SUBSCRIPTION_CANCELED"),
    )
)]
async fn payment_book(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<BookQuery>,
) -> ApiResult<Response> {
    let pdf = state
        .services
        .subscriptions
        .payment_book(&caller, &id, q.month, q.year)
        .await?;
    let mut response = pdf.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/pdf"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("inline; filename=\"carne.pdf\""),
    );
    Ok(response)
}
