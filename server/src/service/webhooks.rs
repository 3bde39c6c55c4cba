//! Webhooks: registration, and at-least-once delivery of the outbox's events, signed,
//! retried after 10·2^n seconds up to 8 attempts, every attempt recorded.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::events;
use super::plugins::Plugins;
use super::signing::Signer;
use super::{FieldError, Page, PageInfo, Problem, Validation};
use crate::store::{
    self, Store, StoreError,
    events::{AttemptRow, DeliveryRow, DueDelivery, Outcome, WebhookRow},
};

/// Attempts before a delivery is given up (then only a manual resend sends it).
pub const MAX_ATTEMPTS: i64 = 8;

/// Seconds before attempt `n + 1` after `n` failed ones: 10, 20, 40 ... 1280.
pub fn retry_delay_secs(failed_attempts: i64) -> i64 {
    10 * (1_i64 << (failed_attempts - 1).clamp(0, 20))
}

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("the webhook URL points to a private or loopback address")]
    UrlNotAllowed,
    #[error("webhook not found")]
    NotFound,
    #[error("delivery not found")]
    DeliveryNotFound,
    #[error("application not found")]
    ApplicationNotFound,
    #[error("only a MASTER application may subscribe to onboarding events")]
    MasterRequired,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for WebhookError {
    fn from(err: StoreError) -> Self {
        WebhookError::Store(err)
    }
}

#[derive(Clone, Debug, Default)]
pub struct NewWebhook {
    pub name: Option<String>,
    pub event: Option<String>,
    pub url: Option<String>,
    pub authorization: Option<String>,
    pub is_active: Option<bool>,
    pub headers: Option<serde_json::Map<String, Value>>,
    /// The clientId of the application whose charges payloads should name.
    pub application_client_id: Option<String>,
}

/// A delivery with its attempts.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub row: DeliveryRow,
    pub attempts: Vec<AttemptRow>,
}

fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

/// Whether every address `url`'s host resolves to is public.
async fn destination_allowed(url: &url::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let port = url.port_or_known_default().unwrap_or(443);
    match tokio::net::lookup_host((host.trim_start_matches('[').trim_end_matches(']'), port)).await
    {
        Ok(addrs) => {
            let addrs: Vec<_> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| !is_private(a.ip()))
        }
        Err(_) => false,
    }
}

/// One attempt's outcome, recorded with the rest of its round.
struct AttemptRecord {
    delivery_id: String,
    attempt: i64,
    status_code: Option<i64>,
    latency_ms: i64,
    error: Option<String>,
    at: i64,
    outcome: Outcome,
}

#[derive(Clone, Debug)]
pub struct Webhooks {
    store: Store,
    clock: SharedClock,
    signer: Signer,
    http: reqwest::Client,
    plugins: Plugins,
    timeout: Duration,
    allow_private_networks: bool,
}

impl Webhooks {
    pub fn new(
        store: Store,
        clock: SharedClock,
        allow_private_networks: bool,
        timeout: Duration,
        plugins: Plugins,
    ) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(64)
            .build()
            .expect("an HTTP client with default TLS-less settings builds");
        Self {
            plugins,
            signer: Signer::new(store.clone()),
            store,
            clock,
            http,
            timeout,
            allow_private_networks,
        }
    }

    pub fn signer(&self) -> &Signer {
        &self.signer
    }

    #[instrument(name = "service.webhooks.create", skip_all, fields(company_id = %caller.company_id))]
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewWebhook,
    ) -> Result<WebhookRow, WebhookError> {
        if new
            .event
            .as_deref()
            .is_some_and(|e| events::is_master_only(e.trim()))
            && !caller.is_master()
        {
            return Err(WebhookError::MasterRequired);
        }
        let mut v = Validation::default();
        let name = v.text("webhook.name", new.name.as_deref(), 100);
        let event = v.text("webhook.event", new.event.as_deref(), 100);
        if !event.is_empty() && !events::is_known(&event) {
            v.add("webhook.event", Problem::UnknownValue);
        }
        let url_text = v.text("webhook.url", new.url.as_deref(), 2000);
        let url = url::Url::parse(&url_text)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
        if !url_text.is_empty() && url.is_none() {
            v.add("webhook.url", Problem::Invalid);
        }
        let authorization = new
            .authorization
            .map(|a| a.trim().to_owned())
            .filter(|a| !a.is_empty());
        if authorization
            .as_ref()
            .is_some_and(|a| a.len() > 1000 || a.chars().any(char::is_control))
        {
            v.add("webhook.authorization", Problem::Invalid);
        }
        let mut headers = serde_json::Map::new();
        for (k, value) in new.headers.unwrap_or_default() {
            let valid_name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_ok()
                && ![
                    "authorization",
                    "content-type",
                    "content-length",
                    "host",
                    "x-webhook-signature",
                ]
                .contains(&k.to_ascii_lowercase().as_str());
            match value.as_str() {
                Some(text)
                    if valid_name && reqwest::header::HeaderValue::from_str(text).is_ok() =>
                {
                    headers.insert(k, Value::String(text.to_owned()));
                }
                _ => v.add(format!("webhook.headers.{k}"), Problem::Invalid),
            }
        }
        v.finish().map_err(WebhookError::Validation)?;
        let url = url.expect("validated above");
        if !self.allow_private_networks && !destination_allowed(&url).await {
            return Err(WebhookError::UrlNotAllowed);
        }
        let application_id = match new
            .application_client_id
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            Some(client_id) => Some(
                store::applications::find_by_client_id(self.store.pool(), client_id)
                    .await?
                    .filter(|a| a.company_id == caller.company_id)
                    .ok_or(WebhookError::ApplicationNotFound)?
                    .id,
            ),
            None => None,
        };
        let now = self.clock.now_millis();
        let row = WebhookRow {
            id: store::new_id("whk"),
            company_id: caller.company_id.clone(),
            application_id,
            name,
            event,
            url: url.to_string(),
            authorization,
            headers: Value::Object(headers).to_string(),
            is_active: new.is_active.unwrap_or(true),
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.store.begin().await?;
        store::events::insert_webhook(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(row)
    }

    pub async fn list(
        &self,
        caller: &Caller,
        url: Option<&str>,
        page: Page,
    ) -> Result<(Vec<WebhookRow>, PageInfo), WebhookError> {
        let (rows, total) = store::events::list_webhooks(
            self.store.pool(),
            &caller.company_id,
            url.unwrap_or_default(),
            page.skip,
            page.limit,
        )
        .await?;
        Ok((rows, page.info(total)))
    }

    async fn own(&self, caller: &Caller, id: &str) -> Result<WebhookRow, WebhookError> {
        match store::events::get_webhook(self.store.pool(), id).await {
            Ok(w) if w.company_id == caller.company_id => Ok(w),
            Ok(_) | Err(StoreError::NotFound) => Err(WebhookError::NotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a webhook: from the commit on, none of its deliveries is sent.
    pub async fn delete(&self, caller: &Caller, id: &str) -> Result<(), WebhookError> {
        self.own(caller, id).await?;
        let mut tx = self.store.begin().await?;
        store::events::delete_webhook(&mut tx, id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => WebhookError::NotFound,
                other => other.into(),
            })?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }

    pub async fn deliveries(
        &self,
        caller: &Caller,
        webhook_id: &str,
        page: Page,
    ) -> Result<(Vec<Delivery>, PageInfo), WebhookError> {
        self.own(caller, webhook_id).await?;
        let (rows, total) =
            store::events::list_deliveries(self.store.pool(), webhook_id, page.skip, page.limit)
                .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let attempts = store::events::attempts(self.store.pool(), &row.id).await?;
            out.push(Delivery { row, attempts });
        }
        Ok((out, page.info(total)))
    }

    /// Makes a delivery due again now. `company_id` `None`: any company (the CLI).
    pub async fn resend(
        &self,
        company_id: Option<&str>,
        delivery_id: &str,
    ) -> Result<Delivery, WebhookError> {
        let row = store::events::get_delivery(self.store.pool(), delivery_id)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => WebhookError::DeliveryNotFound,
                other => other.into(),
            })?;
        if company_id.is_some_and(|c| c != row.company_id) {
            return Err(WebhookError::DeliveryNotFound);
        }
        let mut tx = self.store.begin().await?;
        store::events::resend(&mut tx, delivery_id, self.clock.now_millis())
            .await
            .map_err(|e| match e {
                StoreError::NotFound => WebhookError::DeliveryNotFound,
                other => other.into(),
            })?;
        tx.commit().await.map_err(StoreError::from)?;
        let row = store::events::get_delivery(self.store.pool(), delivery_id).await?;
        let attempts = store::events::attempts(self.store.pool(), delivery_id).await?;
        Ok(Delivery { row, attempts })
    }

    /// Claims and sends up to `limit` due deliveries, concurrently; answers how many it
    /// attempted. The background workers call this in a loop; tests call it directly.
    pub async fn deliver_due(&self, limit: i64) -> Result<usize, StoreError> {
        let now = self.clock.now_millis();
        // A claim outlives the slowest attempt, so a crashed worker's deliveries are
        // taken over later and a live worker's are never taken twice.
        let lease = (self.timeout.as_millis() * 3 + 1_000) as i64;
        let mut tx = self.store.begin().await?;
        let due =
            store::events::claim_due(&mut tx, self.store.backend(), now, lease, limit).await?;
        tx.commit().await.map_err(StoreError::from)?;
        let count = due.len();
        let results =
            futures_util::future::join_all(due.into_iter().map(|d| self.attempt(d))).await;
        // One commit records the whole round: a crash before it only means these
        // deliveries are sent again after their lease (at least once, never lost).
        let mut tx = self.store.begin().await?;
        for attempt in results {
            let a = match attempt {
                Ok(a) => a,
                Err(err) => {
                    tracing::warn!(%err, "a delivery attempt could not be made");
                    continue;
                }
            };
            store::events::record_attempt(
                &mut tx,
                &a.delivery_id,
                a.attempt,
                a.status_code,
                a.latency_ms,
                a.error.as_deref(),
                a.at,
                a.outcome,
            )
            .await?;
            metrics::counter!("cofre_webhook_attempts_total", "outcome" => match a.outcome {
                Outcome::Delivered => "delivered",
                Outcome::Retry { .. } => "retry",
                Outcome::GaveUp => "failed",
                Outcome::Dropped => "dropped",
            })
            .increment(1);
        }
        tx.commit().await.map_err(StoreError::from)?;
        Ok(count)
    }

    async fn payload_for(&self, d: &DueDelivery) -> Result<Vec<u8>, StoreError> {
        if d.webhook.application_id.is_none() {
            return Ok(d.payload.clone().into_bytes());
        }
        // A webhook linked to an application names the application that originated
        // the charge.
        let mut payload: Value =
            serde_json::from_str(&d.payload).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        if let (Value::Object(map), Some(app_id)) = (&mut payload, &d.application_id)
            && let Ok(app) = store::applications::get(self.store.pool(), app_id).await
        {
            map.insert(
                "application".into(),
                serde_json::json!({"name": app.name, "clientId": app.client_id, "type": app.kind}),
            );
        }
        Ok(payload.to_string().into_bytes())
    }

    #[instrument(name = "service.webhooks.attempt", skip_all, fields(delivery_id = %d.id, attempt = d.attempts + 1))]
    async fn attempt(&self, d: DueDelivery) -> Result<AttemptRecord, StoreError> {
        let attempt = d.attempts + 1;
        let body = self.payload_for(&d).await?;
        // Company rules may add to the payload or decide not to send it.
        let shaped = self
            .plugins
            .shape_webhook(
                &d.webhook.company_id,
                cofre_plugin_host::OutgoingEvent {
                    now_ms: self.clock.now_millis(),
                    event: d.event.clone(),
                    payload: String::from_utf8_lossy(&body).into_owned(),
                },
            )
            .await;
        let Some(body) = shaped.map(String::into_bytes) else {
            return Ok(AttemptRecord {
                delivery_id: d.id,
                attempt,
                status_code: None,
                latency_ms: 0,
                error: Some("not sent: a company rule dropped the event".into()),
                at: self.clock.now_millis(),
                outcome: Outcome::Dropped,
            });
        };
        let (key_id, signature) = self.signer.sign(&body, self.clock.now_millis()).await?;
        let started = Instant::now();
        let url =
            url::Url::parse(&d.webhook.url).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let result = if !self.allow_private_networks && !destination_allowed(&url).await {
            Err("destination is a private or loopback address".to_owned())
        } else {
            let mut request = self
                .http
                .post(url)
                .header("content-type", "application/json")
                .header("x-webhook-signature", signature)
                .header("x-webhook-key-id", key_id)
                .header("x-event-id", &d.event_id)
                .body(body);
            if let Some(auth) = &d.webhook.authorization {
                request = request.header("authorization", auth);
            }
            let headers: serde_json::Map<String, Value> =
                serde_json::from_str(&d.webhook.headers).unwrap_or_default();
            for (k, v) in headers {
                if let Some(v) = v.as_str() {
                    request = request.header(k, v);
                }
            }
            match request.send().await {
                Ok(response) => Ok(response.status().as_u16()),
                Err(e) if e.is_timeout() => Err("timed out".to_owned()),
                Err(e) => Err(format!("unreachable: {e}")),
            }
        };
        let latency_ms = started.elapsed().as_millis() as i64;
        let now = self.clock.now_millis();
        let (status_code, error) = match &result {
            Ok(code) if *code < 400 => (Some(i64::from(*code)), None),
            Ok(code) => (Some(i64::from(*code)), Some(format!("answered {code}"))),
            Err(e) => (None, Some(e.clone())),
        };
        let outcome = match (&error, attempt >= MAX_ATTEMPTS) {
            (None, _) => Outcome::Delivered,
            (Some(_), true) => Outcome::GaveUp,
            (Some(_), false) => Outcome::Retry {
                at: now + retry_delay_secs(attempt) * 1000,
            },
        };
        Ok(AttemptRecord {
            delivery_id: d.id,
            attempt,
            status_code,
            latency_ms,
            error,
            at: now,
            outcome,
        })
    }

    /// The delivery loop of one process: `workers` deliveries in flight at most.
    pub async fn run(self, workers: usize, poll: Duration) {
        loop {
            match self.deliver_due(workers as i64).await {
                Ok(0) => tokio::time::sleep(poll).await,
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!(%err, "webhook delivery round failed");
                    tokio::time::sleep(poll).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_ten_seconds() {
        let delays: Vec<i64> = (1..=7).map(retry_delay_secs).collect();
        assert_eq!(delays, [10, 20, 40, 80, 160, 320, 640]);
        assert_eq!(retry_delay_secs(8), 1280);
    }

    #[test]
    fn private_and_loopback_addresses_are_recognised() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.4",
            "169.254.1.1",
            "::1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "2001:4860:4860::8888"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }
}
