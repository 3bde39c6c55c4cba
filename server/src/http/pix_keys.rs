//! `/api/v1/pix-keys`: the account's Pix keys, directory lookups and the withdraw key
//! (seed 2.3, 2.4, section 3 and rule 2).

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::accounts::{AccountDto, AccountResponse};
use super::error::ApiResult;
use super::json::{ApiJson, ApiPath};
use super::{AppState, rfc3339};
use crate::service::PageInfo;
use crate::service::applications::Caller;
use crate::service::directory::Lookup;
use crate::service::pix_keys::PixKeyView;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(delete))
        .routes(routes!(set_default))
        .routes(routes!(check))
        .routes(routes!(check_by_path))
        .routes(routes!(tokens))
        .routes(routes!(register_withdraw_key, select_withdraw_key))
}

#[derive(Deserialize, ToSchema)]
pub struct PixKeyBody {
    /// The key value; ignored for `EVP`, which Cofre generates.
    #[serde(rename = "pixKey")]
    pix_key: Option<String>,
    /// `CPF`, `CNPJ`, `EMAIL`, `PHONE` or `EVP`.
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PixKeyDto {
    key: String,
    #[serde(rename = "type")]
    kind: &'static str,
    is_default: bool,
    created_at: String,
}

impl From<PixKeyView> for PixKeyDto {
    fn from(k: PixKeyView) -> Self {
        Self {
            key: k.key,
            kind: k.kind.as_str(),
            is_default: k.is_default,
            created_at: rfc3339(k.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PixKeyResponse {
    pix_key: PixKeyDto,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PixKeysResponse {
    pix_keys: Vec<PixKeyDto>,
    page_info: PageInfo,
    /// The account of the AppID used.
    account: AccountDto,
}

/// Registers a Pix key for the account of the AppID used.
#[utoipa::path(
    post, path = "/api/v1/pix-keys", tag = "pix-keys",
    request_body = PixKeyBody,
    security(("AppID" = ["PIX_KEY_POST"])),
    responses(
        (status = 201, body = PixKeyResponse),
        (status = 400, description = "VALIDATION_ERROR, PIX_KEY_INVALID, PIX_KEY_NOT_HOLDERS"),
        (status = 401), (status = 403),
        (status = 409, description = "PIX_KEY_ALREADY_EXISTS, PIX_KEY_LIMIT_REACHED"),
    )
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<PixKeyBody>,
) -> ApiResult<(StatusCode, ApiJson<PixKeyResponse>)> {
    let key = state
        .services
        .pix_keys
        .create(&caller, body.kind.as_deref(), body.pix_key.as_deref())
        .await?;
    Ok((
        StatusCode::CREATED,
        ApiJson(PixKeyResponse {
            pix_key: key.into(),
        }),
    ))
}

/// The keys of the account of the AppID used, and that account with its balance.
#[utoipa::path(
    get, path = "/api/v1/pix-keys", tag = "pix-keys",
    security(("AppID" = ["PIX_KEY_GET"])),
    responses((status = 200, body = PixKeysResponse), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<ApiJson<PixKeysResponse>> {
    let (keys, account) = state.services.pix_keys.list(&caller).await?;
    let total = keys.len() as i64;
    let page_info = PageInfo {
        skip: 0,
        limit: crate::service::pix_keys::MAX_KEYS_PER_ACCOUNT,
        total_count: total,
        has_previous_page: false,
        has_next_page: false,
    };
    Ok(ApiJson(PixKeysResponse {
        pix_keys: keys.into_iter().map(Into::into).collect(),
        page_info,
        account: account.into(),
    }))
}

/// Deletes a key of the account of the AppID used; no money reaches it afterwards.
#[utoipa::path(
    delete, path = "/api/v1/pix-keys/{key}", tag = "pix-keys",
    params(("key" = String, Path, description = "the key value")),
    security(("AppID" = ["PIX_KEY_DELETE"])),
    responses((status = 204, description = "deleted, no body"), (status = 401), (status = 403), (status = 404))
)]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<StatusCode> {
    state.services.pix_keys.delete(&caller, &key).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Makes the key the account's default, the one charges use.
#[utoipa::path(
    put, path = "/api/v1/pix-keys/{key}/default", tag = "pix-keys",
    params(("key" = String, Path)),
    security(("AppID" = ["PIX_KEY_PUT"])),
    responses((status = 200, body = PixKeyResponse), (status = 401), (status = 403), (status = 404))
)]
async fn set_default(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<ApiJson<PixKeyResponse>> {
    let key = state.services.pix_keys.set_default(&caller, &key).await?;
    Ok(ApiJson(PixKeyResponse {
        pix_key: key.into(),
    }))
}

#[derive(Deserialize, ToSchema)]
pub struct CheckBody {
    #[serde(rename = "pixKey")]
    pix_key: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnerDto {
    name: String,
    /// Masked: `111.***.***-35`.
    #[serde(rename = "taxID")]
    tax_id: String,
    /// The ISPB of the holder's institution (`COFRE` for Cofre's accounts).
    psp: String,
    branch: String,
    /// Masked but the last two digits.
    account: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckResponse {
    /// New on every lookup; a payment to this key quotes it.
    pix_key_end_to_end_id: String,
    pix_key: String,
    #[serde(rename = "type")]
    kind: &'static str,
    owner: OwnerDto,
}

impl From<Lookup> for CheckResponse {
    fn from(l: Lookup) -> Self {
        Self {
            pix_key_end_to_end_id: l.end_to_end_id,
            pix_key: l.key.as_str().to_owned(),
            kind: l.key.kind().as_str(),
            owner: OwnerDto {
                name: l.owner.name,
                tax_id: l.owner.tax_id.masked(),
                psp: l.owner.psp,
                branch: l.owner.branch,
                account: l.owner.account,
            },
        }
    }
}

/// Looks a key up in the Pix directory; each lookup costs tokens of the holder's bucket
/// (found 1, not found 20, Cofre's own keys 0; refused below 20 with 429).
#[utoipa::path(
    post, path = "/api/v1/pix-keys/check", tag = "pix-keys",
    request_body = CheckBody,
    security(("AppID" = ["PIX_KEY_CHECK_GET"])),
    responses(
        (status = 200, body = CheckResponse), (status = 400), (status = 401), (status = 403),
        (status = 404, description = "PIX_KEY_NOT_FOUND"), (status = 429, description = "bucket below 20 tokens"),
    )
)]
async fn check(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CheckBody>,
) -> ApiResult<ApiJson<CheckResponse>> {
    let value = body.pix_key.unwrap_or_default();
    Ok(ApiJson(
        state
            .services
            .directory
            .check(&caller, &value)
            .await?
            .into(),
    ))
}

/// The same lookup as `POST /api/v1/pix-keys/check`, with the key in the path.
#[utoipa::path(
    get, path = "/api/v1/pix-keys/{key}/check", tag = "pix-keys",
    params(("key" = String, Path)),
    security(("AppID" = ["PIX_KEY_CHECK_GET"])),
    responses((status = 200, body = CheckResponse), (status = 400), (status = 401), (status = 403), (status = 404), (status = 429))
)]
async fn check_by_path(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(key): ApiPath<String>,
) -> ApiResult<ApiJson<CheckResponse>> {
    Ok(ApiJson(
        state.services.directory.check(&caller, &key).await?.into(),
    ))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokensDto {
    available: i64,
    capacity: i64,
    refill_per_minute: i64,
}

#[derive(Serialize, ToSchema)]
pub struct TokensResponse {
    tokens: TokensDto,
}

/// The directory lookup bucket of the caller's account holder.
#[utoipa::path(
    get, path = "/api/v1/pix-keys/tokens", tag = "pix-keys",
    security(("AppID" = ["PIX_KEY_CHECK_GET"])),
    responses((status = 200, body = TokensResponse), (status = 401), (status = 403))
)]
async fn tokens(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<ApiJson<TokensResponse>> {
    let t = state
        .services
        .directory
        .tokens(&caller)
        .await
        .map_err(super::error::ApiError::internal)?;
    Ok(ApiJson(TokensResponse {
        tokens: TokensDto {
            available: t.available,
            capacity: t.capacity,
            refill_per_minute: t.refill_per_minute,
        },
    }))
}

#[derive(Deserialize, ToSchema)]
pub struct WithdrawKeyBody {
    #[serde(rename = "pixKey")]
    pix_key: Option<String>,
    /// Optional: `CPF`, `CNPJ`, `EMAIL`, `PHONE` or `RANDOM`; recognised from the key when absent.
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Registers a withdraw key for the company (after a directory lookup and the holder
/// check) and selects it for the account of the AppID used.
#[utoipa::path(
    post, path = "/api/v1/pix-keys/withdraw", tag = "pix-keys",
    request_body = WithdrawKeyBody,
    security(("AppID" = ["PIX_KEY_WITHDRAW_POST"])),
    responses(
        (status = 200, body = AccountResponse),
        (status = 400, description = "PIX_KEY_ALREADY_EXISTS (`Chave pix já existente`: use PUT), WITHDRAW_KEY_HOLDER_MISMATCH, WITHDRAW_KEY_INTERNAL, PIX_KEY_INVALID"),
        (status = 401), (status = 403, description = "WITHDRAW_KEY_API_DISABLED or scope missing"),
        (status = 404, description = "PIX_KEY_NOT_FOUND: not in the directory"), (status = 429),
    )
)]
async fn register_withdraw_key(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<WithdrawKeyBody>,
) -> ApiResult<ApiJson<AccountResponse>> {
    let account = state
        .services
        .withdraw_keys
        .register(&caller, body.kind.as_deref(), body.pix_key.as_deref())
        .await?;
    Ok(ApiJson(account.into()))
}

/// Selects a withdraw key the company already has; the same key again changes nothing.
#[utoipa::path(
    put, path = "/api/v1/pix-keys/withdraw", tag = "pix-keys",
    request_body = WithdrawKeyBody,
    security(("AppID" = ["PIX_KEY_WITHDRAW_PUT"])),
    responses(
        (status = 200, body = AccountResponse), (status = 400), (status = 401),
        (status = 403, description = "WITHDRAW_KEY_API_DISABLED or scope missing"),
        (status = 404, description = "WITHDRAW_KEY_NOT_FOUND: register it with POST"),
    )
)]
async fn select_withdraw_key(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<WithdrawKeyBody>,
) -> ApiResult<ApiJson<AccountResponse>> {
    let account = state
        .services
        .withdraw_keys
        .select(&caller, body.kind.as_deref(), body.pix_key.as_deref())
        .await?;
    Ok(ApiJson(account.into()))
}
