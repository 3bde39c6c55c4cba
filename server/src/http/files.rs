//! `/api/v1/files`: multipart uploads streamed into the object store, file metadata,
//! and downloads through signed, expiring links.

use axum::body::Body;
use axum::extract::multipart::{Field, MultipartError, MultipartRejection};
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ApiResult};
use super::json::{ApiJson, ApiPath, ApiQuery};
use super::{AppState, rfc3339};
use crate::service::applications::Caller;
use crate::service::files::{BodyError, Received};
use crate::service::{FieldError, Problem};
use crate::store::files::FileRow;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upload))
        // The files service bounds the body itself (it streams, counts and drains).
        .layer(DefaultBodyLimit::disable())
        .routes(routes!(get_one))
        .routes(routes!(content))
}

/// A stored file; `id` is what consumers take as `fileId`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDto {
    id: String,
    /// ACCOUNT_REGISTER_DOCUMENT, DISPUTE_EVIDENCE, LIMIT_INCREASE_REQUEST or KYC_DOCUMENT.
    purpose: String,
    name: String,
    /// Read from the bytes: application/pdf, image/png or image/jpeg.
    content_type: String,
    size: i64,
    sha256: String,
    #[serde(rename = "correlationID")]
    correlation_id: Option<String>,
    created_at: String,
}

impl From<FileRow> for FileDto {
    fn from(f: FileRow) -> Self {
        Self {
            id: f.id,
            purpose: f.purpose,
            name: f.name,
            content_type: f.content_type,
            size: f.size,
            sha256: f.sha256,
            correlation_id: f.correlation_id,
            created_at: rfc3339(f.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct FileResponse {
    file: FileDto,
    /// A temporary download link (15 minutes by default); never store it.
    url: String,
}

/// The multipart form of an upload (for the OpenAPI document).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    purpose: String,
    #[schema(rename = "correlationID")]
    correlation_id: Option<String>,
}

/// At most this many parts in an upload, and this many bytes in a text part.
const MAX_PARTS: usize = 8;
const MAX_TEXT: usize = 256;

fn invalid(reason: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "MULTIPART_INVALID").with_arg(reason)
}

fn body_error(err: &MultipartError) -> BodyError {
    if err.status() == StatusCode::PAYLOAD_TOO_LARGE {
        BodyError::TooLarge
    } else {
        BodyError::Broken
    }
}

/// A short text part (`purpose`, `correlationID`), read within [`MAX_TEXT`] bytes.
async fn small_text(mut field: Field<'_>, name: &str) -> ApiResult<String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|_| invalid("broken part"))? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_TEXT {
            return Err(ApiError::validation(vec![FieldError::new(
                name,
                Problem::TooLong { max: MAX_TEXT },
            )]));
        }
    }
    String::from_utf8(bytes)
        .map_err(|_| ApiError::validation(vec![FieldError::new(name, Problem::Invalid)]))
}

/// Reads every part: the file streams into the object store as it arrives, the text
/// parts are kept. On any failure the received file is discarded.
async fn read_form(
    state: &AppState,
    caller: &Caller,
    multipart: &mut Multipart,
    form: &mut (Option<String>, Option<String>, Option<Received>),
) -> ApiResult<()> {
    let mut parts = 0;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|_| invalid("malformed multipart body"))?
    {
        parts += 1;
        if parts > MAX_PARTS {
            return Err(invalid("too many parts"));
        }
        match field.name().unwrap_or_default() {
            "file" if form.2.is_none() => {
                let name = field.file_name().map(str::to_owned);
                let body = field.map(|chunk| chunk.map_err(|e| body_error(&e)));
                let received = state
                    .services
                    .files
                    .receive(caller, name.as_deref(), Box::pin(body))
                    .await?;
                form.2 = Some(received);
            }
            "file" => return Err(invalid("more than one file part")),
            "purpose" => form.0 = Some(small_text(field, "purpose").await?),
            "correlationID" => form.1 = Some(small_text(field, "correlationID").await?),
            other => return Err(invalid(&format!("unknown part {other:?}"))),
        }
    }
    Ok(())
}

/// Uploads a file (multipart `file`, `purpose`, optional `correlationID`). The kind is
/// read from the bytes: a whole PDF, PNG or JPEG, else 422. The same correlationID with
/// the same file and purpose answers 200 with the first upload.
#[utoipa::path(
    post, path = "/api/v1/files", tag = "file",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    security(("AppID" = ["FILE_POST"])),
    responses(
        (status = 201, body = FileResponse), (status = 200, body = FileResponse, description = "same correlationID"),
        (status = 400, description = "VALIDATION_ERROR, MULTIPART_INVALID"),
        (status = 401), (status = 403), (status = 409, description = "CORRELATION_ID_CONFLICT"),
        (status = 413, description = "FILE_TOO_LARGE (10 MiB by default)"),
        (status = 415, description = "MULTIPART_REQUIRED"),
        (status = 422, description = "FILE_UNREADABLE: not a whole PDF, PNG or JPEG"),
    )
)]
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    multipart: Result<Multipart, MultipartRejection>,
) -> ApiResult<(StatusCode, ApiJson<FileResponse>)> {
    let mut multipart = multipart
        .map_err(|_| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "MULTIPART_REQUIRED"))?;
    let files = &state.services.files;
    let mut form = (None, None, None);
    if let Err(err) = read_form(&state, &caller, &mut multipart, &mut form).await {
        if let Some(received) = form.2.take() {
            files.discard(received).await;
        }
        return Err(err);
    }
    let (purpose, correlation_id, received) = form;
    let uploaded = files
        .create(
            &caller,
            purpose.as_deref(),
            correlation_id.as_deref(),
            received,
        )
        .await?;
    let status = if uploaded.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, ApiJson(response(&state, uploaded.file).await?)))
}

async fn response(state: &AppState, file: FileRow) -> ApiResult<FileResponse> {
    let path = state.services.files.signed_path(&file.id).await?;
    Ok(FileResponse {
        url: format!("{}{path}", state.settings.public_url()),
        file: file.into(),
    })
}

/// A file of the caller's company, with a new download link.
#[utoipa::path(
    get, path = "/api/v1/files/{id}", tag = "file", params(("id" = String, Path)),
    security(("AppID" = ["FILE_GET"])),
    responses((status = 200, body = FileResponse), (status = 401), (status = 403), (status = 404))
)]
async fn get_one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<FileResponse>> {
    let file = state.services.files.get(&caller, &id).await?;
    Ok(ApiJson(response(&state, file).await?))
}

#[derive(Deserialize, IntoParams)]
pub struct LinkQuery {
    /// Unix seconds after which the link stops working.
    expires: Option<String>,
    /// Hex HMAC-SHA256 of the id and expiry.
    signature: Option<String>,
}

/// Downloads a file through the link an upload (or `GET /files/{id}`) answered. The
/// link is the credential: 403 `FILE_URL_EXPIRED` after its expiry, 403
/// `FILE_URL_INVALID` when any part of it was changed.
#[utoipa::path(
    get, path = "/api/v1/files/{id}/content", tag = "file",
    params(("id" = String, Path), LinkQuery),
    security(()),
    responses(
        (status = 200, description = "the file's bytes", content_type = "application/octet-stream"),
        (status = 403, description = "FILE_URL_EXPIRED, FILE_URL_INVALID"), (status = 404),
    )
)]
async fn content(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<LinkQuery>,
) -> ApiResult<Response> {
    let download = state
        .services
        .files
        .download(&id, q.expires.as_deref(), q.signature.as_deref())
        .await?;
    let ascii_name: String = download
        .file
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut response = Body::from_stream(download.body).into_response();
    let headers = response.headers_mut();
    let value = |v: &str| HeaderValue::from_str(v).map_err(ApiError::internal);
    headers.insert(header::CONTENT_TYPE, value(&download.file.content_type)?);
    headers.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(download.file.size.max(0) as u64),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        value(&format!("attachment; filename=\"{ascii_name}\""))?,
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(response)
}
