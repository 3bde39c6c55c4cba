//! `/api/v1/plugins`: a company's rules as WebAssembly components (MASTER only).

use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::charges::StatusResponse;
use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::plugins::{Binding, MAX_COMPONENT_BYTES, PluginView};
use crate::service::{FieldError, Page, PageInfo, Problem};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload, list))
        .routes(routes!(delete))
        .routes(routes!(set_bindings))
        .routes(routes!(invocations))
        // Components are larger than JSON bodies: 10 MiB plus the form's own parts.
        .layer(DefaultBodyLimit::max(MAX_COMPONENT_BYTES + 64 * 1024))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginDto {
    id: String,
    name: String,
    version: String,
    /// The cofre:rules interface version it was built for.
    interface: String,
    sha256: String,
    bindings: Vec<Binding>,
    created_at: String,
}

impl From<PluginView> for PluginDto {
    fn from(p: PluginView) -> Self {
        Self {
            id: p.row.id,
            name: p.row.name,
            version: p.row.version,
            interface: p.row.interface,
            sha256: p.row.sha256,
            bindings: p.bindings,
            created_at: rfc3339(p.row.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct PluginResponse {
    plugin: PluginDto,
}

#[derive(Serialize, ToSchema)]
pub struct PluginsResponse {
    plugins: Vec<PluginDto>,
}

/// The multipart form of an upload (documentation only).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The `.wasm` component.
    #[schema(format = Binary, value_type = String)]
    file: Vec<u8>,
    name: String,
    version: String,
}

fn bad_form() -> ApiError {
    ApiError::validation(vec![FieldError::new("form", Problem::Invalid)])
}

/// Uploads a component; it is compiled and checked against its interface version
/// before anything is stored (422 otherwise).
#[utoipa::path(
    post, path = "/api/v1/plugins", tag = "plugins",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    security(("MasterAppID" = ["PLUGIN_POST"])),
    responses(
        (status = 201, body = PluginResponse), (status = 400), (status = 401), (status = 403),
        (status = 413), (status = 415, description = "MULTIPART_REQUIRED"),
        (status = 422, description = "PLUGIN_INVALID, PLUGIN_INTERFACE_UNSUPPORTED"),
    )
)]
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    form: Result<Multipart, MultipartRejection>,
) -> ApiResult<(StatusCode, ApiJson<PluginResponse>)> {
    // axum's own rejection is a text/plain 400; every answer here is an API error.
    let mut form =
        form.map_err(|_| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "MULTIPART_REQUIRED"))?;
    let (mut name, mut version, mut file) = (None, None, Vec::new());
    while let Some(field) = form.next_field().await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")
        } else {
            bad_form()
        }
    })? {
        let field_name = field.name().unwrap_or_default().to_owned();
        let bytes = field.bytes().await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")
            } else {
                bad_form()
            }
        })?;
        match field_name.as_str() {
            "file" => file = bytes.to_vec(),
            "name" => name = Some(String::from_utf8_lossy(&bytes).into_owned()),
            "version" => version = Some(String::from_utf8_lossy(&bytes).into_owned()),
            _ => {}
        }
    }
    let view = state
        .services
        .plugins
        .upload(&caller, name.as_deref(), version.as_deref(), file)
        .await?;
    Ok((
        StatusCode::CREATED,
        ApiJson(PluginResponse {
            plugin: view.into(),
        }),
    ))
}

/// The company's plugins with their bindings.
#[utoipa::path(
    get, path = "/api/v1/plugins", tag = "plugins",
    security(("MasterAppID" = ["PLUGIN_GET"])),
    responses((status = 200, body = PluginsResponse), (status = 401), (status = 403))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<ApiJson<PluginsResponse>> {
    let plugins = state.services.plugins.list(&caller).await?;
    Ok(ApiJson(PluginsResponse {
        plugins: plugins.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize, ToSchema)]
pub struct BindingsBody {
    /// `{hook, accounts (null: every account), config}`; hooks: authorize-withdraw,
    /// check-pix-key, shape-charge, shape-webhook.
    bindings: Option<Vec<Binding>>,
}

/// Replaces which hooks and accounts the plugin serves, with its configuration values.
#[utoipa::path(
    put, path = "/api/v1/plugins/{id}/bindings", tag = "plugins", params(("id" = String, Path)),
    request_body = BindingsBody,
    security(("MasterAppID" = ["PLUGIN_PUT"])),
    responses((status = 200, body = PluginResponse), (status = 400), (status = 401), (status = 403), (status = 404))
)]
async fn set_bindings(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<BindingsBody>,
) -> ApiResult<ApiJson<PluginResponse>> {
    let bindings = body.bindings.ok_or_else(|| {
        ApiError::validation(vec![FieldError::new("bindings", Problem::Required)])
    })?;
    let view = state
        .services
        .plugins
        .set_bindings(&caller, &id, bindings)
        .await?;
    Ok(ApiJson(PluginResponse {
        plugin: view.into(),
    }))
}

/// Deletes a plugin; it is never invoked again.
#[utoipa::path(
    delete, path = "/api/v1/plugins/{id}", tag = "plugins", params(("id" = String, Path)),
    security(("MasterAppID" = ["PLUGIN_DELETE"])),
    responses((status = 200, body = StatusResponse), (status = 401), (status = 403), (status = 404))
)]
async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<StatusResponse>> {
    state.services.plugins.delete(&caller, &id).await?;
    Ok(ApiJson(StatusResponse::ok()))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvocationDto {
    id: String,
    hook: String,
    /// ALLOW, DENY, KEEP, REPLACE, DROP or ERROR.
    decision: String,
    code: Option<String>,
    duration_us: i64,
    error: Option<String>,
    time: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvocationsResponse {
    invocations: Vec<InvocationDto>,
    page_info: PageInfo,
}

#[derive(Deserialize, IntoParams)]
pub struct PageParams {
    skip: Option<i64>,
    limit: Option<i64>,
}

/// Every invocation of the plugin, newest first: hook, decision, duration, error.
#[utoipa::path(
    get, path = "/api/v1/plugins/{id}/invocations", tag = "plugins", params(("id" = String, Path), PageParams),
    security(("MasterAppID" = ["PLUGIN_GET"])),
    responses((status = 200, body = InvocationsResponse), (status = 401), (status = 403), (status = 404))
)]
async fn invocations(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<ApiJson<InvocationsResponse>> {
    let page = Page::parse(q.skip, q.limit).map_err(ApiError::validation)?;
    let (rows, page_info) = state
        .services
        .plugins
        .invocations(&caller, &id, page)
        .await?;
    Ok(ApiJson(InvocationsResponse {
        invocations: rows
            .into_iter()
            .map(|r| InvocationDto {
                id: r.id,
                hook: r.hook,
                decision: r.decision,
                code: r.code,
                duration_us: r.duration_us,
                error: r.error,
                time: rfc3339(r.at),
            })
            .collect(),
        page_info,
    }))
}
