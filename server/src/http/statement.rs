//! `/api/v1/statement` and `/api/v1/transaction` (seed rule 6 for `companyBankAccount`).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, date_range, rfc3339};
use crate::service::applications::Caller;
use crate::service::ledger::Kind;
use crate::service::{Page, PageInfo};
use crate::store::ledger::TransactionRow;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(statement))
        .routes(routes!(transactions))
        .routes(routes!(transaction))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionDto {
    #[serde(rename = "transactionID")]
    transaction_id: String,
    /// PIX_IN, PIX_OUT, REFUND, DISPUTE_BLOCK, DISPUTE_RELEASE, DISPUTE_DEBIT.
    #[serde(rename = "type")]
    kind: String,
    /// Centavos, always positive.
    value: i64,
    /// `+1` money in, `-1` money out, `0` moved between available and blocked.
    direction: i64,
    end_to_end_id: String,
    charge_id: Option<String>,
    description: Option<String>,
    /// The payer of a Pix in, the destination of a Pix out.
    #[schema(value_type = Object)]
    counterparty: serde_json::Value,
    time: String,
}

impl From<TransactionRow> for TransactionDto {
    fn from(t: TransactionRow) -> Self {
        Self {
            direction: Kind::parse(&t.kind).map(Kind::sign).unwrap_or(0),
            counterparty: serde_json::from_str(&t.counterparty).unwrap_or_default(),
            transaction_id: t.id,
            kind: t.kind,
            value: t.value,
            end_to_end_id: t.end_to_end_id,
            charge_id: t.charge_id,
            description: t.description,
            time: rfc3339(t.created_at),
        }
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct StatementQuery {
    /// RFC 3339; inclusive.
    start: Option<String>,
    /// RFC 3339; exclusive.
    end: Option<String>,
    skip: Option<i64>,
    limit: Option<i64>,
    /// Another account of the company (MASTER with feature MASTER_APP_READ_ANY_ACCOUNT).
    company_bank_account: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatementResponse {
    statement: Vec<TransactionDto>,
    page_info: PageInfo,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionsResponse {
    transactions: Vec<TransactionDto>,
    page_info: PageInfo,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionResponse {
    transaction: TransactionDto,
}

async fn page_of(
    state: &AppState,
    caller: &Caller,
    q: &StatementQuery,
) -> ApiResult<(Vec<TransactionDto>, PageInfo)> {
    let (start, end) = date_range(q.start.as_deref(), q.end.as_deref())?;
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (rows, info) = state
        .services
        .statement
        .list(caller, q.company_bank_account.as_deref(), start, end, page)
        .await?;
    Ok((rows.into_iter().map(Into::into).collect(), info))
}

/// Every movement of the account, newest first.
#[utoipa::path(
    get, path = "/api/v1/statement", tag = "statement", params(StatementQuery),
    security(("AppID" = ["STATEMENT_GET"])),
    responses((status = 200, body = StatementResponse), (status = 400), (status = 401),
              (status = 403, description = "companyBankAccount without MASTER or feature"), (status = 404))
)]
async fn statement(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<StatementQuery>,
) -> ApiResult<ApiJson<StatementResponse>> {
    let (statement, page_info) = page_of(&state, &caller, &q).await?;
    Ok(ApiJson(StatementResponse {
        statement,
        page_info,
    }))
}

/// The account's transactions, newest first (the same movements as the statement).
#[utoipa::path(
    get, path = "/api/v1/transaction", tag = "statement", params(StatementQuery),
    security(("AppID" = ["TRANSACTION_GET"])),
    responses((status = 200, body = TransactionsResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn transactions(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<StatementQuery>,
) -> ApiResult<ApiJson<TransactionsResponse>> {
    let (transactions, page_info) = page_of(&state, &caller, &q).await?;
    Ok(ApiJson(TransactionsResponse {
        transactions,
        page_info,
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct AccountQuery {
    company_bank_account: Option<String>,
}

/// One transaction by id or endToEndId.
#[utoipa::path(
    get, path = "/api/v1/transaction/{id}", tag = "statement", params(("id" = String, Path), AccountQuery),
    security(("AppID" = ["TRANSACTION_GET"])),
    responses((status = 200, body = TransactionResponse), (status = 401), (status = 403), (status = 404))
)]
async fn transaction(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<AccountQuery>,
) -> ApiResult<ApiJson<TransactionResponse>> {
    let t = state
        .services
        .statement
        .transaction(&caller, q.company_bank_account.as_deref(), &id)
        .await?;
    Ok(ApiJson(TransactionResponse {
        transaction: t.into(),
    }))
}
