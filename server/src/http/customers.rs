//! `/api/v1/customer`: the payers named on charges.

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
use crate::service::customers::{Address, Customer, CustomerInput};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one, update))
}

/// A customer as clients send it (create, patch, or inside a charge).
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerBody {
    pub name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    #[serde(rename = "taxID")]
    pub tax_id: Option<String>,
    #[serde(rename = "correlationID")]
    pub correlation_id: Option<String>,
    pub address: Option<Address>,
}

impl From<CustomerBody> for CustomerInput {
    fn from(b: CustomerBody) -> Self {
        Self {
            name: b.name,
            email: b.email,
            phone: b.phone,
            tax_id: b.tax_id,
            correlation_id: b.correlation_id,
            address: b.address,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerDto {
    id: String,
    #[serde(rename = "correlationID")]
    correlation_id: String,
    name: String,
    email: Option<String>,
    phone: Option<String>,
    /// Formatted with punctuation.
    #[serde(rename = "taxID")]
    tax_id: Option<String>,
    address: Option<Address>,
    created_at: String,
    updated_at: String,
}

impl From<Customer> for CustomerDto {
    fn from(c: Customer) -> Self {
        Self {
            id: c.id,
            correlation_id: c.correlation_id,
            name: c.name,
            email: c.email,
            phone: c.phone,
            tax_id: c.tax_id.map(|t| t.formatted()),
            address: c.address,
            created_at: rfc3339(c.created_at),
            updated_at: rfc3339(c.updated_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct CustomerResponse {
    customer: CustomerDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomersResponse {
    customers: Vec<CustomerDto>,
    page_info: PageInfo,
}

/// Creates a customer. Repeating it with the same `correlationID` and fields answers the
/// existing customer with 200; other fields with a taken `correlationID` are 409.
#[utoipa::path(
    post, path = "/api/v1/customer", tag = "customer", request_body = CustomerBody,
    security(("AppID" = ["CUSTOMER_POST"])),
    responses((status = 201, body = CustomerResponse), (status = 200, body = CustomerResponse, description = "existing customer"),
              (status = 400), (status = 401), (status = 403),
              (status = 409, description = "CUSTOMER_ALREADY_EXISTS"))
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CustomerBody>,
) -> ApiResult<(StatusCode, ApiJson<CustomerResponse>)> {
    let (customer, created) = state
        .services
        .customers
        .create(&caller, body.into())
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        ApiJson(CustomerResponse {
            customer: customer.into(),
        }),
    ))
}

/// The company's customers, newest first.
#[utoipa::path(
    get, path = "/api/v1/customer", tag = "customer", params(PageQuery),
    security(("AppID" = ["CUSTOMER_GET"])),
    responses((status = 200, body = CustomersResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> ApiResult<ApiJson<CustomersResponse>> {
    let (customers, page_info) = state
        .services
        .customers
        .list(&caller, query.page()?)
        .await?;
    Ok(ApiJson(CustomersResponse {
        customers: customers.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// A customer by id or correlationID.
#[utoipa::path(
    get, path = "/api/v1/customer/{id}", tag = "customer", params(("id" = String, Path)),
    security(("AppID" = ["CUSTOMER_GET"])),
    responses((status = 200, body = CustomerResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<CustomerResponse>> {
    Ok(ApiJson(CustomerResponse {
        customer: state.services.customers.get(&caller, &id).await?.into(),
    }))
}

/// Changes the fields present in the body (name, email, phone, taxID, address).
#[utoipa::path(
    patch, path = "/api/v1/customer/{id}", tag = "customer", params(("id" = String, Path, description = "id or correlationID")),
    request_body = CustomerBody,
    security(("AppID" = ["CUSTOMER_PATCH"])),
    responses((status = 200, body = CustomerResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<CustomerBody>,
) -> ApiResult<ApiJson<CustomerResponse>> {
    let customer = state
        .services
        .customers
        .update(&caller, &id, body.into())
        .await?;
    Ok(ApiJson(CustomerResponse {
        customer: customer.into(),
    }))
}
