//! Company rules as plugins, through the REST API: upload, bind, and the outcome each
//! example changes; faulty plugins; refused uploads; one company's rules never touch
//! another's requests.

use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;
use crate::receiver::Receiver;

fn component(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../plugins/examples/target/wasm32-wasip2/release/{name}.wasm",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}; run scripts/build-plugins first"))
}

async fn upload_raw(app: &TestApp, app_id: &str, bytes: Vec<u8>) -> reqwest::Response {
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name("plugin.wasm"),
        )
        .text("name", "regra")
        .text("version", "1.0.0");
    app.request(reqwest::Method::POST, "/api/v1/plugins", Some(app_id))
        .multipart(form)
        .send()
        .await
        .unwrap()
}

async fn upload(app: &TestApp, master: &str, name: &str) -> String {
    let body = json(upload_raw(app, master, component(name)).await, 201).await;
    assert_eq!(body["plugin"]["interface"], "0.1.0");
    body["plugin"]["id"].as_str().unwrap().to_owned()
}

async fn bind(app: &TestApp, master: &str, plugin: &str, bindings: Value) -> Value {
    json(
        app.put(
            &format!("/api/v1/plugins/{plugin}/bindings"),
            Some(master),
            json!({ "bindings": bindings }),
        )
        .await,
        200,
    )
    .await
}

async fn invocations(app: &TestApp, master: &str, plugin: &str) -> Vec<Value> {
    let body = json(
        app.get(
            &format!("/api/v1/plugins/{plugin}/invocations"),
            Some(master),
        )
        .await,
        200,
    )
    .await;
    body["invocations"].as_array().unwrap().clone()
}

async fn pix_key_policy_refuses_other_key_types(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.campaign(&master).await;
    let plugin = upload(&app, &master, "pix_key_policy").await;
    bind(
        &app,
        &master,
        &plugin,
        json!([{"hook": "check-pix-key", "accounts": null, "config": {}}]),
    )
    .await;
    let body = assert_error(
        app.create_pix_key(&campaign, "PHONE", "+5511912345678")
            .await,
        400,
        "PIX_KEY_TYPE_NOT_ALLOWED",
    )
    .await;
    assert_eq!(
        body["error"],
        "This company only registers EMAIL and EVP keys"
    );
    json(
        app.create_pix_key(&campaign, "EMAIL", "ok@empresa0.com.br")
            .await,
        201,
    )
    .await;
    let listed = json(app.list_pix_keys(&campaign).await, 200).await;
    assert_eq!(
        listed["pixKeys"].as_array().unwrap().len(),
        1,
        "the refused key was not saved"
    );
    let log = invocations(&app, &master, &plugin).await;
    let decisions: Vec<&str> = log
        .iter()
        .map(|i| i["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["ALLOW", "DENY"]);
    assert_eq!(log[1]["code"], "PIX_KEY_TYPE_NOT_ALLOWED");
    assert_eq!(log[0]["hook"], "check-pix-key");
}
db_test!(pix_key_policy_refuses_other_key_types);

async fn withdraw_window_and_daily_limit(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.directory(&[("saque@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 1000)
        .await;
    app.enable_withdraw_key_api(&account_id).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": "saque@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    let plugin = upload(&app, &master, "campaign_withdraw_window").await;
    let far = (cofre_server::store::now_millis() + 86_400_000).to_string();
    bind(&app, &master, &plugin, json!([{"hook": "authorize-withdraw", "accounts": [account_id], "config": {"opens_at_ms": far}}])).await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 100}))
            .await,
        400,
        "WITHDRAW_WINDOW_CLOSED",
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (1000, 0, 1000));
    bind(&app, &master, &plugin, json!([{"hook": "authorize-withdraw", "accounts": [account_id], "config": {"max_per_day": "1"}}])).await;
    json(
        app.withdraw(&campaign, &account_id, json!({"value": 100}))
            .await,
        200,
    )
    .await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 100}))
            .await,
        400,
        "WITHDRAW_DAILY_LIMIT",
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (900, 0, 900));
    // A binding for other accounts leaves this one alone.
    let (other, _) = app.campaign(&master).await;
    bind(&app, &master, &plugin, json!([{"hook": "authorize-withdraw", "accounts": [other], "config": {"max_per_day": "0"}}])).await;
    json(
        app.withdraw(&campaign, &account_id, json!({"value": 100}))
            .await,
        200,
    )
    .await;
}
db_test!(withdraw_window_and_daily_limit);

async fn charge_defaults_and_webhook_enrich_shape_what_goes_out(db: Db) {
    let app = spawn_app_with(db, |s| s.webhooks.workers = 0).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    let defaults = upload(&app, &master, "charge_defaults").await;
    bind(
        &app,
        &master,
        &defaults,
        json!([{"hook": "shape-charge", "accounts": null,
        "config": {"comment": "Campanha de Natal", "expires_in": "3600", "max_value": "5000"}}]),
    )
    .await;
    let enrich = upload(&app, &master, "webhook_enrich").await;
    bind(&app, &master, &enrich, json!([{"hook": "shape-webhook", "accounts": null, "config": {"campaign_label": "natal-2026"}}])).await;
    let hook =
        json!({"webhook": {"name": "n", "event": "OPENPIX:CHARGE_CREATED", "url": receiver.url}});
    json(app.post("/api/v1/webhook", Some(&master), hook).await, 201).await;

    let charge = json(
        app.create_charge(&campaign, json!({"correlationID": "c1", "value": 700}))
            .await,
        201,
    )
    .await;
    assert_eq!(charge["charge"]["comment"], "Campanha de Natal");
    assert_eq!(charge["charge"]["expiresIn"], 3600);
    assert_error(
        app.create_charge(&campaign, json!({"correlationID": "c2", "value": 5001}))
            .await,
        400,
        "CHARGE_VALUE_ABOVE_LIMIT",
    )
    .await;
    app.services.webhooks.deliver_due(10).await.unwrap();
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let payload = received[0].json();
    assert_eq!(payload["campaign"], "natal-2026");
    assert_eq!(payload["charge"]["correlationID"], "c1");
}
db_test!(charge_defaults_and_webhook_enrich_shape_what_goes_out);

async fn faulty_plugins_deny_with_plugin_failed_and_the_server_goes_on(db: Db) {
    let app = spawn_app_with(db, |s| s.plugins.deadline_ms = 200).await;
    let company = app.company(0, true).await;
    app.directory(&[("saque@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 1000)
        .await;
    app.enable_withdraw_key_api(&account_id).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": "saque@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    for (fixture, fragment) in [
        ("faulty_loop", "deadline"),
        ("faulty_alloc", "memory"),
        ("faulty_trap", "trapped"),
    ] {
        let plugin = upload(&app, &master, fixture).await;
        bind(
            &app,
            &master,
            &plugin,
            json!([{"hook": "authorize-withdraw", "accounts": null, "config": {}}]),
        )
        .await;
        assert_error(
            app.withdraw(&campaign, &account_id, json!({"value": 10}))
                .await,
            400,
            "PLUGIN_FAILED",
        )
        .await;
        let log = invocations(&app, &master, &plugin).await;
        assert_eq!(log[0]["decision"], "ERROR");
        assert!(
            log[0]["error"].as_str().unwrap().contains(fragment),
            "{fixture}: {}",
            log[0]["error"]
        );
        // Other requests are answered as usual.
        assert_eq!(
            json(app.get("/healthz", None).await, 200).await["status"],
            "OK"
        );
        json(app.create_pix_key(&campaign, "EVP", "").await, 201).await;
        assert_eq!(
            json(
                app.delete(&format!("/api/v1/plugins/{plugin}"), Some(&master))
                    .await,
                200
            )
            .await["status"],
            "OK"
        );
    }
    // With the faulty rules deleted, the withdrawal goes through.
    json(
        app.withdraw(&campaign, &account_id, json!({"value": 10}))
            .await,
        200,
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (990, 0, 990));
}
db_test!(faulty_plugins_deny_with_plugin_failed_and_the_server_goes_on);

async fn refused_uploads_store_nothing(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let api = app.application(&company, "API", &[], &[]).await;
    assert_error(
        upload_raw(&app, &master, b"garbage, not wasm".to_vec()).await,
        422,
        "PLUGIN_INVALID",
    )
    .await;
    assert_error(
        upload_raw(&app, &master, b"\0asm\x01\0\0\0".to_vec()).await,
        422,
        "PLUGIN_INVALID",
    )
    .await;
    let body = assert_error(
        upload_raw(&app, &master, component("faulty_future_version")).await,
        422,
        "PLUGIN_INTERFACE_UNSUPPORTED",
    )
    .await;
    assert!(body["error"].as_str().unwrap().contains("9.9.9"));
    assert_error(
        upload_raw(&app, &master, vec![]).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_error(
        upload_raw(&app, &api, component("pix_key_policy")).await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;
    let listed = json(app.get("/api/v1/plugins", Some(&master)).await, 200).await;
    assert_eq!(listed["plugins"], json!([]));
    let plugin = upload(&app, &master, "pix_key_policy").await;
    let body = assert_error(
        app.put(
            &format!("/api/v1/plugins/{plugin}/bindings"),
            Some(&master),
            json!({"bindings": [{"hook": "nope", "accounts": null}]}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "bindings[0].hook");
}
db_test!(refused_uploads_store_nothing);

async fn a_plugin_of_one_company_never_runs_for_another(db: Db) {
    let app = spawn_app(db).await;
    let ours = app.company(0, true).await;
    let theirs = app.company(1, true).await;
    let our_master = app.master(&ours).await;
    let their_master = app.master(&theirs).await;
    let plugin = upload(&app, &our_master, "pix_key_policy").await;
    bind(
        &app,
        &our_master,
        &plugin,
        json!([{"hook": "check-pix-key", "accounts": null, "config": {"allowed_types": "EVP"}}]),
    )
    .await;
    json(
        app.create_pix_key(&their_master, "EMAIL", "livre@empresa1.com.br")
            .await,
        201,
    )
    .await;
    assert!(
        invocations(&app, &our_master, &plugin).await.is_empty(),
        "never invoked for the other company"
    );
    assert_error(
        app.create_pix_key(&our_master, "EMAIL", "presa@empresa0.com.br")
            .await,
        400,
        "PIX_KEY_TYPE_NOT_ALLOWED",
    )
    .await;
    // Theirs cannot see, bind, read or delete ours.
    assert_eq!(
        json(app.get("/api/v1/plugins", Some(&their_master)).await, 200).await["plugins"],
        json!([])
    );
    assert_error(
        app.put(
            &format!("/api/v1/plugins/{plugin}/bindings"),
            Some(&their_master),
            json!({"bindings": []}),
        )
        .await,
        404,
        "PLUGIN_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get(
            &format!("/api/v1/plugins/{plugin}/invocations"),
            Some(&their_master),
        )
        .await,
        404,
        "PLUGIN_NOT_FOUND",
    )
    .await;
    assert_error(
        app.delete(&format!("/api/v1/plugins/{plugin}"), Some(&their_master))
            .await,
        404,
        "PLUGIN_NOT_FOUND",
    )
    .await;
    // Our bindings may not name their accounts.
    assert_error(
        app.put(
            &format!("/api/v1/plugins/{plugin}/bindings"),
            Some(&our_master),
            json!({"bindings": [{"hook": "check-pix-key", "accounts": [theirs.main_account_id]}]}),
        )
        .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
}
db_test!(a_plugin_of_one_company_never_runs_for_another);

/// Found by schemathesis (scripts/fuzz): an upload that was not multipart got axum's
/// own `text/plain` 400 instead of an API error.
async fn a_plugin_upload_that_is_not_multipart_is_415_multipart_required(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let no_body = app
        .request(reqwest::Method::POST, "/api/v1/plugins", Some(&master))
        .send()
        .await
        .unwrap();
    assert_error(no_body, 415, "MULTIPART_REQUIRED").await;
    let json_body = app
        .post("/api/v1/plugins", Some(&master), json!({"name": "regra"}))
        .await;
    assert_error(json_body, 415, "MULTIPART_REQUIRED").await;
    let no_boundary = app
        .request(reqwest::Method::POST, "/api/v1/plugins", Some(&master))
        .header("content-type", "multipart/form-data")
        .body("--x--")
        .send()
        .await
        .unwrap();
    assert_error(no_boundary, 415, "MULTIPART_REQUIRED").await;
    assert_eq!(app.count("plugins").await, 0);
}
db_test!(a_plugin_upload_that_is_not_multipart_is_415_multipart_required);
