//! Secrets never reach the logs: every line the server writes at the most verbose level
//! while AppIDs, client secrets, passwords, webhook credentials and signed file links go
//! through it is captured and searched (nextest runs each test in its own process, so
//! the capturing subscriber is this test's alone).

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

async fn secrets_never_appear_in_the_logs(db: Db) {
    let capture = Capture::default();
    let writer = capture.clone();
    tracing_subscriber::fmt()
        .with_env_filter("trace")
        .json()
        .with_current_span(true)
        .with_span_list(true)
        .with_writer(move || writer.clone())
        .try_init()
        .expect("this test's process has no subscriber yet");

    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let created = json(
        app.post(
            "/api/v1/application",
            Some(&master),
            json!({"accountId": company.main_account_id, "application": {"name": "loja", "type": "API"}}),
        )
        .await,
        201,
    )
    .await;
    let api_app_id = created["application"]["appID"].as_str().unwrap().to_owned();
    let api_secret = created["application"]["clientSecret"]
        .as_str()
        .unwrap()
        .to_owned();
    let rotated = json(
        app.rotate_secret(&master, &client_id_of(&api_app_id)).await,
        200,
    )
    .await;
    let new_secret = rotated["application"]["clientSecret"]
        .as_str()
        .unwrap()
        .to_owned();
    let new_app_id = rotated["application"]["appID"].as_str().unwrap().to_owned();
    // Used, refused and sent with a Bearer prefix.
    json(app.scopes(Some(&new_app_id)).await, 200).await;
    assert_error(app.scopes(Some(&api_app_id)).await, 401, "APP_ID_INVALID").await;
    assert_error(
        app.scopes(Some(&format!("Bearer {new_app_id}"))).await,
        401,
        "APP_ID_INVALID",
    )
    .await;

    let webhook_secret = "Bearer webhook-secret-do-not-log";
    json(
        app.post(
            "/api/v1/webhook",
            Some(&master),
            json!({"webhook": {"name": "h", "event": "OPENPIX:CHARGE_CREATED", "url": "https://hooks.example/x",
                               "authorization": webhook_secret, "headers": {"x-token": "header-secret-do-not-log"}}}),
        )
        .await,
        201,
    )
    .await;

    // The console: a right and a wrong password.
    let password = "correct horse battery";
    app.console("admin0@example.com", password).await;
    app.sign_in("admin0@example.com", "wrong-password-do-not-log")
        .await;

    // A signed file link.
    let body = json(
        app.upload(&master, Some("KYC_DOCUMENT"), Some(("a.pdf", pdf())), None)
            .await,
        201,
    )
    .await;
    let url = body["url"].as_str().unwrap();
    assert_eq!(app.client.get(url).send().await.unwrap().status(), 200);
    let signature = url.split("signature=").nth(1).unwrap().to_owned();

    let logs = capture.text();
    assert!(
        logs.len() > 10_000,
        "the capture saw the server's logs ({} bytes)",
        logs.len()
    );
    assert!(logs.contains("request_id"), "request spans are captured");
    assert!(
        logs.contains("/api/v1/application/rotate-secret") && logs.contains("/api/v1/files"),
        "the requests that carried the secrets are in the capture"
    );
    for (what, secret) in [
        ("the MASTER AppID", master.as_str()),
        ("an AppID", api_app_id.as_str()),
        ("a client secret", api_secret.as_str()),
        ("a rotated client secret", new_secret.as_str()),
        ("a rotated AppID", new_app_id.as_str()),
        ("a webhook's authorization", webhook_secret),
        ("a webhook header", "header-secret-do-not-log"),
        ("a password", password),
        ("a wrong password", "wrong-password-do-not-log"),
        ("a file link's signature", signature.as_str()),
    ] {
        assert!(!logs.contains(secret), "{what} is in the logs");
    }
}
db_test!(secrets_never_appear_in_the_logs);
