//! Charges: BR Code, public QR image and payment page, payment, expiry, idempotency.

use std::sync::Arc;

use cofre_server::service::Services;
use cofre_server::service::br_code::{decode, tlv};
use cofre_server::service::charges::NewCharge;
use cofre_server::service::clock::ManualClock;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

fn field<'a>(fields: &'a [(String, String)], id: &str) -> &'a str {
    fields
        .iter()
        .find(|(k, _)| k == id)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("field {id}"))
}

async fn the_whole_life_of_a_charge(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "natal@empresa0.com.br", 0)
        .await;

    let created = json(
        app.create_charge(
            &campaign,
            json!({"correlationID": "pedido-1", "value": 12345, "comment": "Doação <Natal>"}),
        )
        .await,
        201,
    )
    .await;
    let charge = &created["charge"];
    assert_eq!(charge["status"], "ACTIVE");
    assert_eq!(charge["value"], 12345);
    assert_eq!(charge["expiresIn"], 86400);
    assert_eq!(created["correlationID"], "pedido-1");
    assert_eq!(created["brCode"], charge["brCode"]);
    let txid = charge["transactionID"].as_str().unwrap();
    assert_eq!(txid.len(), 32);

    // The BR Code, field by field, with a correct CRC.
    let fields = decode(charge["brCode"].as_str().unwrap()).unwrap();
    assert_eq!(field(&fields, "00"), "01");
    assert_eq!(field(&fields, "01"), "12");
    let account = tlv(field(&fields, "26")).unwrap();
    assert_eq!(account[0].1, "br.gov.bcb.pix");
    assert_eq!(account[1].1, "natal@empresa0.com.br");
    assert_eq!(field(&fields, "53"), "986");
    assert_eq!(field(&fields, "54"), "123.45");
    assert_eq!(field(&fields, "58"), "BR");
    assert_eq!(field(&fields, "59"), "Empresa 0");
    assert!(field(&fields, "60").len() <= 15);
    assert_eq!(tlv(field(&fields, "62")).unwrap()[0].1, txid);

    // The public QR image and payment page, without any AppID.
    let png = reqwest::get(charge["qrCodeImage"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(png.headers()["content-type"], "image/png");
    assert!(png.bytes().await.unwrap().starts_with(b"\x89PNG"));
    let page = reqwest::get(charge["paymentLinkUrl"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("R$ 123,45") && page.contains("Doação &lt;Natal&gt;"));
    assert!(page.contains(&charge["brCode"].as_str().unwrap().replace('&', "&amp;")));

    // Every id reaches the charge.
    for id in ["pedido-1", txid, charge["globalID"].as_str().unwrap()] {
        let found = json(
            app.get(&format!("/api/v1/charge/{id}"), Some(&campaign))
                .await,
            200,
        )
        .await;
        assert_eq!(found["charge"]["transactionID"], txid);
    }

    // Paid: COMPLETED, the account credited, one statement line, the books balanced.
    let paid = json(app.pay_charge(&campaign, "pedido-1").await, 200).await;
    assert_eq!(paid["charge"]["status"], "COMPLETED");
    assert!(paid["charge"]["paidAt"].is_string());
    assert_eq!(app.balance(&campaign, &account_id).await, (12345, 0, 12345));
    let statement = json(app.get("/api/v1/statement", Some(&campaign)).await, 200).await;
    let lines = statement["statement"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "PIX_IN");
    assert_eq!(lines[0]["value"], 12345);
    assert_eq!(lines[0]["endToEndId"], paid["transaction"]["endToEndId"]);
    assert_eq!(statement["pageInfo"]["totalCount"], 1);
    assert_error(
        app.pay_charge(&campaign, "pedido-1").await,
        409,
        "CHARGE_NOT_ACTIVE",
    )
    .await;
    assert_eq!(
        app.balance(&campaign, &account_id).await,
        (12345, 0, 12345),
        "paid once"
    );
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
    assert_error(
        app.delete(&format!("/api/v1/charge/{txid}"), Some(&campaign))
            .await,
        409,
        "CHARGE_PAID",
    )
    .await;
}
db_test!(the_whole_life_of_a_charge);

async fn charge_refusals(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, no_key) = app.campaign(&master).await;
    assert_error(
        app.create_charge(&no_key, json!({"correlationID": "a", "value": 100}))
            .await,
        400,
        "ACCOUNT_WITHOUT_PIX_KEY",
    )
    .await;
    json(app.create_pix_key(&no_key, "EVP", "").await, 201).await;
    let body = assert_error(
        app.create_charge(
            &no_key,
            json!({"value": 0, "expiresIn": 10, "comment": "x".repeat(141)}),
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
    assert_eq!(fields, ["correlationID", "value", "expiresIn", "comment"]);
    let body = assert_error(
        app.create_charge(
            &no_key,
            json!({"correlationID": "b", "value": 100, "customer": {"email": "nope"}}),
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
    assert_eq!(fields, ["customer.name", "customer.email"]);
    let listed = json(app.get("/api/v1/charge", Some(&no_key)).await, 200).await;
    assert_eq!(listed["charges"], json!([]), "nothing saved");
    assert_error(
        app.get("/api/v1/charge/nope", Some(&no_key)).await,
        404,
        "CHARGE_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get("/api/v1/charge?status=PAID", Some(&no_key)).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_error(
        app.get("/api/v1/charge?start=yesterday", Some(&no_key))
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
}
db_test!(charge_refusals);

async fn twenty_concurrent_identical_creates_give_one_charge(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    let body = json!({"correlationID": "mesmo", "value": 500, "customer": {"name": "Ana", "email": "ana@x.com"}});
    let answers =
        futures_util::future::join_all((0..20).map(|_| app.create_charge(&campaign, body.clone())))
            .await;
    let mut created = 0;
    let mut charges: Vec<Value> = Vec::new();
    for answer in answers {
        let status = answer.status().as_u16();
        assert!(status == 201 || status == 200, "{status}");
        created += usize::from(status == 201);
        charges.push(answer.json::<Value>().await.unwrap()["charge"].clone());
    }
    assert_eq!(created, 1);
    assert!(charges.windows(2).all(|w| w[0] == w[1]), "equal answers");
    let again = app
        .post("/api/v1/charge?return_existing=true", Some(&campaign), body)
        .await;
    assert_eq!(json(again, 200).await["charge"], charges[0]);
    assert_error(
        app.create_charge(&campaign, json!({"correlationID": "mesmo", "value": 501}))
            .await,
        409,
        "CORRELATION_ID_CONFLICT",
    )
    .await;
    let listed = json(app.get("/api/v1/charge", Some(&campaign)).await, 200).await;
    assert_eq!(listed["pageInfo"]["totalCount"], 1);
    let customers = json(app.get("/api/v1/customer", Some(&campaign)).await, 200).await;
    assert_eq!(customers["pageInfo"]["totalCount"], 1, "one customer too");
}
db_test!(twenty_concurrent_identical_creates_give_one_charge);

async fn charges_expire_after_their_expiry_and_cannot_be_paid(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    let clock = ManualClock::new(cofre_server::store::now_millis());
    let services = Services::with_clock(app.services.store.clone(), clock.clone() as Arc<_>);
    let caller = services
        .applications
        .authenticate(Some(&campaign))
        .await
        .unwrap();
    let new = NewCharge {
        correlation_id: Some("curta".into()),
        value: Some(100),
        expires_in: Some(300),
        ..Default::default()
    };
    services.charges.create(&caller, new).await.unwrap();
    clock.advance(299_000);
    assert!(services.charges.expire_due().await.unwrap().is_empty());
    clock.advance(1_000);
    assert_eq!(services.charges.expire_due().await.unwrap().len(), 1);
    let charge = json(app.get("/api/v1/charge/curta", Some(&campaign)).await, 200).await;
    assert_eq!(charge["charge"]["status"], "EXPIRED");
    let expired = json(
        app.get("/api/v1/charge?status=EXPIRED", Some(&campaign))
            .await,
        200,
    )
    .await;
    assert_eq!(expired["charges"].as_array().unwrap().len(), 1);
    assert_error(
        app.pay_charge(&campaign, "curta").await,
        409,
        "CHARGE_NOT_ACTIVE",
    )
    .await;
}
db_test!(charges_expire_after_their_expiry_and_cannot_be_paid);

async fn deleting_an_unpaid_charge_frees_it(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    json(
        app.create_charge(&campaign, json!({"correlationID": "apagar", "value": 100}))
            .await,
        201,
    )
    .await;
    let deleted = json(
        app.delete("/api/v1/charge/apagar", Some(&campaign)).await,
        200,
    )
    .await;
    assert_eq!(deleted, json!({"status": "OK"}));
    assert_error(
        app.get("/api/v1/charge/apagar", Some(&campaign)).await,
        404,
        "CHARGE_NOT_FOUND",
    )
    .await;
    assert_error(
        app.pay_charge(&campaign, "apagar").await,
        404,
        "CHARGE_NOT_FOUND",
    )
    .await;
    // The correlationID is free again.
    json(
        app.create_charge(&campaign, json!({"correlationID": "apagar", "value": 200}))
            .await,
        201,
    )
    .await;
    // Another campaign of the company does not see it.
    let (_, other) = app.funded_campaign(&master, "b@empresa0.com.br", 0).await;
    assert_error(
        app.get("/api/v1/charge/apagar", Some(&other)).await,
        404,
        "CHARGE_NOT_FOUND",
    )
    .await;
}
db_test!(deleting_an_unpaid_charge_frees_it);

async fn static_qr_codes_under_both_names(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    let created = json(
        app.post(
            "/api/v1/qrcode-static",
            Some(&campaign),
            json!({"name": "Cofrinho", "correlationID": "qr-1", "value": 1000}),
        )
        .await,
        201,
    )
    .await;
    let code = &created["pixQrCode"];
    let fields = decode(code["brCode"].as_str().unwrap()).unwrap();
    assert_eq!(field(&fields, "01"), "11");
    assert_eq!(field(&fields, "54"), "10.00");
    assert_eq!(
        tlv(field(&fields, "62")).unwrap()[0].1,
        code["identifier"].as_str().unwrap()
    );
    let png = reqwest::get(code["qrCodeImage"].as_str().unwrap())
        .await
        .unwrap();
    assert!(png.bytes().await.unwrap().starts_with(b"\x89PNG"));
    let same = json(
        app.post(
            "/api/v1/pixQrCode",
            Some(&campaign),
            json!({"name": "Cofrinho", "correlationID": "qr-1", "value": 1000}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(same["pixQrCode"]["identifier"], code["identifier"]);
    let open = json(
        app.post(
            "/api/v1/pixQrCode",
            Some(&campaign),
            json!({"name": "Livre", "correlationID": "qr-2"}),
        )
        .await,
        201,
    )
    .await;
    assert!(
        decode(open["pixQrCode"]["brCode"].as_str().unwrap())
            .unwrap()
            .iter()
            .all(|(id, _)| id != "54")
    );
    let listed = json(app.get("/api/v1/pixQrCode", Some(&campaign)).await, 200).await;
    assert_eq!(listed["pageInfo"]["totalCount"], 2);
    let by_id = json(
        app.get(
            &format!(
                "/api/v1/qrcode-static/{}",
                code["identifier"].as_str().unwrap()
            ),
            Some(&campaign),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(by_id["pixQrCode"]["correlationID"], "qr-1");
    assert_error(
        app.post(
            "/api/v1/qrcode-static",
            Some(&campaign),
            json!({"name": "x", "correlationID": "qr-3", "pixKey": "outra@x.com"}),
        )
        .await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
}
db_test!(static_qr_codes_under_both_names);

/// Found by the br_code_round_trip fuzz target (scripts/fuzz): any positive value was
/// taken and written into the BR Code's amount field, which holds at most 13 characters
/// (`9999999999.99`); a larger value made a code no bank reads.
async fn values_beyond_what_a_br_code_carries_are_refused(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    for value in [1_000_000_000_000_i64, i64::MAX] {
        let body = assert_error(
            app.create_charge(&campaign, json!({"correlationID": "big", "value": value}))
                .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(body["details"][0]["field"], "value");
        let body = assert_error(
            app.post(
                "/api/v1/qrcode-static",
                Some(&campaign),
                json!({"name": "Cofrinho", "correlationID": "big", "value": value}),
            )
            .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(body["details"][0]["field"], "value");
    }
    assert_eq!(app.count("charges").await, 0);
    assert_eq!(app.count("static_qr_codes").await, 0);

    // The largest value is taken, and its code carries it.
    let created = json(
        app.create_charge(
            &campaign,
            json!({"correlationID": "max", "value": 999_999_999_999_i64}),
        )
        .await,
        201,
    )
    .await;
    let code = created["brCode"].as_str().unwrap();
    let fields = decode(code).unwrap();
    assert!(fields.contains(&("54".into(), "9999999999.99".into())));
}
db_test!(values_beyond_what_a_br_code_carries_are_refused);

/// Found by schemathesis (scripts/fuzz): a static QR code naming a Pix key of another
/// account answered 404 `PIX_KEY_NOT_FOUND`, which neither create route documented.
async fn a_static_code_for_another_accounts_key_is_a_documented_404(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    json(
        app.create_pix_key(&master, "EMAIL", "master@empresa0.com.br")
            .await,
        201,
    )
    .await;
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    for path in ["/api/v1/qrcode-static", "/api/v1/pixQrCode"] {
        let response = app
            .post(
                path,
                Some(&campaign),
                json!({"name": "Cofrinho", "correlationID": path, "pixKey": "master@empresa0.com.br"}),
            )
            .await;
        assert_error(response, 404, "PIX_KEY_NOT_FOUND").await;
        let documented = &doc["paths"][path]["post"]["responses"]["404"];
        assert!(
            documented["description"]
                .as_str()
                .is_some_and(|d| d.contains("PIX_KEY_NOT_FOUND"))
        );
    }
    assert_eq!(app.count("static_qr_codes").await, 0);
}
db_test!(a_static_code_for_another_accounts_key_is_a_documented_404);
