//! Webhooks: registration, the transactional outbox, signed at-least-once delivery with
//! retries, two workers sharing one database, deletion, resend and key rotation.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use cofre_server::service::Services;
use cofre_server::service::clock::ManualClock;
use rsa::pkcs1v15::{Signature, VerifyingKey};
use rsa::pkcs8::DecodePublicKey;
use rsa::signature::Verifier;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;
use crate::receiver::Receiver;

/// The app without background workers: tests deliver by hand, deterministically.
async fn quiet_app(db: Db) -> TestApp {
    spawn_app_with(db, |s| s.webhooks.workers = 0).await
}

async fn register(app: &TestApp, app_id: &str, event: &str, url: &str) -> Value {
    let body = json!({"webhook": {"name": event, "event": event, "url": url, "authorization": "Bearer receiver-secret",
                                  "headers": {"x-campaign": "natal"}}});
    json(app.post("/api/v1/webhook", Some(app_id), body).await, 201).await["webhook"].clone()
}

/// Verifies `x-webhook-signature` of a delivery with the keys the public endpoint lists.
async fn verify(app: &TestApp, received: &crate::receiver::Received) -> bool {
    let keys = json(app.get("/api/v1/webhook/public-keys", None).await, 200).await;
    let signature = base64::engine::general_purpose::STANDARD
        .decode(received.header("x-webhook-signature"))
        .unwrap();
    let signature = Signature::try_from(signature.as_slice()).unwrap();
    keys["public_keys"].as_array().unwrap().iter().any(|k| {
        let key = rsa::RsaPublicKey::from_public_key_pem(k["key"].as_str().unwrap()).unwrap();
        VerifyingKey::<sha2::Sha256>::new(key)
            .verify(&received.body, &signature)
            .is_ok()
    })
}

async fn deliveries_are_signed_over_the_raw_body_and_verify_with_the_published_key(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    for event in [
        "OPENPIX:CHARGE_CREATED",
        "OPENPIX:CHARGE_COMPLETED",
        "OPENPIX:TRANSACTION_RECEIVED",
    ] {
        register(&app, &master, event, &receiver.url).await;
    }
    json(
        app.create_charge(&campaign, json!({"correlationID": "c1", "value": 990}))
            .await,
        201,
    )
    .await;
    json(app.pay_charge(&campaign, "c1").await, 200).await;
    assert_eq!(app.services.webhooks.deliver_due(100).await.unwrap(), 3);

    let received = receiver.received();
    assert_eq!(received.len(), 3);
    let mut events: Vec<String> = received
        .iter()
        .map(|r| r.json()["event"].as_str().unwrap().to_owned())
        .collect();
    events.sort();
    assert_eq!(
        events,
        [
            "OPENPIX:CHARGE_COMPLETED",
            "OPENPIX:CHARGE_CREATED",
            "OPENPIX:TRANSACTION_RECEIVED"
        ]
    );
    for r in &received {
        assert!(verify(&app, r).await, "signature verifies");
        assert_eq!(r.header("authorization"), "Bearer receiver-secret");
        assert_eq!(r.header("x-campaign"), "natal");
        assert_eq!(r.header("content-type"), "application/json");
        let body = r.json();
        assert_eq!(body["charge"]["correlationID"], "c1");
        assert_eq!(r.header("x-event-id"), body["eventId"].as_str().unwrap());
    }
    let completed = received
        .iter()
        .find(|r| r.json()["event"] == "OPENPIX:CHARGE_COMPLETED")
        .unwrap()
        .json();
    assert_eq!(completed["charge"]["status"], "COMPLETED");
    assert_eq!(completed["pix"]["value"], 990);
    // Nothing is sent twice once delivered.
    assert_eq!(app.services.webhooks.deliver_due(100).await.unwrap(), 0);
    // A tampered body does not verify.
    let mut tampered = received[0].clone();
    tampered.body = axum::body::Bytes::from(
        String::from_utf8(tampered.body.to_vec())
            .unwrap()
            .replace("c1", "c2"),
    );
    assert!(!verify(&app, &tampered).await);
}
db_test!(deliveries_are_signed_over_the_raw_body_and_verify_with_the_published_key);

async fn a_receiver_that_fails_twice_gets_the_event_three_times_with_growing_waits(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[500, 503]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let webhook = register(&app, &master, "OPENPIX:TRANSACTION_RECEIVED", &receiver.url).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 100).await,
        200,
    )
    .await;

    let clock = ManualClock::new(cofre_server::store::now_millis() + 1_000);
    let services = Services::with_clock(app.services.store.clone(), clock.clone() as Arc<_>);
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 1);
    assert_eq!(
        services.webhooks.deliver_due(10).await.unwrap(),
        0,
        "not due before its wait"
    );
    clock.advance(9_999);
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 0);
    clock.advance(1);
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 1);
    clock.advance(19_999);
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 0);
    clock.advance(1);
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 1);

    let received = receiver.received();
    assert_eq!(received.len(), 3, "two failures, then once more");
    let ids: Vec<String> = received.iter().map(|r| r.header("x-event-id")).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "the same event each time"
    );

    let id = webhook["id"].as_str().unwrap();
    let log = json(
        app.get(&format!("/api/v1/webhook/{id}/deliveries"), Some(&master))
            .await,
        200,
    )
    .await;
    let delivery = &log["deliveries"][0];
    assert_eq!(delivery["status"], "DELIVERED");
    let attempts = delivery["attempts"].as_array().unwrap();
    assert_eq!(
        attempts
            .iter()
            .map(|a| a["statusCode"].as_i64().unwrap())
            .collect::<Vec<_>>(),
        [500, 503, 200]
    );
    let waits: Vec<i64> = attempts[..2]
        .iter()
        .map(|a| {
            let at = |f: &str| {
                time::OffsetDateTime::parse(
                    a[f].as_str().unwrap(),
                    &time::format_description::well_known::Rfc3339,
                )
                .unwrap()
            };
            (at("nextResendAt") - at("time")).whole_seconds()
        })
        .collect();
    assert_eq!(waits, [10, 20]);
    assert!(attempts[0]["error"].as_str().unwrap().contains("500"));
    assert!(attempts[2]["nextResendAt"].is_null());
}
db_test!(a_receiver_that_fails_twice_gets_the_event_three_times_with_growing_waits);

async fn an_event_of_a_rolled_back_transaction_is_never_sent(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    register(&app, &master, "OPENPIX:MOVEMENT_CONFIRMED", &receiver.url).await;
    {
        let mut tx = app.services.store.begin().await.unwrap();
        cofre_server::service::events::emit(
            &mut tx,
            0,
            &company.id,
            None,
            "OPENPIX:MOVEMENT_CONFIRMED",
            json!({}),
        )
        .await
        .unwrap();
        // Dropped without commit: rolled back.
    }
    // A real change that fails: a withdrawal without funds emits nothing.
    app.directory(&[("t@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;
    app.enable_withdraw_key_api(&company.main_account_id).await;
    json(
        app.post_withdraw_key(&master, json!({"pixKey": "t@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    assert_error(
        app.withdraw(&master, &company.main_account_id, json!({"value": 1}))
            .await,
        400,
        "INSUFFICIENT_FUNDS",
    )
    .await;
    assert_eq!(
        cofre_server::store::events::count_events(app.services.store.pool(), &company.id)
            .await
            .unwrap(),
        0
    );
    assert_eq!(app.services.webhooks.deliver_due(10).await.unwrap(), 0);
    assert!(receiver.received().is_empty());
}
db_test!(an_event_of_a_rolled_back_transaction_is_never_sent);

async fn two_workers_on_one_database_never_deliver_an_event_twice(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    register(&app, &master, "OPENPIX:TRANSACTION_RECEIVED", &receiver.url).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    for _ in 0..60 {
        json(
            app.sandbox_pix(&campaign, "doe@empresa0.com.br", 1).await,
            200,
        )
        .await;
    }
    // Two "processes": separate pools on the same database, each with its own workers.
    let second = Services::new(
        cofre_server::store::Store::connect(&app.db.url)
            .await
            .unwrap(),
    );
    let run = |services: Services| async move {
        let mut sent = 0;
        loop {
            let n = services.webhooks.deliver_due(7).await.unwrap();
            if n == 0 {
                return sent;
            }
            sent += n;
        }
    };
    let (a, b) = tokio::join!(run(app.services.clone()), run(second));
    assert_eq!(a + b, 60, "every delivery attempted once ({a} + {b})");
    let mut per_event: HashMap<String, usize> = HashMap::new();
    for r in receiver.received() {
        *per_event.entry(r.header("x-event-id")).or_default() += 1;
    }
    assert_eq!(per_event.len(), 60);
    assert!(per_event.values().all(|n| *n == 1), "no event twice");
}
db_test!(two_workers_on_one_database_never_deliver_an_event_twice);

async fn deleting_a_webhook_stops_its_deliveries(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let webhook = register(&app, &master, "OPENPIX:TRANSACTION_RECEIVED", &receiver.url).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5).await,
        200,
    )
    .await;
    let id = webhook["id"].as_str().unwrap();
    assert_eq!(
        json(
            app.delete(&format!("/api/v1/webhook/{id}"), Some(&master))
                .await,
            200
        )
        .await,
        json!({"status": "OK"})
    );
    assert_eq!(app.services.webhooks.deliver_due(10).await.unwrap(), 0);
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5).await,
        200,
    )
    .await;
    assert_eq!(
        app.services.webhooks.deliver_due(10).await.unwrap(),
        0,
        "no new deliveries either"
    );
    assert!(receiver.received().is_empty());
    let listed = json(app.get("/api/v1/webhook", Some(&master)).await, 200).await;
    assert_eq!(listed["webhooks"], json!([]));
    assert_error(
        app.delete(&format!("/api/v1/webhook/{id}"), Some(&master))
            .await,
        404,
        "WEBHOOK_NOT_FOUND",
    )
    .await;
}
db_test!(deleting_a_webhook_stops_its_deliveries);

async fn after_eight_failures_it_gives_up_and_a_manual_resend_delivers(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    receiver.always(500);
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let webhook = register(&app, &master, "OPENPIX:TRANSACTION_RECEIVED", &receiver.url).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5).await,
        200,
    )
    .await;
    let clock = ManualClock::new(cofre_server::store::now_millis() + 1_000);
    let services = Services::with_clock(app.services.store.clone(), clock.clone() as Arc<_>);
    for _ in 0..8 {
        assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 1);
        clock.advance(1_300_000);
    }
    assert_eq!(
        services.webhooks.deliver_due(10).await.unwrap(),
        0,
        "given up"
    );
    let id = webhook["id"].as_str().unwrap();
    let log = json(
        app.get(&format!("/api/v1/webhook/{id}/deliveries"), Some(&master))
            .await,
        200,
    )
    .await;
    let delivery = &log["deliveries"][0];
    assert_eq!(delivery["status"], "FAILED");
    assert_eq!(delivery["attempts"].as_array().unwrap().len(), 8);
    assert!(delivery["nextResendAt"].is_null());

    receiver.recover();
    let delivery_id = delivery["id"].as_str().unwrap();
    let resent = json(
        app.post(
            &format!("/api/v1/webhook/deliveries/{delivery_id}/resend"),
            Some(&master),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(resent["delivery"]["status"], "PENDING");
    assert_eq!(services.webhooks.deliver_due(10).await.unwrap(), 1);
    assert_eq!(receiver.received().len(), 9);
    let stranger = app.master(&app.company(1, true).await).await;
    assert_error(
        app.post(
            &format!("/api/v1/webhook/deliveries/{delivery_id}/resend"),
            Some(&stranger),
            json!({}),
        )
        .await,
        404,
        "DELIVERY_NOT_FOUND",
    )
    .await;
}
db_test!(after_eight_failures_it_gives_up_and_a_manual_resend_delivers);

async fn registration_refusals_listing_and_the_event_list(db: Db) {
    let app = quiet_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let body = assert_error(
        app.post(
            "/api/v1/webhook",
            Some(&master),
            json!({"webhook": {"name": "x", "event": "NOPE", "url": "ftp://x"}}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let fields: Vec<&str> = body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["webhook.event", "webhook.url"]);
    register(
        &app,
        &master,
        "OPENPIX:CHARGE_CREATED",
        "http://127.0.0.1:9/a",
    )
    .await;
    register(
        &app,
        &master,
        "OPENPIX:CHARGE_EXPIRED",
        "http://127.0.0.1:9/b",
    )
    .await;
    let filtered = json(
        app.get("/api/v1/webhook?url=http://127.0.0.1:9/b", Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(filtered["webhooks"].as_array().unwrap().len(), 1);
    assert_eq!(filtered["webhooks"][0]["hasAuthorization"], true);
    assert_eq!(filtered["pageInfo"]["totalCount"], 1);
    let events = json(app.get("/api/v1/webhook/events", Some(&master)).await, 200).await;
    let names: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for name in [
        "OPENPIX:CHARGE_CREATED",
        "OPENPIX:CHARGE_COMPLETED",
        "OPENPIX:CHARGE_EXPIRED",
        "OPENPIX:TRANSACTION_RECEIVED",
        "DISPUTE_CREATE",
    ] {
        assert!(names.contains(&name), "{name}");
    }
    let stranger = app.master(&app.company(1, true).await).await;
    let id = filtered["webhooks"][0]["id"].as_str().unwrap();
    assert_error(
        app.delete(&format!("/api/v1/webhook/{id}"), Some(&stranger))
            .await,
        404,
        "WEBHOOK_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get(&format!("/api/v1/webhook/{id}/deliveries"), Some(&stranger))
            .await,
        404,
        "WEBHOOK_NOT_FOUND",
    )
    .await;

    let strict = spawn_app_with(db_of(&app), |s| s.webhooks.allow_private_networks = false).await;
    let c = strict.company(0, true).await;
    let m = strict.master(&c).await;
    assert_error(
        strict.post("/api/v1/webhook", Some(&m), json!({"webhook": {"name": "x", "event": "OPENPIX:CHARGE_CREATED", "url": "http://127.0.0.1:8080/"}})).await,
        400,
        "WEBHOOK_URL_NOT_ALLOWED",
    )
    .await;
}
db_test!(registration_refusals_listing_and_the_event_list);

fn db_of(app: &TestApp) -> Db {
    if app.db.url.starts_with("sqlite") {
        Db::Sqlite
    } else {
        Db::Postgres
    }
}

async fn rotated_keys_stay_published_and_new_deliveries_use_the_new_one(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    register(&app, &master, "OPENPIX:TRANSACTION_RECEIVED", &receiver.url).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    let before = json(app.get("/api/v1/webhook/public-keys", None).await, 200).await;
    assert_eq!(before["public_keys"].as_array().unwrap().len(), 1);
    let old = before["public_keys"][0]["key_identifier"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(old.len(), 64);
    assert!(
        before["public_keys"][0]["key"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN PUBLIC KEY-----")
    );

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args([
            "--database-url",
            &app.db.url,
            "webhook",
            "rotate-key",
            "--json",
        ])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = json(app.get("/api/v1/webhook/public-keys", None).await, 200).await;
    let keys = after["public_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    let current: Vec<&Value> = keys.iter().filter(|k| k["is_current"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_ne!(current[0]["key_identifier"], old.as_str());

    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5).await,
        200,
    )
    .await;
    app.services.webhooks.deliver_due(10).await.unwrap();
    let r = &receiver.received()[0];
    assert_eq!(
        r.header("x-webhook-key-id"),
        current[0]["key_identifier"].as_str().unwrap()
    );
    assert!(verify(&app, r).await);
}
db_test!(rotated_keys_stay_published_and_new_deliveries_use_the_new_one);

async fn a_webhook_linked_to_an_application_names_it_in_the_payload(db: Db) {
    let app = quiet_app(db).await;
    let receiver = Receiver::start(&[]).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    let body = json!({"webhook": {"name": "linked", "event": "OPENPIX:CHARGE_CREATED", "url": receiver.url,
                                  "application": client_id_of(&campaign)}});
    json(app.post("/api/v1/webhook", Some(&master), body).await, 201).await;
    json(
        app.create_charge(&campaign, json!({"correlationID": "c", "value": 5}))
            .await,
        201,
    )
    .await;
    app.services.webhooks.deliver_due(10).await.unwrap();
    let payload = receiver.received()[0].json();
    assert_eq!(
        payload["application"]["clientId"],
        client_id_of(&campaign).as_str()
    );
    assert_eq!(payload["application"]["type"], "API");
    assert_error(
        app.post("/api/v1/webhook", Some(&master), json!({"webhook": {"name": "x", "event": "OPENPIX:CHARGE_CREATED", "url": receiver.url, "application": "Client_Id_nope"}})).await,
        404,
        "APPLICATION_NOT_FOUND",
    )
    .await;
}
db_test!(a_webhook_linked_to_an_application_names_it_in_the_payload);

/// Found by scripts/crash: a server killed before its first delivery had no signing key
/// yet, and after the restart every delivery of the first round made one. All but one
/// lost the race on the unique index and then read the winner's key on a second
/// connection while still holding their write transaction: on SQLite every other write
/// queued behind it until the busy timeout, and requests failed with 500 "database is
/// locked". The first key is now made once per process, the loser's transaction ends
/// before the read, and every concurrent signature succeeds with that one key.
async fn concurrent_first_deliveries_make_one_signing_key(db: Db) {
    let app = quiet_app(db).await;
    let signer = app.services.webhooks.signer().clone();
    let now = app.services.clock.now_millis();
    let signed = futures_util::future::join_all((0..32).map(|i| {
        let signer = signer.clone();
        async move { signer.sign(format!("{{\"n\":{i}}}").as_bytes(), now).await }
    }))
    .await;
    let keys: std::collections::HashSet<String> = signed
        .into_iter()
        .map(|s| s.expect("every delivery is signed").0)
        .collect();
    assert_eq!(keys.len(), 1, "one key signs them all");
    assert_eq!(app.count("webhook_keys").await, 1);
    // One key generation in this process, not one per delivery in flight (32 of them
    // once kept SQLite's write lock behind a busy timeout).
    assert_eq!(signer.keys_generated(), 1);
}
db_test!(concurrent_first_deliveries_make_one_signing_key);
