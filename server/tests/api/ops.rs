//! Health, metrics, request ids, the OpenAPI document, the docs UI and the change log.

use crate::db_test;
use crate::helpers::*;

async fn healthz_metrics_and_request_ids(db: Db) {
    let app = spawn_app(db).await;
    let response = app.get("/healthz", None).await;
    assert!(response.headers().contains_key("x-request-id"));
    assert_eq!(json(response, 200).await["status"], "OK");
    app.scopes(None).await;
    let metrics = app.get("/metrics", None).await;
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.unwrap();
    assert!(
        text.contains(r#"cofre_http_requests_total{method="GET",route="/api/v1/application/scopes",status="401"}"#),
        "{text}"
    );
}
db_test!(healthz_metrics_and_request_ids);

async fn openapi_lists_the_routes_with_their_security(db: Db) {
    let app = spawn_app(db).await;
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    let mut paths: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/api/v1/account",
            "/api/v1/account-register",
            "/api/v1/account-register/{id}",
            "/api/v1/account/{accountId}",
            "/api/v1/account/{accountId}/withdraw",
            "/api/v1/application",
            "/api/v1/application/rotate-secret",
            "/api/v1/application/scopes",
            "/api/v1/changelog",
            "/api/v1/charge",
            "/api/v1/charge/{id}",
            "/api/v1/charge/{id}/refund",
            "/api/v1/customer",
            "/api/v1/customer/{id}",
            "/api/v1/dispute",
            "/api/v1/dispute/{id}",
            "/api/v1/dispute/{id}/evidence",
            "/api/v1/files",
            "/api/v1/files/{id}",
            "/api/v1/files/{id}/content",
            "/api/v1/kyc/onboarding",
            "/api/v1/kyc/representatives",
            "/api/v1/openapi.json",
            "/api/v1/pix-keys",
            "/api/v1/pix-keys/check",
            "/api/v1/pix-keys/tokens",
            "/api/v1/pix-keys/withdraw",
            "/api/v1/pix-keys/{key}",
            "/api/v1/pix-keys/{key}/check",
            "/api/v1/pix-keys/{key}/default",
            "/api/v1/pixQrCode",
            "/api/v1/pixQrCode/{id}",
            "/api/v1/plugins",
            "/api/v1/plugins/{id}",
            "/api/v1/plugins/{id}/bindings",
            "/api/v1/plugins/{id}/invocations",
            "/api/v1/qrcode-static",
            "/api/v1/qrcode-static/{id}",
            "/api/v1/refund",
            "/api/v1/refund/{id}",
            "/api/v1/sandbox/charge/{id}/pay",
            "/api/v1/sandbox/dispute",
            "/api/v1/sandbox/dispute/{id}/cancel",
            "/api/v1/sandbox/pix",
            "/api/v1/statement",
            "/api/v1/subscriptions",
            "/api/v1/subscriptions/{id}",
            "/api/v1/subscriptions/{id}/cancel",
            "/api/v1/subscriptions/{id}/installments",
            "/api/v1/subscriptions/{id}/payment-book",
            "/api/v1/transaction",
            "/api/v1/transaction/{id}",
            "/api/v1/webhook",
            "/api/v1/webhook/deliveries/{id}/resend",
            "/api/v1/webhook/events",
            "/api/v1/webhook/public-keys",
            "/api/v1/webhook/{id}",
            "/api/v1/webhook/{id}/deliveries",
        ]
    );
    let rotate = &doc["paths"]["/api/v1/application/rotate-secret"]["post"]["security"];
    assert_eq!(rotate[0]["MasterAppID"][0], "APPLICATION_ROTATE_POST");
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert!(
                op["security"].is_array(),
                "{method} {path} declares no security"
            );
        }
    }
    assert!(doc["components"]["securitySchemes"]["AppID"].is_object());
}
db_test!(openapi_lists_the_routes_with_their_security);

async fn docs_ui_works_offline(db: Db) {
    let app = spawn_app(db).await;
    let page = app.get("/docs", None).await.text().await.unwrap();
    assert!(page.contains("/docs/swagger-ui-bundle.js") && page.contains("/api/v1/openapi.json"));
    for asset in ["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"] {
        let response = app.get(asset, None).await;
        assert_eq!(response.status(), 200, "{asset}");
        assert!(
            response.bytes().await.unwrap().len() > 10_000,
            "{asset} is vendored"
        );
    }
    // No asset is loaded from another origin.
    assert!(!page.contains("http://") && !page.contains("https://"));
}
db_test!(docs_ui_works_offline);

async fn changelog_serves_the_seed_table_newest_first(db: Db) {
    let app = spawn_app(db).await;
    let body = json(app.get("/api/v1/changelog", None).await, 200).await;
    let entries = body["changelog"].as_array().unwrap();
    assert_eq!(entries.len(), 10);
    assert_eq!(entries[0]["month"], "2026-09");
    assert_eq!(entries[0]["type"], "Added");
    assert_eq!(entries[9]["month"], "2026-02");
    let removed = entries.iter().find(|e| e["type"] == "Removed").unwrap();
    assert_eq!(removed["month"], "2026-04");
    assert!(
        removed["change"]
            .as_str()
            .unwrap()
            .contains("account register")
    );
}
db_test!(changelog_serves_the_seed_table_newest_first);

/// Found by schemathesis (scripts/fuzz): 415 on every JSON route, 400 on
/// `POST /account` and `POST /sandbox/charge/{id}/pay`, were answered but not in the
/// document, and no error answer declared its body. Every operation now documents the
/// answers its extractors and the AppID checks give, each 4xx with the `Error` body.
async fn every_operation_documents_its_shared_error_answers(db: Db) {
    let app = spawn_app(db).await;
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    let error = &doc["components"]["schemas"]["Error"];
    assert_eq!(error["required"], serde_json::json!(["error", "code"]));
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            let has = |status: &str| responses.contains_key(status);
            let secured = op["security"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_object().is_some_and(|o| !o.is_empty()));
            if secured {
                for status in ["401", "403", "429"] {
                    assert!(has(status), "{method} {path} does not document {status}");
                }
            }
            if op["requestBody"]["content"]["application/json"].is_object() {
                for status in ["400", "413", "415"] {
                    assert!(has(status), "{method} {path} does not document {status}");
                }
            }
            for (status, response) in responses.iter().filter(|(s, _)| s.starts_with('4')) {
                assert_eq!(
                    response["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/Error",
                    "{method} {path} {status}"
                );
            }
        }
    }

    // The answers schemathesis met, now documented ones.
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let documented = |method: &str, path: &str, status: u16| {
        doc["paths"][path][method]["responses"]
            .get(status.to_string())
            .is_some()
    };
    let response = app
        .request(reqwest::Method::POST, "/api/v1/pix-keys", Some(&master))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    assert!(documented("post", "/api/v1/pix-keys", 415));
    let response = app
        .post(
            "/api/v1/account",
            Some(&master),
            serde_json::json!({"correlationID": {}}),
        )
        .await;
    assert_error(response, 400, "VALIDATION_ERROR").await;
    assert!(documented("post", "/api/v1/account", 400));
    let response = app
        .post(
            "/api/v1/sandbox/charge/0/pay",
            Some(&master),
            serde_json::json!({"payer": {"name": "", "taxID": {}}}),
        )
        .await;
    assert_error(response, 400, "VALIDATION_ERROR").await;
    assert!(documented("post", "/api/v1/sandbox/charge/{id}/pay", 400));
    assert_eq!(app.count("accounts").await, 1, "only the main account");
}
db_test!(every_operation_documents_its_shared_error_answers);
