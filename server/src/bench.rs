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

/// A new BaaS company with a random CNPJ (so runs never collide) and its MASTER.
async fn bench_company(
    services: &crate::service::Services,
) -> anyhow::Result<(
    crate::service::companies::CreatedCompany,
    crate::service::applications::IssuedApplication,
)> {
    let created = services
        .companies
        .create(NewCompany {
            name: "Bench".into(),
            tax_id: random_cnpj(),
            baas: true,
            admin_email: format!("bench-{}@cofre.dev", uuid::Uuid::new_v4().simple()),
            admin_password: "bench-password".into(),
        })
        .await
        .context("creating the bench company")?;
    let master = services
        .applications
        .create(
            &created.company,
            NewApplication {
                name: Some("bench".into()),
                kind: Some("MASTER".into()),
                ..Default::default()
            },
        )
        .await?;
    Ok((created, master))
}

/// The `p`-th quantile (0..1) of sorted, non-empty latencies.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
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
    let pct = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e3;
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
    let (created, master) = bench_company(&services).await?;
    let company = created.company;
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

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PixInReport {
    pub database: String,
    pub clients: usize,
    /// `POST /api/v1/sandbox/pix` to one hot account through the whole stack.
    pub cofre: OpResult,
    /// What the ceiling is: pgbench's TPC-B-like script (Postgres) or the ledger
    /// statements run straight through sqlx (SQLite).
    pub ceiling_name: String,
    pub ceiling_per_second: f64,
    pub ratio: f64,
}

/// The ceiling on Postgres: pgbench's built-in TPC-B-like script (update balances,
/// insert a history row) with the same client count, on a scratch database of the same
/// server, scale 1 (one branch row: as hot as our one account).
async fn pgbench_ceiling(database_url: &str, clients: usize, seconds: u64) -> anyhow::Result<f64> {
    use sqlx::Connection;
    let mut admin_url = url::Url::parse(database_url)?;
    admin_url.set_path("/postgres");
    let scratch = format!("cofre_pgbench_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(admin_url.as_str()).await?;
    sqlx::query(&format!("CREATE DATABASE {scratch}"))
        .execute(&mut admin)
        .await?;
    let mut scratch_url = admin_url.clone();
    scratch_url.set_path(&format!("/{scratch}"));
    let run = async {
        let init = tokio::process::Command::new("pgbench")
            .args(["-i", "-s", "1", "-q", scratch_url.as_str()])
            .output()
            .await?;
        anyhow::ensure!(
            init.status.success(),
            "pgbench -i failed: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let out = tokio::process::Command::new("pgbench")
            .args([
                "-n",
                "-b",
                "tpcb-like",
                "-c",
                &clients.to_string(),
                "-j",
                "2",
                "-T",
                &seconds.to_string(),
                scratch_url.as_str(),
            ])
            .output()
            .await?;
        anyhow::ensure!(
            out.status.success(),
            "pgbench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find_map(|l| {
                l.strip_prefix("tps = ")
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.parse::<f64>().ok())
            })
            .ok_or_else(|| anyhow::anyhow!("no tps in pgbench output: {text}"))
    };
    let tps = run.await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {scratch}"))
        .execute(&mut admin)
        .await?;
    tps
}

/// The ceiling on SQLite: the same ledger statements a Pix in runs (insert the
/// transaction and its postings, update the balance, in one write transaction), straight
/// through sqlx from `clients` tasks, with no HTTP, authentication or lookups.
async fn sqlite_ceiling(
    store: &crate::store::Store,
    account_id: &str,
    company_id: &str,
    clients: usize,
    total: usize,
) -> anyhow::Result<f64> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let (store, next) = (store.clone(), next.clone());
        let (account_id, company_id) = (account_id.to_owned(), company_id.to_owned());
        workers.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let now = crate::store::now_millis();
                let mut tx = store.begin().await?;
                let row = crate::store::ledger::TransactionRow {
                    id: crate::store::new_id("txn"),
                    company_id: company_id.clone(),
                    account_id: account_id.clone(),
                    kind: "PIX_IN".into(),
                    value: 1,
                    end_to_end_id: crate::service::directory::new_end_to_end_id(now),
                    charge_id: None,
                    description: None,
                    counterparty: "{}".into(),
                    original_id: None,
                    correlation_id: None,
                    created_at: now,
                };
                let postings = [
                    (crate::store::ledger::available(&account_id), 1),
                    (crate::store::ledger::WORLD.to_owned(), -1),
                ];
                crate::store::ledger::post(&mut tx, &row, &postings, 1, 0).await?;
                tx.commit().await?;
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for w in workers {
        w.await??;
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

/// `cofre bench pix-in`: sandbox Pix in to one hot account with `clients` concurrent
/// clients, beside the database's own ceiling for the same kind of work.
pub async fn pix_in(
    mut settings: Settings,
    options: BenchOptions,
    ceiling_seconds: u64,
) -> anyhow::Result<PixInReport> {
    settings.server.bind = "127.0.0.1:0".into();
    settings.rate_limit.per_second = 1_000_000;
    settings.rate_limit.burst = 1_000_000;
    settings.sandbox.enabled = Some(true);
    let database_url = settings.database.url.clone();
    let database = crate::store::redact(&database_url);
    let running = crate::start(settings).await?;
    let base = format!("http://{}", running.addr);
    let services = running.state.services.clone();
    let (created, master) = bench_company(&services).await?;
    let key = format!("hot-{}@bench.cofre.dev", uuid::Uuid::new_v4().simple());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(options.clients * 2)
        .build()?;
    let made = client
        .post(format!("{base}/api/v1/pix-keys"))
        .header("authorization", &master.app_id)
        .json(&serde_json::json!({"type": "EMAIL", "pixKey": key}))
        .send()
        .await?;
    anyhow::ensure!(
        made.status().is_success(),
        "creating the hot key answered {}",
        made.status()
    );

    let (c, b, k, app_id) = (
        client.clone(),
        base.clone(),
        key.clone(),
        master.app_id.clone(),
    );
    let mut cofre = drive(
        "sandbox Pix in (POST /api/v1/sandbox/pix)",
        options.clients,
        options.requests,
        move |_| {
            c.post(format!("{b}/api/v1/sandbox/pix"))
                .header("authorization", &app_id)
                .json(&serde_json::json!({"pixKey": k, "value": 1}))
        },
    )
    .await?;
    let (ceiling_name, ceiling_per_second) = match services.store.backend() {
        crate::store::Backend::Postgres => (
            format!(
                "pgbench -b tpcb-like -s 1 -c {} -j 2 -T {ceiling_seconds}",
                options.clients
            ),
            pgbench_ceiling(&database_url, options.clients, ceiling_seconds).await?,
        ),
        crate::store::Backend::Sqlite => (
            format!("ledger statements through sqlx, {} tasks", options.clients),
            sqlite_ceiling(
                &services.store,
                &created.main_account_id,
                &created.company.id,
                options.clients,
                options.requests,
            )
            .await?,
        ),
    };
    running.task.abort();
    let ratio = cofre.requests_per_second / ceiling_per_second;
    cofre.ratio_to_ceiling = ratio;
    Ok(PixInReport {
        database,
        clients: options.clients,
        cofre,
        ceiling_name,
        ceiling_per_second,
        ratio,
    })
}

impl PixInReport {
    pub fn table(&self) -> String {
        format!(
            "database {} · {} concurrent clients\n{:<48} {:>10.0}/s  p50 {:.2} ms  p99 {:.2} ms\n{:<48} {:>10.0}/s\nratio {:.1} %\n",
            self.database,
            self.clients,
            self.cofre.operation,
            self.cofre.requests_per_second,
            self.cofre.p50_ms,
            self.cofre.p99_ms,
            self.ceiling_name,
            self.ceiling_per_second,
            self.ratio * 100.0
        )
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookReport {
    pub database: String,
    pub events: usize,
    /// Delivery loops running at once, each with `batch` deliveries in flight.
    pub loops: usize,
    pub batch: usize,
    pub seconds_to_drain: f64,
    pub deliveries_per_second: f64,
    /// RSA-2048 signatures per second on one core, measured alone.
    pub signatures_per_second_one_core: f64,
}

/// `cofre bench webhooks`: a backlog of `events` committed events, each with one
/// delivery to a local receiver that answers 200 at once, drained by `loops` delivery
/// loops of `batch` each; answers the time to drain and deliveries per second.
pub async fn webhooks(
    settings: Settings,
    events: usize,
    loops: usize,
    batch: usize,
) -> anyhow::Result<WebhookReport> {
    let database = crate::store::redact(&settings.database.url);
    let store = crate::store::Store::connect(&settings.database.url).await?;
    store.migrate().await?;
    let services = crate::service::Services::new(store.clone());
    let (created, master) = bench_company(&services).await?;
    let company = created.company;
    let caller = services
        .applications
        .authenticate(Some(&master.app_id))
        .await?;

    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver_url = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, receiver).await });
    let event = crate::service::events::TRANSACTION_RECEIVED;
    services
        .webhooks
        .create(
            &caller,
            crate::service::webhooks::NewWebhook {
                name: Some("bench".into()),
                event: Some(event.into()),
                url: Some(receiver_url),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;

    // The backlog: committed events, 1 000 per transaction.
    let now = crate::store::now_millis();
    for chunk in (0..events).collect::<Vec<_>>().chunks(1000) {
        let mut tx = store.begin().await?;
        for i in chunk {
            crate::service::events::emit(
                &mut tx,
                now,
                &company.id,
                None,
                event,
                serde_json::json!({"pix": {"value": i}}),
            )
            .await?;
        }
        tx.commit().await?;
    }
    // The signing key exists before the clock starts.
    services.webhooks.signer().current(now).await?;

    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..loops {
        let webhooks = services.webhooks.clone();
        workers.push(tokio::spawn(async move {
            loop {
                if webhooks.deliver_due(batch as i64).await? == 0 {
                    return Ok::<_, anyhow::Error>(());
                }
            }
        }));
    }
    for w in workers {
        w.await??;
    }
    let seconds = started.elapsed().as_secs_f64();
    anyhow::ensure!(
        received.load(Ordering::Relaxed) == events,
        "received {} of {events}",
        received.load(Ordering::Relaxed)
    );

    let key = crate::service::signing::generate(now)?;
    let sign_started = Instant::now();
    let samples = 200;
    for i in 0..samples {
        crate::service::signing::sign_with(
            &key.private_key_pem,
            format!("{{\"i\":{i}}}").as_bytes(),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
    }
    let signatures = samples as f64 / sign_started.elapsed().as_secs_f64();
    Ok(WebhookReport {
        database,
        events,
        loops,
        batch,
        seconds_to_drain: seconds,
        deliveries_per_second: events as f64 / seconds,
        signatures_per_second_one_core: signatures,
    })
}

impl WebhookReport {
    pub fn table(&self) -> String {
        format!(
            "database {} · {} events · {} loops × {} in flight\ndrained in {:.1} s: {:.0} deliveries/s\nRSA-2048 signatures alone: {:.0}/s on one core\n",
            self.database,
            self.events,
            self.loops,
            self.batch,
            self.seconds_to_drain,
            self.deliveries_per_second,
            self.signatures_per_second_one_core
        )
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginReport {
    pub component: String,
    pub calls: usize,
    /// Per call: a fresh store, instantiation from the pre-linked component, the call.
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    /// One thread calling back to back.
    pub calls_per_second_one_core: f64,
}

/// `cofre bench plugins`: the overhead a trivial allow-all plugin adds to the withdraw
/// path (`authorize-withdraw`), measured call by call on one thread.
pub fn plugins(component: &std::path::Path, calls: usize) -> anyhow::Result<PluginReport> {
    use cofre_plugin_host::{Decision, Host, Limits, Withdrawal};
    let bytes =
        std::fs::read(component).with_context(|| format!("reading {}", component.display()))?;
    let host = Host::new(Limits::default()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let plugin = host
        .load("bench", "1.0.0", &bytes)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let config = std::collections::HashMap::new();
    let input = Withdrawal {
        now_ms: 0,
        account_id: "acc_bench".into(),
        value: 100,
        withdraw_key: "a@b.com".into(),
        withdraw_key_type: "EMAIL".into(),
        available: 1000,
        blocked: 0,
        recent_withdrawals_ms: vec![],
    };
    for _ in 0..200 {
        host.authorize_withdraw(&plugin, &config, &input)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        let (decision, _) = host
            .authorize_withdraw(&plugin, &config, &input)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        latencies.push(t.elapsed());
        anyhow::ensure!(decision == Decision::Allow, "the bench plugin must allow");
    }
    let total = started.elapsed();
    latencies.sort();
    let pct = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e6;
    Ok(PluginReport {
        component: component.display().to_string(),
        calls,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        mean_us: total.as_secs_f64() * 1e6 / calls as f64,
        calls_per_second_one_core: calls as f64 / total.as_secs_f64(),
    })
}

impl PluginReport {
    pub fn table(&self) -> String {
        format!(
            "{} · {} calls of authorize-withdraw (fresh store + instantiate + call)\np50 {:.1} µs  p99 {:.1} µs  mean {:.1} µs  {:.0} calls/s on one core\n",
            self.component,
            self.calls,
            self.p50_us,
            self.p99_us,
            self.mean_us,
            self.calls_per_second_one_core
        )
    }
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

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FloodPhase {
    pub phase: String,
    /// Company B: paced requests, each answered 200.
    pub b_requests: usize,
    pub b_p50_ms: f64,
    pub b_p99_ms: f64,
    /// Company A: as fast as `flooders` loops can send.
    pub a_requests: usize,
    pub a_admitted: usize,
    pub a_refused_429: usize,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FloodReport {
    pub database: String,
    pub rate_limit_store: String,
    pub seconds: u64,
    pub flooders: usize,
    pub b_per_second: u64,
    pub alone: FloodPhase,
    pub flooded: FloodPhase,
    /// B's p99 under the flood as a multiple of its p99 alone.
    pub p99_ratio: f64,
}

/// `cofre bench flood`: company B lists its Pix keys at a steady `b_per_second`
/// (within its rate limit) for `seconds`, first alone, then while `flooders` loops of
/// company A send the same request as fast as they can with one AppID. The rate limit
/// is the configured one; B must never see a 429 and A must. Answers B's latency in
/// both phases.
pub async fn flood(
    mut settings: Settings,
    seconds: u64,
    flooders: usize,
    b_per_second: u64,
) -> anyhow::Result<FloodReport> {
    settings.server.bind = "127.0.0.1:0".into();
    anyhow::ensure!(
        b_per_second < u64::from(settings.rate_limit.per_second),
        "company B's pace must stay under rate_limit.per_second ({})",
        settings.rate_limit.per_second
    );
    let database = crate::store::redact(&settings.database.url);
    let store_setting = format!("{:?}", settings.rate_limit.store).to_lowercase();
    let running = crate::start(settings).await?;
    let backend = running.state.services.store.backend();
    let rate_limit_store = match (store_setting.as_str(), backend) {
        ("auto", crate::store::Backend::Postgres) => "auto (database)".to_owned(),
        ("auto", crate::store::Backend::Sqlite) => "auto (memory)".to_owned(),
        (other, _) => other.to_owned(),
    };
    let base = format!("http://{}", running.addr);
    let services = running.state.services.clone();
    let (_, a) = bench_company(&services).await?;
    let (_, b) = bench_company(&services).await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(flooders * 2 + 16)
        .build()?;
    let a_id = Arc::new(a.app_id);
    let b_id = Arc::new(b.app_id);

    let mut phases = Vec::new();
    for (phase, flooding) in [("B alone", false), ("B while A floods", true)] {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut flood_tasks = Vec::new();
        if flooding {
            for _ in 0..flooders {
                let (c, url, id, stop) = (
                    client.clone(),
                    format!("{base}/api/v1/pix-keys"),
                    a_id.clone(),
                    stop.clone(),
                );
                flood_tasks.push(tokio::spawn(async move {
                    let (mut admitted, mut refused) = (0usize, 0usize);
                    while !stop.load(Ordering::Relaxed) {
                        let response = c
                            .get(&url)
                            .header("authorization", id.as_str())
                            .send()
                            .await?;
                        match response.status().as_u16() {
                            200 => admitted += 1,
                            429 => refused += 1,
                            other => anyhow::bail!("company A got {other}"),
                        }
                        response.bytes().await?;
                    }
                    Ok::<_, anyhow::Error>((admitted, refused))
                }));
            }
        }
        // B: one request every 1/b_per_second, each on its own task so a slow answer
        // does not delay the next one (open-loop load).
        let mut tick = tokio::time::interval(Duration::from_secs(1) / b_per_second as u32);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let mut b_tasks = Vec::new();
        for _ in 0..seconds * b_per_second {
            tick.tick().await;
            let (c, url, id) = (
                client.clone(),
                format!("{base}/api/v1/pix-keys"),
                b_id.clone(),
            );
            b_tasks.push(tokio::spawn(async move {
                let t = Instant::now();
                let response = c
                    .get(&url)
                    .header("authorization", id.as_str())
                    .send()
                    .await?;
                let status = response.status();
                response.bytes().await?;
                anyhow::ensure!(status.is_success(), "company B got {status}");
                Ok::<_, anyhow::Error>(t.elapsed())
            }));
        }
        let mut latencies = Vec::with_capacity(b_tasks.len());
        for task in b_tasks {
            latencies.push(task.await??);
        }
        stop.store(true, Ordering::Relaxed);
        let (mut a_admitted, mut a_refused) = (0, 0);
        for task in flood_tasks {
            let (admitted, refused) = task.await??;
            a_admitted += admitted;
            a_refused += refused;
        }
        latencies.sort();
        let pct = |p: f64| percentile(&latencies, p).as_secs_f64() * 1e3;
        phases.push(FloodPhase {
            phase: phase.to_owned(),
            b_requests: latencies.len(),
            b_p50_ms: pct(0.50),
            b_p99_ms: pct(0.99),
            a_requests: a_admitted + a_refused,
            a_admitted,
            a_refused_429: a_refused,
        });
    }
    running.task.abort();
    let flooded = phases.pop().expect("two phases");
    let alone = phases.pop().expect("two phases");
    anyhow::ensure!(
        flooded.a_refused_429 > 0,
        "the flood was never refused: raise --flooders or --seconds"
    );
    Ok(FloodReport {
        database,
        rate_limit_store,
        seconds,
        flooders,
        b_per_second,
        p99_ratio: flooded.b_p99_ms / alone.b_p99_ms,
        alone,
        flooded,
    })
}

impl FloodReport {
    pub fn table(&self) -> String {
        let mut out = format!(
            "database {} · rate limit store {} · B at {}/s for {} s · A with {} loops\n",
            self.database, self.rate_limit_store, self.b_per_second, self.seconds, self.flooders
        );
        for p in [&self.alone, &self.flooded] {
            out.push_str(&format!(
                "{:<18} B {:>5} requests p50 {:>6.2} ms p99 {:>6.2} ms · A {:>7} requests, {:>5} admitted, {:>7} refused 429\n",
                p.phase, p.b_requests, p.b_p50_ms, p.b_p99_ms, p.a_requests, p.a_admitted, p.a_refused_429
            ));
        }
        out.push_str(&format!(
            "B's p99 under the flood: {:.2}x alone\n",
            self.p99_ratio
        ));
        out
    }
}
