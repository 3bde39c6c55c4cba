//! `cofre bench campaign`: throughput and latency of the campaign endpoints against a
//! running Cofre, beside a bare axum endpoint answering fixed JSON in the same process
//! (the HTTP ceiling of this machine), as ratios. A benchmark, not a test: it asserts
//! nothing but that every request succeeded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::config::Settings;
use crate::service::applications::NewApplication;
use crate::service::companies::NewCompany;
use crate::service::tax_id::cnpj_check_digits;

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub clients: usize,
    pub requests: usize,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpResult {
    pub operation: String,
    pub requests: usize,
    pub requests_per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Requests/s as a share of the bare endpoint's.
    pub ratio_to_ceiling: f64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    pub database: String,
    pub clients: usize,
    pub ceiling: OpResult,
    pub operations: Vec<OpResult>,
}

/// A random valid CNPJ, so that repeated runs on one database never collide.
fn random_cnpj() -> String {
    use rand::Rng;
    let base: String = (0..12)
        .map(|_| char::from(b'0' + rand::thread_rng().gen_range(0..10)))
        .collect();
    let [a, b] = cnpj_check_digits(&base).expect("12 digits");
    format!("{base}{a}{b}")
}

/// Sends `total` requests from `clients` concurrent clients; `request(i)` builds the
/// i-th. Answers requests/s and the latency percentiles.
async fn drive<F>(name: &str, clients: usize, total: usize, request: F) -> anyhow::Result<OpResult>
where
    F: Fn(usize) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::with_capacity(clients);
    for _ in 0..clients {
        let request = request.clone();
        let next = next.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return Ok::<_, anyhow::Error>(latencies);
                }
                let t = Instant::now();
                let response = request(i).send().await?;
                let status = response.status();
                response.bytes().await?;
                anyhow::ensure!(status.is_success(), "request {i} answered {status}");
                latencies.push(t.elapsed());
            }
        }));
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(total);
    for worker in workers {
        latencies.extend(worker.await??);
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let pct = |p: f64| {
        latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)].as_secs_f64()
            * 1e3
    };
    Ok(OpResult {
        operation: name.to_owned(),
        requests: total,
        requests_per_second: total as f64 / elapsed.as_secs_f64(),
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        ratio_to_ceiling: 0.0,
    })
}

/// Starts Cofre on `settings` (rate limit lifted: the bench measures the endpoints, not
/// the limiter) and a bare axum endpoint, then drives both.
pub async fn campaign(
    mut settings: Settings,
    options: BenchOptions,
) -> anyhow::Result<BenchReport> {
    settings.server.bind = "127.0.0.1:0".into();
    settings.rate_limit.per_second = 1_000_000;
    settings.rate_limit.burst = 1_000_000;
    let database = crate::store::redact(&settings.database.url);
    let running = crate::start(settings).await?;
    let base = format!("http://{}", running.addr);
    let services = running.state.services.clone();

    // The HTTP ceiling: the same server stack's transport with no work behind it.
    let bare = axum::Router::new().route(
        "/fixed",
        axum::routing::get(|| async {
            axum::Json(serde_json::json!({"pixKeys": [{"key": "a@b.com", "type": "EMAIL"}]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let bare_addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, bare).await });

    // One BaaS company; one campaign (account + AppID) per 20 keys to create.
    let company = services
        .companies
        .create(NewCompany {
            name: "Bench".into(),
            tax_id: random_cnpj(),
            baas: true,
            admin_email: format!("bench-{}@cofre.dev", uuid::Uuid::new_v4().simple()),
            admin_password: "bench-password".into(),
        })
        .await
        .context("creating the bench company")?
        .company;
    let master = services
        .applications
        .create(
            &company,
            NewApplication {
                name: Some("bench".into()),
                kind: Some("MASTER".into()),
                ..Default::default()
            },
        )
        .await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(options.clients * 2)
        .build()?;
    let campaigns = options
        .requests
        .div_ceil(crate::service::pix_keys::MAX_KEYS_PER_ACCOUNT as usize);
    let mut app_ids = Vec::with_capacity(campaigns);
    for _ in 0..campaigns {
        let account: serde_json::Value = client
            .post(format!("{base}/api/v1/account"))
            .header("authorization", &master.app_id)
            .send()
            .await?
            .json()
            .await?;
        let account_id = account["account"]["accountId"]
            .as_str()
            .context("account created")?
            .to_owned();
        let app = services
            .applications
            .create(
                &company,
                NewApplication {
                    name: Some("campaign".into()),
                    kind: Some("API".into()),
                    account_id: Some(account_id),
                    ..Default::default()
                },
            )
            .await?;
        app_ids.push(app.app_id);
    }
    let app_ids = Arc::new(app_ids);
    let keys: Arc<Vec<String>> = Arc::new(
        (0..options.requests)
            .map(|i| format!("k{i}-{}@bench.cofre.dev", uuid::Uuid::new_v4().simple()))
            .collect(),
    );

    let clients = options.clients;
    let total = options.requests;
    let c = client.clone();
    let ceiling = drive("bare axum JSON", clients, total, move |_| {
        c.get(format!("http://{bare_addr}/fixed"))
    })
    .await?;

    let (c, ids, k, b) = (client.clone(), app_ids.clone(), keys.clone(), base.clone());
    let create = drive(
        "create-key (POST /api/v1/pix-keys)",
        clients,
        total,
        move |i| {
            c.post(format!("{b}/api/v1/pix-keys"))
                .header("authorization", &ids[i / 20])
                .json(&serde_json::json!({"type": "EMAIL", "pixKey": k[i]}))
        },
    )
    .await?;
    let (c, ids, b) = (client.clone(), app_ids.clone(), base.clone());
    let list = drive(
        "list-keys (GET /api/v1/pix-keys)",
        clients,
        total,
        move |i| {
            c.get(format!("{b}/api/v1/pix-keys"))
                .header("authorization", &ids[i % ids.len()])
        },
    )
    .await?;
    // Lookups of Cofre's own keys cost no tokens, so the bucket never refuses the run;
    // they still lock and update the holder's bucket row like any lookup.
    let (c, ids, k, b) = (client.clone(), app_ids.clone(), keys.clone(), base.clone());
    let check = drive(
        "check-key (POST /api/v1/pix-keys/check)",
        clients,
        total,
        move |i| {
            c.post(format!("{b}/api/v1/pix-keys/check"))
                .header("authorization", &ids[i % ids.len()])
                .json(&serde_json::json!({"pixKey": k[i]}))
        },
    )
    .await?;

    let operations = [create, list, check]
        .into_iter()
        .map(|mut op| {
            op.ratio_to_ceiling = op.requests_per_second / ceiling.requests_per_second;
            op
        })
        .collect();
    running.task.abort();
    Ok(BenchReport {
        database,
        clients,
        ceiling: OpResult {
            ratio_to_ceiling: 1.0,
            ..ceiling
        },
        operations,
    })
}

impl BenchReport {
    pub fn table(&self) -> String {
        let mut out = format!(
            "database {} · {} concurrent clients\n",
            self.database, self.clients
        );
        out.push_str(&format!(
            "{:<42} {:>9} {:>11} {:>9} {:>9} {:>9}\n",
            "operation", "requests", "requests/s", "p50 ms", "p99 ms", "ratio"
        ));
        for op in std::iter::once(&self.ceiling).chain(&self.operations) {
            out.push_str(&format!(
                "{:<42} {:>9} {:>11.0} {:>9.2} {:>9.2} {:>8.1}%\n",
                op.operation,
                op.requests,
                op.requests_per_second,
                op.p50_ms,
                op.p99_ms,
                op.ratio_to_ceiling * 100.0
            ));
        }
        out
    }
}
