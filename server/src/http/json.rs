//! `ApiJson<T>`: the JSON body extractor of every handler. Every way a body can be
//! wrong answers a clear 4xx with a stable code, never a 500 or a panic.

use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::service::{FieldError, Problem};

/// JSON request body; also the JSON response wrapper (`IntoResponse`).
pub struct ApiJson<T>(pub T);

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| {
            m.type_() == "application"
                && (m.subtype() == "json" || m.suffix().is_some_and(|s| s == "json"))
        })
}

/// Reads the whole body within the router's size limit (413 past it).
async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "INVALID_JSON")
        }
    })
}

/// Parses `bytes` as `T`, naming the offending field of a wrongly typed value.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        match inner.classify() {
            serde_json::error::Category::Data => {
                let field = if path == "." { "body".to_owned() } else { path };
                ApiError::validation(vec![FieldError::new(field, Problem::Invalid)])
            }
            _ => ApiError::new(StatusCode::BAD_REQUEST, "INVALID_JSON"),
        }
    })
}

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(&req) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
            ));
        }
        let bytes = read_body(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// An optional JSON body: absent or empty is `None` (e.g. `POST /api/v1/account`).
pub struct OptionalJson<T>(pub Option<T>);

impl<S, T> FromRequest<S> for OptionalJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = is_json(&req);
        let bytes = read_body(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(None));
        }
        if !json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
            ));
        }
        parse_json(&bytes).map(|v| OptionalJson(Some(v)))
    }
}

impl<T: serde::Serialize> IntoResponse for ApiJson<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Query string extractor: a malformed value is 400 `VALIDATION_ERROR` naming the
/// parameter, like a body field.
pub struct ApiQuery<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|err| {
                let field = err.path().to_string();
                let field = if field == "." {
                    "query".to_owned()
                } else {
                    field
                };
                ApiError::validation(vec![FieldError::new(field, Problem::Invalid)])
            })
    }
}

/// Path parameters extractor: a parameter that is not UTF-8 once percent-decoded
/// (`/api/v1/charge/%FF`) is 400 `VALIDATION_ERROR` naming it, like a query parameter,
/// instead of axum's own `text/plain` rejection.
pub struct ApiPath<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        use axum::extract::path::{ErrorKind, Path};
        use axum::extract::rejection::PathRejection;

        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(PathRejection::FailedToDeserializePathParams(err)) => {
                let field = match err.kind() {
                    ErrorKind::InvalidUtf8InPathParam { key }
                    | ErrorKind::ParseErrorAtKey { key, .. } => key.clone(),
                    _ => "path".to_owned(),
                };
                Err(ApiError::validation(vec![FieldError::new(
                    field,
                    Problem::Invalid,
                )]))
            }
            // A handler asking for parameters its route does not have: a bug, not a
            // bad request.
            Err(other) => Err(ApiError::internal(other)),
        }
    }
}
