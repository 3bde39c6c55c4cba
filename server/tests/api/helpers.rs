//! `spawn_app`, fixtures and a typed helper per endpoint.

use std::path::PathBuf;

use cofre_server::Settings;
use cofre_server::service::Services;
use cofre_server::service::applications::NewApplication;
use cofre_server::service::companies::NewCompany;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;

/// Runs `$name(db)` once on SQLite and once on Postgres.
#[macro_export]
macro_rules! db_test {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::helpers::Db::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::helpers::Db::Postgres).await
            }
        }
    };
}

#[derive(Clone, Copy, Debug)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// A database of its own for one test; the SQLite file lives in a temporary folder.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

pub fn postgres_admin_url() -> String {
    std::env::var("COFRE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub async fn fresh_database(db: Db) -> TestDb {
    match db {
        Db::Sqlite => {
            let dir = tempfile::tempdir().expect("temporary folder");
            let url = format!("sqlite://{}", dir.path().join("cofre.db").display());
            TestDb {
                url,
                _dir: Some(dir),
            }
        }
        Db::Postgres => {
            use sqlx::Connection;
            let admin = postgres_admin_url();
            let mut conn = sqlx::PgConnection::connect(&admin)
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "Postgres is required for the tests (COFRE_TEST_POSTGRES_URL={admin}): {e}"
                    )
                });
            let name = format!("cofre_test_{}", uuid::Uuid::new_v4().simple());
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .await
                .expect("create test database");
            let mut url = url::Url::parse(&admin).expect("valid COFRE_TEST_POSTGRES_URL");
            url.set_path(&name);
            TestDb {
                url: url.to_string(),
                _dir: None,
            }
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub services: Services,
    pub db: TestDb,
    /// The local object store of uploaded files.
    pub files: tempfile::TempDir,
}

pub fn test_settings(db_url: &str, files_dir: &std::path::Path) -> Settings {
    let mut settings = Settings::default();
    settings.database.url = db_url.to_owned();
    settings.server.bind = "127.0.0.1:0".into();
    settings.console.site_root = PathBuf::from("target/site");
    settings.sandbox.enabled = Some(true);
    settings.files.local_dir = files_dir.to_owned();
    // Debug builds run plugins several times slower than release ones.
    settings.plugins.deadline_ms = 1_000;
    settings
}

pub async fn spawn_app(db: Db) -> TestApp {
    spawn_app_with(db, |_| {}).await
}

pub async fn spawn_app_with(db: Db, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let db = fresh_database(db).await;
    let files = tempfile::tempdir().expect("temporary folder for files");
    let mut settings = test_settings(&db.url, files.path());
    configure(&mut settings);
    let running = cofre_server::start(settings).await.expect("app starts");
    TestApp {
        base: format!("http://{}", running.addr),
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        services: running.state.services.clone(),
        db,
        files,
    }
}

#[derive(Clone, Debug)]
pub struct TestCompany {
    pub id: String,
    pub main_account_id: String,
}

/// Valid CNPJs for fixtures, one per company a test creates.
pub const CNPJS: [&str; 3] = [
    "11.222.333/0001-81",
    "12.ABC.345/01DE-35",
    "11.444.777/0001-61",
];

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn company(&self, n: usize, baas: bool) -> TestCompany {
        let created = self
            .services
            .companies
            .create(NewCompany {
                name: format!("Empresa {n}"),
                tax_id: CNPJS[n].into(),
                baas,
                admin_email: format!("admin{n}@example.com"),
                admin_password: "correct horse battery".into(),
            })
            .await
            .expect("company created");
        TestCompany {
            id: created.company.id,
            main_account_id: created.main_account_id,
        }
    }

    /// Creates an application through the service and answers its AppID.
    pub async fn application(
        &self,
        company: &TestCompany,
        kind: &str,
        scopes: &[&str],
        allowed_ips: &[&str],
    ) -> String {
        let c = self.services.companies.get(&company.id).await.unwrap();
        self.services
            .applications
            .create(
                &c,
                NewApplication {
                    name: Some(format!("{kind} app")),
                    kind: Some(kind.into()),
                    account_id: None,
                    scopes: scopes.iter().map(|s| s.to_string()).collect(),
                    allowed_ips: allowed_ips.iter().map(|s| s.to_string()).collect(),
                },
            )
            .await
            .expect("application created")
            .app_id
    }

    pub async fn master(&self, company: &TestCompany) -> String {
        self.application(company, "MASTER", &[], &[]).await
    }

    pub fn request(&self, method: Method, path: &str, app_id: Option<&str>) -> RequestBuilder {
        let mut req = self.client.request(method, self.url(path));
        if let Some(app_id) = app_id {
            req = req.header("Authorization", app_id);
        }
        req
    }

    pub async fn get(&self, path: &str, app_id: Option<&str>) -> Response {
        self.request(Method::GET, path, app_id)
            .send()
            .await
            .unwrap()
    }

    pub async fn post(&self, path: &str, app_id: Option<&str>, body: Value) -> Response {
        self.request(Method::POST, path, app_id)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn create_application(&self, app_id: &str, body: Value) -> Response {
        self.post("/api/v1/application", Some(app_id), body).await
    }

    pub async fn rotate_secret(&self, app_id: &str, client_id: &str) -> Response {
        self.post(
            "/api/v1/application/rotate-secret",
            Some(app_id),
            serde_json::json!({ "clientId": client_id }),
        )
        .await
    }

    pub async fn put(&self, path: &str, app_id: Option<&str>, body: Value) -> Response {
        self.request(Method::PUT, path, app_id)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn delete(&self, path: &str, app_id: Option<&str>) -> Response {
        self.request(Method::DELETE, path, app_id)
            .send()
            .await
            .unwrap()
    }

    pub async fn create_account(&self, master: &str) -> Response {
        self.request(Method::POST, "/api/v1/account", Some(master))
            .header("content-type", "application/json")
            .send()
            .await
            .unwrap()
    }

    pub async fn create_pix_key(&self, app_id: &str, kind: &str, key: &str) -> Response {
        self.post(
            "/api/v1/pix-keys",
            Some(app_id),
            serde_json::json!({ "type": kind, "pixKey": key }),
        )
        .await
    }

    pub async fn list_pix_keys(&self, app_id: &str) -> Response {
        self.get("/api/v1/pix-keys", Some(app_id)).await
    }

    pub async fn delete_pix_key(&self, app_id: &str, key: &str) -> Response {
        self.delete(
            &format!("/api/v1/pix-keys/{}", urlencode(key)),
            Some(app_id),
        )
        .await
    }

    pub async fn check_key(&self, app_id: &str, key: &str) -> Response {
        self.post(
            "/api/v1/pix-keys/check",
            Some(app_id),
            serde_json::json!({ "pixKey": key }),
        )
        .await
    }

    pub async fn post_withdraw_key(&self, app_id: &str, body: Value) -> Response {
        self.post("/api/v1/pix-keys/withdraw", Some(app_id), body)
            .await
    }

    pub async fn put_withdraw_key(&self, app_id: &str, body: Value) -> Response {
        self.put("/api/v1/pix-keys/withdraw", Some(app_id), body)
            .await
    }

    /// A campaign as the seed's steps 3 and 4 make it: a new account and an API
    /// application bound to it. Answers `(accountId, AppID)`.
    pub async fn campaign(&self, master: &str) -> (String, String) {
        let account = json(self.create_account(master).await, 200).await;
        let account_id = account["account"]["accountId"].as_str().unwrap().to_owned();
        let app = json(
            self.create_application(
                master,
                serde_json::json!({"accountId": account_id, "application": {"name": "Campanha", "type": "API"}}),
            )
            .await,
            201,
        )
        .await;
        (
            account_id,
            app["application"]["appID"].as_str().unwrap().to_owned(),
        )
    }

    /// Adds external directory entries: `(key, type, holder tax id)`.
    pub async fn directory(&self, entries: &[(&str, &str, &str)]) {
        let lines: Vec<_> = entries
            .iter()
            .enumerate()
            .map(|(i, (key, kind, holder))| {
                (
                    i + 1,
                    cofre_server::service::directory::ImportLine {
                        key: key.to_string(),
                        kind: kind.to_string(),
                        holder_name: format!("Titular {holder}"),
                        holder_tax_id: holder.to_string(),
                        ispb: "60701190".into(),
                        branch: "0001".into(),
                        account_number: "1234567".into(),
                        account_type: "CACC".into(),
                    },
                )
            })
            .collect();
        self.services
            .directory
            .import(&lines)
            .await
            .expect("directory import");
    }

    pub async fn create_charge(&self, app_id: &str, body: Value) -> Response {
        self.post("/api/v1/charge", Some(app_id), body).await
    }

    pub async fn pay_charge(&self, app_id: &str, id: &str) -> Response {
        self.request(
            Method::POST,
            &format!("/api/v1/sandbox/charge/{id}/pay"),
            Some(app_id),
        )
        .header("content-type", "application/json")
        .send()
        .await
        .unwrap()
    }

    pub async fn sandbox_pix(&self, app_id: &str, key: &str, value: i64) -> Response {
        self.post(
            "/api/v1/sandbox/pix",
            Some(app_id),
            serde_json::json!({"pixKey": key, "value": value, "payer": {"name": "Joana"}}),
        )
        .await
    }

    pub async fn withdraw(&self, app_id: &str, account_id: &str, body: Value) -> Response {
        self.post(
            &format!("/api/v1/account/{account_id}/withdraw"),
            Some(app_id),
            body,
        )
        .await
    }

    /// `(available, blocked, total)` of an account as the API shows it.
    pub async fn balance(&self, app_id: &str, account_id: &str) -> (i64, i64, i64) {
        let body = json(
            self.get(&format!("/api/v1/account/{account_id}"), Some(app_id))
                .await,
            200,
        )
        .await;
        let b = &body["account"]["balance"];
        (
            b["available"].as_i64().unwrap(),
            b["blocked"].as_i64().unwrap(),
            b["total"].as_i64().unwrap(),
        )
    }

    pub async fn ledger_violations(&self) -> Vec<String> {
        cofre_server::service::ledger::verify(&self.services.store)
            .await
            .unwrap()
    }

    /// A campaign with a default Pix key and `value` received by Pix: `(account, AppID, key)`.
    pub async fn funded_campaign(&self, master: &str, key: &str, value: i64) -> (String, String) {
        let (account_id, app_id) = self.campaign(master).await;
        json(self.create_pix_key(&app_id, "EMAIL", key).await, 201).await;
        if value > 0 {
            json(self.sandbox_pix(&app_id, key, value).await, 200).await;
        }
        (account_id, app_id)
    }

    pub async fn enable_withdraw_key_api(&self, account_id: &str) {
        self.services
            .companies
            .set_withdraw_key_api(account_id, true)
            .await
            .unwrap();
    }

    pub async fn scopes(&self, app_id: Option<&str>) -> Response {
        self.get("/api/v1/application/scopes", app_id).await
    }
}

/// Fixtures and calls of the files, disputes and KYC tests.
impl TestApp {
    /// `POST /api/v1/files` with a multipart form; `None` leaves a part out.
    pub async fn upload(
        &self,
        app_id: &str,
        purpose: Option<&str>,
        file: Option<(&str, Vec<u8>)>,
        correlation_id: Option<&str>,
    ) -> Response {
        let mut form = reqwest::multipart::Form::new();
        if let Some(p) = purpose {
            form = form.text("purpose", p.to_owned());
        }
        if let Some(c) = correlation_id {
            form = form.text("correlationID", c.to_owned());
        }
        if let Some((name, bytes)) = file {
            // The declared type is a lie on purpose: Cofre reads the bytes.
            let part = reqwest::multipart::Part::bytes(bytes)
                .file_name(name.to_owned())
                .mime_str("application/pdf")
                .unwrap();
            form = form.part("file", part);
        }
        self.request(Method::POST, "/api/v1/files", Some(app_id))
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// Uploads `pdf()` for `purpose` and answers the file id.
    pub async fn uploaded(&self, app_id: &str, purpose: &str) -> String {
        let body = json(
            self.upload(app_id, Some(purpose), Some(("doc.pdf", pdf())), None)
                .await,
            201,
        )
        .await;
        body["file"]["id"].as_str().unwrap().to_owned()
    }

    /// The events stored for a company, oldest first: `(event, application_id, payload)`.
    pub async fn events_of(&self, company_id: &str) -> Vec<(String, Option<String>, Value)> {
        use sqlx::Row;
        let rows = sqlx::query(
            "SELECT event, application_id, payload FROM events WHERE company_id = $1 ORDER BY created_at, id",
        )
        .bind(company_id)
        .fetch_all(self.services.store.pool())
        .await
        .unwrap();
        rows.iter()
            .map(|r| {
                (
                    r.get::<String, _>("event"),
                    r.get::<Option<String>, _>("application_id"),
                    serde_json::from_str(&r.get::<String, _>("payload")).unwrap(),
                )
            })
            .collect()
    }

    /// How many rows `table` has (files, dispute_evidence, kyc_onboardings, ...).
    pub async fn count(&self, table: &str) -> i64 {
        use sqlx::Row;
        sqlx::query(&format!("SELECT COUNT(*) AS n FROM {table}"))
            .fetch_one(self.services.store.pool())
            .await
            .unwrap()
            .get::<i64, _>("n")
    }

    /// The caller an AppID authenticates as (for service calls support makes).
    pub async fn caller(&self, app_id: &str) -> cofre_server::service::applications::Caller {
        self.services
            .applications
            .authenticate(Some(app_id))
            .await
            .unwrap()
    }

    pub async fn enable_feature(&self, company: &TestCompany, feature: &str) {
        self.services
            .companies
            .set_feature(&company.id, feature.parse().unwrap(), true)
            .await
            .unwrap();
    }

    /// A funded campaign with a received Pix under dispute: `(account, AppID, dispute id)`.
    pub async fn disputed_campaign(
        &self,
        master: &str,
        key: &str,
        value: i64,
    ) -> (String, String, String) {
        let (account_id, app_id) = self.funded_campaign(master, key, value).await;
        let statement = json(self.get("/api/v1/statement", Some(&app_id)).await, 200).await;
        let pix_in = statement["statement"][0]["endToEndId"]
            .as_str()
            .unwrap()
            .to_owned();
        let opened = json(
            self.post(
                "/api/v1/sandbox/dispute",
                Some(&app_id),
                serde_json::json!({"transactionID": pix_in}),
            )
            .await,
            200,
        )
        .await;
        let id = opened["dispute"]["id"].as_str().unwrap().to_owned();
        (account_id, app_id, id)
    }

    /// Files in the local object store (every company).
    pub fn stored_objects(&self) -> usize {
        fn walk(dir: &std::path::Path) -> usize {
            std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .map(|e| {
                            let path = e.path();
                            if path.is_dir() { walk(&path) } else { 1 }
                        })
                        .sum()
                })
                .unwrap_or(0)
        }
        walk(self.files.path())
    }
}

/// A small whole PDF.
pub fn pdf() -> Vec<u8> {
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n".to_vec()
}

/// A small whole PNG (signature, IHDR, IEND).
pub fn png() -> Vec<u8> {
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    png.extend_from_slice(&[0, 0, 0, 13]);
    png.extend_from_slice(b"IHDR");
    png.extend_from_slice(&[
        0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xDE,
    ]);
    png.extend_from_slice(&[0, 0, 0, 0]);
    png.extend_from_slice(b"IEND");
    png.extend_from_slice(&[0xAE, 0x42, 0x60, 0x82]);
    png
}

/// A small whole JPEG (SOI, JFIF APP0, EOI).
pub fn jpeg() -> Vec<u8> {
    let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 16];
    jpeg.extend_from_slice(b"JFIF\0");
    jpeg.extend_from_slice(&[1, 1, 0, 0, 1, 0, 1, 0, 0, 0xFF, 0xD9]);
    jpeg
}

/// Asserts the status and the stable `code` of an error answer; returns the body.
pub async fn assert_error(response: Response, status: u16, code: &str) -> Value {
    assert_eq!(
        response.status().as_u16(),
        status,
        "status of {}",
        response.url()
    );
    let body: Value = response.json().await.expect("error body is JSON");
    assert_eq!(body["code"], code, "body: {body}");
    assert!(
        body["error"].as_str().is_some_and(|m| !m.is_empty()),
        "body: {body}"
    );
    body
}

pub async fn json(response: Response, status: u16) -> Value {
    assert_eq!(
        response.status().as_u16(),
        status,
        "status of {}",
        response.url()
    );
    response.json().await.expect("JSON body")
}

/// The clientId inside an AppID.
pub fn client_id_of(app_id: &str) -> String {
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(app_id)
        .unwrap();
    let text = String::from_utf8(decoded).unwrap();
    text.split_once(':').unwrap().0.to_owned()
}

pub fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// `cofre_session=<id>` as a sign-in answer sets it, ready for a `cookie` header.
pub fn session_cookie(response: &Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("cofre_session="))
        .expect("a session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

/// A signed-in console browser: its session cookie, calling server fns as the
/// hydrated console does (form-encoded POST, JSON answer, same origin).
pub struct ConsoleSession<'a> {
    pub app: &'a TestApp,
    pub cookie: String,
}

impl TestApp {
    /// Signs in through the console's server fn; panics unless it succeeds.
    pub async fn console(&self, email: &str, password: &str) -> ConsoleSession<'_> {
        let response = self.sign_in(email, password).await;
        assert!(
            response.status().is_success() || response.status().is_redirection(),
            "sign-in of {email}: {}",
            response.status()
        );
        let cookie = session_cookie(&response);
        ConsoleSession { app: self, cookie }
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> Response {
        self.client
            .post(self.url("/console/fn/sign_in"))
            .header("accept", "application/json")
            .form(&[("email", email), ("password", password)])
            .send()
            .await
            .unwrap()
    }

    /// A server fn call without a session.
    pub async fn anonymous_call(&self, name: &str, form: &[(&str, &str)]) -> Response {
        self.client
            .post(self.url(&format!("/console/fn/{name}")))
            .header("accept", "application/json")
            .form(form)
            .send()
            .await
            .unwrap()
    }
}

impl ConsoleSession<'_> {
    pub fn request(&self, name: &str) -> RequestBuilder {
        self.app
            .client
            .post(self.app.url(&format!("/console/fn/{name}")))
            .header("accept", "application/json")
            .header("cookie", &self.cookie)
    }

    pub async fn call(&self, name: &str, form: &[(&str, &str)]) -> Response {
        self.request(name).form(form).send().await.unwrap()
    }

    /// A call that must succeed; answers its JSON.
    pub async fn ok(&self, name: &str, form: &[(&str, &str)]) -> Value {
        let response = self.call(name, form).await;
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 200, "{name}: {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// Asserts that a server fn refused with this status and code; answers the refusal.
pub async fn assert_refused(response: Response, status: u16, code: &str) -> Value {
    let got = response.status().as_u16();
    let url = response.url().to_string();
    let body: Value = response.json().await.expect("refusal body is JSON");
    assert_eq!(got, status, "status of {url}: {body}");
    let refused = &body["Refused"];
    assert_eq!(refused["code"], code, "body: {body}");
    assert_eq!(refused["status"], status, "body: {body}");
    assert!(
        refused["message"].as_str().is_some_and(|m| !m.is_empty()),
        "body: {body}"
    );
    refused.clone()
}
