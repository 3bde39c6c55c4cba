//! `/api/v1/account`: campaign accounts (seed 2.1, rules 1 and 3).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery, OptionalJson};
use crate::service::accounts::{Account, Balance};
use crate::service::applications::Caller;
use crate::service::withdraw_keys::withdraw_type_name;
use crate::service::{CorrelationId, Page, PageInfo};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(get_one, withdraw_node_client))
        .routes(routes!(withdraw))
}

#[derive(Serialize, ToSchema)]
pub struct WithdrawKeyDto {
    #[serde(rename = "pixKey")]
    pix_key: String,
    /// `CPF`, `CNPJ`, `EMAIL`, `PHONE` or `RANDOM`.
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountDto {
    account_id: String,
    /// The holder's CNPJ with punctuation.
    tax_id: String,
    is_default: bool,
    balance: Balance,
    /// Present only where the account's withdraw key API is enabled; `null` when no
    /// withdraw key is selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<WithdrawKeyDto>, nullable)]
    pix_key_withdraw: Option<Option<WithdrawKeyDto>>,
}

impl From<Account> for AccountDto {
    fn from(a: Account) -> Self {
        Self {
            pix_key_withdraw: a.withdraw_key_api_enabled.then(|| {
                a.withdraw_key.map(|k| WithdrawKeyDto {
                    pix_key: k.key,
                    kind: withdraw_type_name(k.kind),
                })
            }),
            account_id: a.id,
            tax_id: a.tax_id.formatted(),
            is_default: a.is_default,
            balance: a.balance,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct AccountResponse {
    account: AccountDto,
}

impl From<Account> for AccountResponse {
    fn from(a: Account) -> Self {
        Self { account: a.into() }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountsResponse {
    accounts: Vec<AccountDto>,
    page_info: PageInfo,
}

#[derive(Deserialize, ToSchema)]
pub struct CreateAccountBody {
    /// Optional idempotency key: repeating it answers the same account.
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
}

/// `?skip=&limit=` (limit 10 by default, at most 100).
#[derive(Deserialize, IntoParams)]
pub struct PageQuery {
    skip: Option<i64>,
    limit: Option<i64>,
}

impl PageQuery {
    pub fn page(&self) -> ApiResult<Page> {
        Page::parse(self.skip, self.limit).map_err(ApiError::validation)
    }
}

/// Opens a bank account for a campaign (BaaS companies, MASTER AppID). Answers 200.
#[utoipa::path(
    post, path = "/api/v1/account", tag = "account",
    request_body(content = Option<CreateAccountBody>, description = "no fields are required"),
    security(("MasterAppID" = ["ACCOUNT_POST"])),
    responses(
        (status = 200, body = AccountResponse),
        (status = 401), (status = 403, description = "not MASTER, scope missing, or company not BAAS"),
        (status = 409, description = "CORRELATION_ID_CONFLICT"),
    )
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    OptionalJson(body): OptionalJson<CreateAccountBody>,
) -> ApiResult<ApiJson<AccountResponse>> {
    let correlation_id = body
        .and_then(|b| b.correlation_id)
        .map(|c| CorrelationId::parse("correlationID", &c))
        .transpose()
        .map_err(|e| ApiError::validation(vec![e]))?;
    let account = state
        .services
        .accounts
        .create(&caller, correlation_id)
        .await?;
    Ok(ApiJson(account.into()))
}

/// MASTER: every account of the company; another application: its own account.
#[utoipa::path(
    get, path = "/api/v1/account", tag = "account",
    params(PageQuery),
    security(("AppID" = ["ACCOUNT_GET"])),
    responses((status = 200, body = AccountsResponse), (status = 400), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<PageQuery>,
) -> ApiResult<ApiJson<AccountsResponse>> {
    let (accounts, page_info) = state.services.accounts.list(&caller, query.page()?).await?;
    Ok(ApiJson(AccountsResponse {
        accounts: accounts.into_iter().map(Into::into).collect(),
        page_info,
    }))
}

/// One account: any of the company's for MASTER, the bound one for other applications.
#[utoipa::path(
    get, path = "/api/v1/account/{accountId}", tag = "account",
    params(("accountId" = String, Path)),
    security(("AppID" = ["ACCOUNT_GET"])),
    responses((status = 200, body = AccountResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(account_id): ApiPath<String>,
) -> ApiResult<ApiJson<AccountResponse>> {
    Ok(ApiJson(
        state
            .services
            .accounts
            .get(&caller, &account_id)
            .await?
            .into(),
    ))
}

#[derive(Deserialize, ToSchema)]
pub struct WithdrawBody {
    /// Centavos; default everything available.
    value: Option<i64>,
    /// Makes the withdrawal idempotent: sent again after a lost answer, the same
    /// correlationID and body answer the withdrawal already made instead of a second one.
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClientWithdrawBody {
    /// Must equal the path's account when present.
    account_id: Option<String>,
    value: Option<i64>,
    /// As in `POST /api/v1/account/{accountId}/withdraw`.
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawTransactionDto {
    end_to_end_id: String,
    value: i64,
}

#[derive(Serialize, ToSchema)]
pub struct WithdrawResponse {
    account: AccountDto,
    transaction: WithdrawTransactionDto,
}

async fn do_withdraw(
    state: &AppState,
    caller: &Caller,
    account_id: &str,
    value: Option<i64>,
    correlation_id: Option<String>,
) -> ApiResult<ApiJson<WithdrawResponse>> {
    let correlation_id = correlation_id
        .map(|c| CorrelationId::parse("correlationID", &c))
        .transpose()
        .map_err(|e| ApiError::validation(vec![e]))?;
    let (account, transaction) = state
        .services
        .withdrawals
        .withdraw(caller, account_id, value, correlation_id)
        .await?;
    Ok(ApiJson(WithdrawResponse {
        account: account.into(),
        transaction: WithdrawTransactionDto {
            end_to_end_id: transaction.end_to_end_id,
            value: transaction.value,
        },
    }))
}

/// Sends `value` (default: everything available) to the account's selected withdraw key.
/// With a `correlationID`, repeating the request answers the withdrawal already made.
#[utoipa::path(
    post, path = "/api/v1/account/{accountId}/withdraw", tag = "account",
    params(("accountId" = String, Path)), request_body(content = Option<WithdrawBody>),
    security(("AppID" = ["ACCOUNT_WITHDRAW_POST"])),
    responses(
        (status = 200, body = WithdrawResponse),
        (status = 400, description = "WITHDRAW_KEY_NOT_SET, WITHDRAW_VALUE_INVALID, INSUFFICIENT_FUNDS"),
        (status = 401), (status = 403), (status = 404),
        (status = 409, description = "CORRELATION_ID_CONFLICT"),
    )
)]
async fn withdraw(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(account_id): ApiPath<String>,
    OptionalJson(body): OptionalJson<WithdrawBody>,
) -> ApiResult<ApiJson<WithdrawResponse>> {
    let (value, correlation_id) = body.map_or((None, None), |b| (b.value, b.correlation_id));
    do_withdraw(&state, &caller, &account_id, value, correlation_id).await
}

/// The withdraw as the official Node client sends it: `{accountId, value}`.
#[utoipa::path(
    post, path = "/api/v1/account/{accountId}", tag = "account",
    params(("accountId" = String, Path)), request_body = NodeClientWithdrawBody,
    security(("AppID" = ["ACCOUNT_WITHDRAW_POST"])),
    responses((status = 200, body = WithdrawResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn withdraw_node_client(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(account_id): ApiPath<String>,
    ApiJson(body): ApiJson<NodeClientWithdrawBody>,
) -> ApiResult<ApiJson<WithdrawResponse>> {
    if body.account_id.as_deref().is_some_and(|a| a != account_id) {
        return Err(ApiError::validation(vec![crate::service::FieldError::new(
            "accountId",
            crate::service::Problem::Invalid,
        )]));
    }
    do_withdraw(
        &state,
        &caller,
        &account_id,
        body.value,
        body.correlation_id,
    )
    .await
}
