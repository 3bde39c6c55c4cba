//! Every malformed request is a clear 4xx with a stable code, never a 500.

use reqwest::Method;
use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn malformed_json_wrong_type_and_content_type_are_4xx(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let send = |body: &'static str, content_type: &'static str| {
        app.request(Method::POST, "/api/v1/application", Some(&master))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    assert_error(
        send("{\"application\": ", "application/json")
            .await
            .unwrap(),
        400,
        "INVALID_JSON",
    )
    .await;
    assert_error(
        send("{}", "text/plain").await.unwrap(),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    )
    .await;
    let body = assert_error(
        send(
            "{\"application\": {\"name\": 123, \"type\": \"API\"}}",
            "application/json",
        )
        .await
        .unwrap(),
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "application.name");
    let body = assert_error(
        send("42", "application/json").await.unwrap(),
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "body");
    assert_eq!(
        app.services
            .applications
            .list(&company.id)
            .await
            .unwrap()
            .len(),
        1
    );
}
db_test!(malformed_json_wrong_type_and_content_type_are_4xx);

async fn oversized_body_is_413(db: Db) {
    let app = spawn_app_with(db, |s| s.server.max_body_bytes = 1024).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let big = json!({"application": {"name": "x".repeat(4096), "type": "API"}});
    assert_error(
        app.create_application(&master, big).await,
        413,
        "PAYLOAD_TOO_LARGE",
    )
    .await;
}
db_test!(oversized_body_is_413);

async fn unknown_routes_and_methods_answer_json(db: Db) {
    let app = spawn_app(db).await;
    assert_error(
        app.get("/api/v1/nothing-here", None).await,
        404,
        "ROUTE_NOT_FOUND",
    )
    .await;
    let response = app
        .request(Method::DELETE, "/api/v1/application/scopes", None)
        .send()
        .await
        .unwrap();
    assert_error(response, 405, "METHOD_NOT_ALLOWED").await;
}
db_test!(unknown_routes_and_methods_answer_json);

async fn messages_follow_accept_language(db: Db) {
    let app = spawn_app(db).await;
    let pt = assert_error(app.scopes(None).await, 401, "APP_ID_MISSING").await;
    let en = app
        .request(Method::GET, "/api/v1/application/scopes", None)
        .header("accept-language", "en-US,en;q=0.9")
        .send()
        .await
        .unwrap();
    let en = assert_error(en, 401, "APP_ID_MISSING").await;
    assert!(pt["error"].as_str().unwrap().contains("ausente"));
    assert!(en["error"].as_str().unwrap().contains("Missing"));
}
db_test!(messages_follow_accept_language);

/// Found while fuzzing the contract (scripts/fuzz): a path parameter that is not UTF-8
/// once percent-decoded got axum's own `text/plain` 400 on every route with one.
async fn a_path_parameter_that_is_not_utf8_is_a_validation_error(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    for (method, path, template, parameter) in [
        (
            Method::GET,
            "/api/v1/charge/%FF",
            "/api/v1/charge/{id}",
            "id",
        ),
        (
            Method::POST,
            "/api/v1/charge/%FF%FE/refund",
            "/api/v1/charge/{id}/refund",
            "id",
        ),
        (
            Method::GET,
            "/api/v1/pix-keys/%C3%28/check",
            "/api/v1/pix-keys/{key}/check",
            "key",
        ),
        (
            Method::GET,
            "/api/v1/account/%FF",
            "/api/v1/account/{accountId}",
            "accountId",
        ),
    ] {
        let response = app
            .request(method.clone(), path, Some(&master))
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        let body = assert_error(response, 400, "VALIDATION_ERROR").await;
        assert_eq!(body["details"][0]["field"], parameter, "{path}");
        let documented =
            &doc["paths"][template][method.as_str().to_lowercase()]["responses"]["400"];
        assert!(
            documented.is_object(),
            "{method} {template} documents no 400"
        );
    }
    assert_eq!(app.count("charges").await, 0);
}
db_test!(a_path_parameter_that_is_not_utf8_is_a_validation_error);
