//! Scale-out: three `cofre serve` processes on one Postgres database, sharing nothing
//! but it. Identical creates sent to different processes make one resource, the
//! directory bucket and the per-AppID rate limit hold across them, their webhook
//! workers never deliver an event twice, and a console session works on any of them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::helpers::*;
use crate::receiver::Receiver;

/// Requests per second and burst of every AppID in the processes under test.
const PER_SECOND: u64 = 1;
const BURST: u64 = 30;

/// One `cofre serve` child process; killed when dropped.
struct Process {
    base: String,
    _child: tokio::process::Child,
}

impl Process {
    async fn start(db_url: &str, files: &std::path::Path) -> Self {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cofre"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("COFRE__DATABASE__URL", db_url)
            .env("COFRE__SANDBOX__ENABLED", "true")
            .env("COFRE__FILES__LOCAL_DIR", files)
            .env("COFRE__RATE_LIMIT__PER_SECOND", PER_SECOND.to_string())
            .env("COFRE__RATE_LIMIT__BURST", BURST.to_string())
            .env("COFRE__WEBHOOKS__POLL_MS", "50")
            .env("COFRE__LOG__FORMAT", "json")
            .env("COFRE__LOG__LEVEL", "info")
            .env_remove("RUST_LOG")
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("cofre starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let Ok(entry) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if entry["message"] == "cofre listening" {
                    return entry["addr"].as_str().unwrap().to_owned();
                }
            }
            panic!("cofre exited before listening");
        })
        .await
        .expect("cofre listens within a minute");
        // Keep reading the log so a full pipe never blocks the process.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            base: format!("http://{addr}"),
            _child: child,
        }
    }
}

struct Cluster {
    /// Seeds fixtures; its own webhook workers are off.
    app: TestApp,
    processes: Vec<Process>,
    client: reqwest::Client,
}

impl Cluster {
    async fn start() -> Self {
        let app = spawn_app_with(Db::Postgres, |s| s.webhooks.workers = 0).await;
        let mut processes = Vec::new();
        for _ in 0..3 {
            processes.push(Process::start(&app.db.url, app.files.path()).await);
        }
        Self {
            app,
            processes,
            client: reqwest::Client::new(),
        }
    }

    /// The `i`-th request goes to process `i % 3`.
    fn url(&self, i: usize, path: &str) -> String {
        format!("{}{path}", self.processes[i % self.processes.len()].base)
    }

    async fn post(&self, i: usize, path: &str, app_id: &str, body: Value) -> reqwest::Response {
        self.client
            .post(self.url(i, path))
            .header("authorization", app_id)
            .json(&body)
            .send()
            .await
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_on_one_postgres_behave_as_one() {
    let cluster = Cluster::start().await;
    let app = &cluster.app;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;

    identical_creates_make_one_charge(&cluster, &master).await;
    the_directory_bucket_is_shared(&cluster, &master).await;
    the_rate_limit_is_shared(&cluster, &company).await;
    webhook_workers_never_deliver_an_event_twice(&cluster, &master).await;
    console_sessions_work_on_every_process(&cluster).await;
}

async fn identical_creates_make_one_charge(cluster: &Cluster, master: &str) {
    let (_, campaign) = cluster
        .app
        .funded_campaign(master, "loja@empresa0.com.br", 0)
        .await;
    let body = json!({"correlationID": "mesma-compra", "value": 4_990});
    let answers = futures_util::future::join_all(
        (0..12).map(|i| cluster.post(i, "/api/v1/charge", &campaign, body.clone())),
    )
    .await;
    let mut statuses = Vec::new();
    let mut ids = Vec::new();
    for answer in answers {
        statuses.push(answer.status().as_u16());
        let body: Value = answer.json().await.unwrap();
        ids.push(
            body["charge"]["globalID"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        11,
        "{statuses:?}"
    );
    ids.dedup();
    assert_eq!(ids.len(), 1, "every answer names the same charge: {ids:?}");
    assert_eq!(cluster.app.count("charges").await, 1);
}

async fn the_directory_bucket_is_shared(cluster: &Cluster, master: &str) {
    let (_, campaign) = cluster.app.campaign(master).await;
    // The holder's 500 tokens pay for 25 misses (20 each) whichever process serves
    // them; two AppIDs of the holder stay under their own rate limit.
    let answers = futures_util::future::join_all((0..32).map(|i| {
        let app_id = if i % 2 == 0 { master } else { &campaign };
        cluster.post(
            i,
            "/api/v1/pix-keys/check",
            app_id,
            json!({"pixKey": format!("ninguem{i}@banco.com")}),
        )
    }))
    .await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status().as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 404).count(),
        25,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        7,
        "{statuses:?}"
    );
}

async fn the_rate_limit_is_shared(cluster: &Cluster, company: &TestCompany) {
    let app_id = cluster
        .app
        .application(company, "API", &["ACCOUNT_GET"], &[])
        .await;
    let started = Instant::now();
    let answers = futures_util::future::join_all((0..90).map(|i| {
        cluster
            .client
            .get(cluster.url(i, "/api/v1/application/scopes"))
            .header("authorization", &app_id)
            .send()
    }))
    .await;
    let elapsed = started.elapsed().as_secs();
    let mut admitted = 0;
    let mut refused = 0;
    for answer in answers {
        match answer.unwrap().status().as_u16() {
            200 => admitted += 1,
            429 => refused += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    // In-memory buckets would admit up to 30 on each process: all 90.
    assert!(
        (BURST..=BURST + PER_SECOND * (elapsed + 1)).contains(&admitted),
        "{admitted} admitted, {refused} refused in {elapsed} s"
    );
    assert_eq!(admitted + refused, 90);
}

async fn webhook_workers_never_deliver_an_event_twice(cluster: &Cluster, master: &str) {
    let receiver = Receiver::start(&[]).await;
    let body = json!({"webhook": {"name": "pix", "event": "OPENPIX:TRANSACTION_RECEIVED",
                                  "url": receiver.url}});
    assert_eq!(
        cluster
            .post(0, "/api/v1/webhook", master, body)
            .await
            .status(),
        201
    );
    let (_, campaign) = cluster
        .app
        .funded_campaign(master, "doacoes@empresa0.com.br", 0)
        .await;
    const PIX: usize = 24;
    for i in 0..PIX {
        let answer = cluster
            .post(
                i,
                "/api/v1/sandbox/pix",
                &campaign,
                json!({"pixKey": "doacoes@empresa0.com.br", "value": 100 + i as i64,
                       "payer": {"name": "Joana"}}),
            )
            .await;
        assert_eq!(answer.status(), 200);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while receiver.received().len() < PIX && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Every worker polls every 50 ms: a double claim would show up within this pause.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut per_event: HashMap<String, usize> = HashMap::new();
    for received in receiver.received() {
        *per_event.entry(received.header("x-event-id")).or_default() += 1;
    }
    assert_eq!(per_event.len(), PIX, "{per_event:?}");
    assert!(per_event.values().all(|n| *n == 1), "{per_event:?}");
}

async fn console_sessions_work_on_every_process(cluster: &Cluster) {
    let sign_in = cluster
        .client
        .post(cluster.url(0, "/console/fn/sign_in"))
        .header("accept", "application/json")
        .form(&[
            ("email", "admin0@example.com"),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap();
    assert!(sign_in.status().is_success(), "{}", sign_in.status());
    let cookie = session_cookie(&sign_in);
    let current_user = |i: usize| {
        cluster
            .client
            .post(cluster.url(i, "/console/fn/current_user"))
            .header("accept", "application/json")
            .header("cookie", &cookie)
            .send()
    };
    for i in 1..3 {
        let user: Value = current_user(i).await.unwrap().json().await.unwrap();
        assert_eq!(user["email"], "admin0@example.com", "process {i}: {user}");
    }
    let signed_out = cluster
        .client
        .post(cluster.url(1, "/console/fn/sign_out"))
        .header("accept", "application/json")
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert!(signed_out.status().is_success());
    for i in [0, 2] {
        let user: Value = current_user(i).await.unwrap().json().await.unwrap();
        assert_eq!(user, Value::Null, "signed out everywhere, process {i}");
    }
}
