//! AppID authentication and authorisation of `/api/v1` routes.
//!
//! Each route declares who may call it in its `#[utoipa::path(security(...))]`: `()`
//! for public routes, `("AppID" = [scopes])` for any application holding the scopes,
//! `("MasterAppID" = [scopes])` for MASTER applications only. The OpenAPI document is
//! therefore the single list of route policies: [`Policies::from_openapi`] reads it at
//! start, [`authorize`] enforces it, and a route that declares nothing cannot start.
//!
//! Refusals come in CONTRACT.md's order: 401 -> 429 -> 403 IP -> 403 MASTER -> 403 scope.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::AppState;
use super::error::ApiError;
use crate::config::{RateLimit, RateLimitStore};
use crate::service::applications::{AuthError, Caller};
use crate::service::scopes::{self, Scope};
use crate::store::rate_buckets::{self, Take};
use crate::store::{Backend, Store, now_millis};

pub const APP_ID_SCHEME: &str = "AppID";
pub const MASTER_SCHEME: &str = "MasterAppID";

/// Who may call one route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    Public,
    Application {
        master: bool,
        scopes: Vec<&'static Scope>,
    },
}

/// Route policies by method and path template (`/api/v1/account/{accountId}`).
#[derive(Clone, Debug, Default)]
pub struct Policies(HashMap<(Method, String), Policy>);

impl Policies {
    /// Reads every operation's `security` from the OpenAPI document. An `/api/v1`
    /// operation without one, or naming an unknown scope, is an error.
    pub fn from_openapi(doc: &serde_json::Value) -> anyhow::Result<Self> {
        let mut map = HashMap::new();
        let paths = doc["paths"]
            .as_object()
            .ok_or_else(|| anyhow::anyhow!("no paths"))?;
        for (path, item) in paths {
            for (method, op) in item.as_object().into_iter().flatten() {
                let Ok(method) = method.to_ascii_uppercase().parse::<Method>() else {
                    continue;
                };
                let security = op["security"]
                    .as_array()
                    .ok_or_else(|| anyhow::anyhow!("{method} {path} declares no security"))?;
                let policy = match security.as_slice() {
                    [req] if req.as_object().is_some_and(|o| o.is_empty()) => Policy::Public,
                    [req] => {
                        let (scheme, names) = req
                            .as_object()
                            .and_then(|o| o.iter().next())
                            .ok_or_else(|| anyhow::anyhow!("{method} {path}: bad security"))?;
                        let master = match scheme.as_str() {
                            APP_ID_SCHEME => false,
                            MASTER_SCHEME => true,
                            other => anyhow::bail!("{method} {path}: unknown scheme {other}"),
                        };
                        let scopes = names
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|n| {
                                let n = n.as_str().unwrap_or_default();
                                scopes::find(n).ok_or_else(|| {
                                    anyhow::anyhow!("{method} {path}: unknown scope {n}")
                                })
                            })
                            .collect::<anyhow::Result<Vec<_>>>()?;
                        Policy::Application { master, scopes }
                    }
                    _ => {
                        anyhow::bail!("{method} {path}: exactly one security requirement expected")
                    }
                };
                map.insert((method, path.clone()), policy);
            }
        }
        Ok(Self(map))
    }

    pub fn get(&self, method: &Method, path: &str) -> Option<&Policy> {
        self.0.get(&(method.clone(), path.to_owned()))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&(Method, String), &Policy)> {
        self.0.iter()
    }
}

/// Per-AppID token bucket: in this process, or in the database shared by every process
/// on it (`rate_limit.store`).
#[derive(Clone)]
pub enum RateLimiter {
    Memory(Arc<DefaultKeyedRateLimiter<String>>),
    /// The shared bucket, behind this process's own: a process that alone has gone
    /// over the limit answers 429 without touching the database, so a flood costs the
    /// database at most the limit's rate per process, not one write per request.
    Database {
        local: Arc<DefaultKeyedRateLimiter<String>>,
        store: Store,
        per_second: i64,
        burst: i64,
    },
}

impl RateLimiter {
    pub fn new(settings: &RateLimit, store: &Store) -> Self {
        let shared = match settings.store {
            RateLimitStore::Memory => false,
            RateLimitStore::Database => true,
            RateLimitStore::Auto => store.backend() == Backend::Postgres,
        };
        let per_second = settings.per_second.max(1);
        let burst = settings.burst.max(1);
        let quota = Quota::per_second(NonZeroU32::new(per_second).expect("max(1) is not zero"))
            .allow_burst(NonZeroU32::new(burst).expect("max(1) is not zero"));
        let local = Arc::new(governor::RateLimiter::keyed(quota));
        if shared {
            return Self::Database {
                local,
                store: store.clone(),
                per_second: per_second.into(),
                burst: burst.into(),
            };
        }
        Self::Memory(local)
    }

    /// `Err` with the seconds to wait when the bucket of `key` is empty.
    pub async fn check(&self, key: &str) -> Result<(), ApiError> {
        let local = |limiter: &DefaultKeyedRateLimiter<String>| {
            limiter.check_key(&key.to_owned()).map_err(|not_until| {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                ApiError::too_many_requests(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
            })
        };
        match self {
            Self::Memory(limiter) => local(limiter),
            Self::Database {
                local: limiter,
                store,
                per_second,
                burst,
            } => {
                local(limiter)?;
                let take = rate_buckets::take(store.pool(), key, *per_second, *burst, now_millis())
                    .await
                    .map_err(|err| ApiError::internal(format!("rate limit: {err}")))?;
                match take {
                    Take::Admitted => Ok(()),
                    Take::Refused { wait_ms } => Err(ApiError::too_many_requests(
                        u64::try_from(wait_ms.max(1)).unwrap_or(1).div_ceil(1000),
                    )),
                }
            }
        }
    }
}

/// The address of the client: the socket peer, or the first `X-Forwarded-For` hop when
/// the settings say a trusted proxy is in front.
fn client_ip(req: &Request, trust_forwarded_for: bool) -> Option<IpAddr> {
    if trust_forwarded_for {
        let forwarded = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.trim().parse().ok());
        if forwarded.is_some() {
            return forwarded;
        }
    }
    req.extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// Middleware over the API routes: applies the route's policy and leaves the
/// [`Caller`] in the request for the handler.
pub async fn authorize(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let Some(path) = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
    else {
        return next.run(req).await;
    };
    let policy = match state.policies.get(req.method(), &path) {
        Some(policy) => policy.clone(),
        None => return next.run(req).await,
    };
    let Policy::Application { master, scopes } = policy else {
        return next.run(req).await;
    };
    // Request bodies are not `Sync`: take what the checks need before awaiting.
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("\u{0}").to_owned());
    let ip = client_ip(&req, state.settings.server.trust_forwarded_for);
    match admit(&state, authorization.as_deref(), ip, master, &scopes).await {
        Ok(caller) => {
            tracing::Span::current().record("application_id", caller.application_id.as_str());
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(err) => err.into_response(),
    }
}

async fn admit(
    state: &AppState,
    authorization: Option<&str>,
    ip: Option<IpAddr>,
    master: bool,
    scopes: &[&'static Scope],
) -> Result<Caller, ApiError> {
    let caller = state
        .services
        .applications
        .authenticate(authorization)
        .await?;
    state.rate_limiter.check(&caller.application_id).await?;
    match ip {
        Some(ip) => caller.check_ip(ip)?,
        None if caller.allowed_ips.is_empty() => {}
        None => return Err(AuthError::IpNotAllowed.into()),
    }
    if master {
        caller.require_master()?;
    }
    for scope in scopes {
        caller.require_scope(scope)?;
    }
    Ok(caller)
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError::internal("handler needs a Caller but its route is public"))
    }
}
