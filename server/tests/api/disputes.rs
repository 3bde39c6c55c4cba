//! Disputes: opened by the sandbox's central bank, evidence by seed rules 4 and 7,
//! support's decision moving the blocked value, and the DISPUTE_* events.

use cofre_server::service::disputes::Resolution;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

async fn evidence(app: &TestApp, app_id: &str, id: &str, documents: Value) -> reqwest::Response {
    app.post(
        &format!("/api/v1/dispute/{id}/evidence"),
        Some(app_id),
        json!({ "documents": documents }),
    )
    .await
}

async fn documents_of(app: &TestApp, app_id: &str, id: &str) -> Vec<Value> {
    let body = json(
        app.get(&format!("/api/v1/dispute/{id}"), Some(app_id))
            .await,
        200,
    )
    .await;
    body["dispute"]["documents"].as_array().unwrap().clone()
}

async fn a_dispute_blocks_the_pix_and_is_visible_only_to_its_owners(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign, id) = app
        .disputed_campaign(&master, "doe@empresa0.com.br", 900)
        .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (0, 900, 900));

    let body = json(
        app.get(&format!("/api/v1/dispute/{id}"), Some(&campaign))
            .await,
        200,
    )
    .await;
    let dispute = &body["dispute"];
    assert_eq!(dispute["status"], "IN_REVIEW");
    assert_eq!(dispute["value"], 900);
    assert_eq!(dispute["companyBankAccount"], account_id);
    assert_eq!(dispute["documents"], json!([]));
    let pix = dispute["transactionID"].as_str().unwrap().to_owned();

    // One dispute per Pix.
    assert_error(
        app.post(
            "/api/v1/sandbox/dispute",
            Some(&campaign),
            json!({"transactionID": pix}),
        )
        .await,
        409,
        "DISPUTE_ALREADY_EXISTS",
    )
    .await;
    assert_eq!(app.count("disputes").await, 1);

    // Lists: the MASTER sees the company's, an account's AppID its own account's.
    let list = json(app.get("/api/v1/dispute", Some(&master)).await, 200).await;
    assert_eq!(list["disputes"][0]["id"], id.as_str());
    assert_eq!(list["pageInfo"]["totalCount"], 1);
    let (_, other_campaign) = app.campaign(&master).await;
    let list = json(app.get("/api/v1/dispute", Some(&other_campaign)).await, 200).await;
    assert_eq!(list["disputes"], json!([]));
    let list = json(
        app.get("/api/v1/dispute?status=ACCEPTED", Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(list["pageInfo"]["totalCount"], 0);
    assert_error(
        app.get("/api/v1/dispute?status=OPEN", Some(&master)).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_error(
        app.get(&format!("/api/v1/dispute/{id}"), Some(&other_campaign))
            .await,
        404,
        "DISPUTE_NOT_FOUND",
    )
    .await;
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    assert_error(
        app.get(&format!("/api/v1/dispute/{id}"), Some(&other_master))
            .await,
        404,
        "DISPUTE_NOT_FOUND",
    )
    .await;
    assert_error(
        evidence(
            &app,
            &other_master,
            &id,
            json!([{"url": "https://x.example/a"}]),
        )
        .await,
        404,
        "DISPUTE_NOT_FOUND",
    )
    .await;
    let reader = app
        .application(&company, "MASTER", &["DISPUTE_GET"], &[])
        .await;
    assert_error(
        evidence(&app, &reader, &id, json!([{"url": "https://x.example/a"}])).await,
        403,
        "SCOPE_MISSING",
    )
    .await;

    let events = app.events_of(&company.id).await;
    let created: Vec<_> = events.iter().filter(|e| e.0 == "DISPUTE_CREATE").collect();
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].2["dispute"]["id"], id.as_str());
    assert_eq!(created[0].2["dispute"]["status"], "IN_REVIEW");
}
db_test!(a_dispute_blocks_the_pix_and_is_visible_only_to_its_owners);

async fn evidence_follows_rule_4(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign, id) = app
        .disputed_campaign(&master, "doe@empresa0.com.br", 500)
        .await;
    let file = app.uploaded(&master, "DISPUTE_EVIDENCE").await;

    // A url works without any feature.
    let body = json(
        evidence(
            &app,
            &campaign,
            &id,
            json!([{"url": "https://loja.example/pedido/42", "description": "nota fiscal"}]),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        body["dispute"]["documents"][0]["url"],
        "https://loja.example/pedido/42"
    );
    assert_eq!(
        body["dispute"]["documents"][0]["description"],
        "nota fiscal"
    );

    // A fileId without DISPUTE_EVIDENCE_FILE_ID: 403 with errorCode, nothing saved,
    // even beside a valid url.
    let body = assert_error(
        evidence(
            &app,
            &campaign,
            &id,
            json!([{"url": "https://loja.example/b"}, {"fileId": file}]),
        )
        .await,
        403,
        "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED",
    )
    .await;
    assert_eq!(body["errorCode"], "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED");
    assert_eq!(documents_of(&app, &campaign, &id).await.len(), 1);

    app.enable_feature(&company, "DISPUTE_EVIDENCE_FILE_ID")
        .await;
    // url and fileId in one item: never both.
    assert_error(
        evidence(
            &app,
            &campaign,
            &id,
            json!([{"url": "https://loja.example/c", "fileId": file}]),
        )
        .await,
        400,
        "DISPUTE_EVIDENCE_URL_AND_FILE_ID",
    )
    .await;
    for (documents, field) in [
        (json!([]), "documents"),
        (json!([{}]), "documents[0].url"),
        (json!([{"url": "ftp://loja.example/a"}]), "documents[0].url"),
        (json!([{"url": "not a url"}]), "documents[0].url"),
        (
            json!([{"url": "https://a.example", "description": "x".repeat(501)}]),
            "documents[0].description",
        ),
        (
            json!(
                (0..21)
                    .map(|i| json!({"url": format!("https://a.example/{i}")}))
                    .collect::<Vec<_>>()
            ),
            "documents",
        ),
    ] {
        let body = assert_error(
            evidence(&app, &campaign, &id, documents).await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(body["details"][0]["field"], field, "{body}");
    }
    assert_error(
        app.post(
            &format!("/api/v1/dispute/{id}/evidence"),
            Some(&campaign),
            json!({}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(documents_of(&app, &campaign, &id).await.len(), 1);

    // With the feature, a DISPUTE_EVIDENCE file of the company is accepted.
    let body = json(
        evidence(
            &app,
            &campaign,
            &id,
            json!([{"fileId": file, "description": "print"}]),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(body["dispute"]["documents"][1]["fileId"], file.as_str());
    assert!(body["dispute"]["documents"][1]["url"].is_null());
    assert_eq!(app.count("dispute_evidence").await, 2);
}
db_test!(evidence_follows_rule_4);

async fn one_bad_file_id_saves_nothing(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    app.enable_feature(&company, "DISPUTE_EVIDENCE_FILE_ID")
        .await;
    let (_, campaign, id) = app
        .disputed_campaign(&master, "doe@empresa0.com.br", 500)
        .await;
    let good = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    let kyc_file = app.uploaded(&master, "KYC_DOCUMENT").await;
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    let foreign = app.uploaded(&other_master, "DISPUTE_EVIDENCE").await;

    for (bad, status, code) in [
        (foreign.as_str(), 404, "FILE_NOT_FOUND"),
        ("file_does_not_exist", 404, "FILE_NOT_FOUND"),
        (kyc_file.as_str(), 400, "FILE_PURPOSE_MISMATCH"),
    ] {
        assert_error(
            evidence(
                &app,
                &campaign,
                &id,
                json!([
                    {"url": "https://loja.example/a"},
                    {"fileId": good},
                    {"fileId": bad},
                ]),
            )
            .await,
            status,
            code,
        )
        .await;
        assert_eq!(
            app.count("dispute_evidence").await,
            0,
            "{code}: nothing saved"
        );
    }
    json(
        evidence(
            &app,
            &campaign,
            &id,
            json!([{"url": "https://loja.example/a"}, {"fileId": good}]),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(app.count("dispute_evidence").await, 2);
}
db_test!(one_bad_file_id_saves_nothing);

async fn support_decisions_move_the_blocked_value_and_close_the_dispute(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let support = app.caller(&master).await;

    // Accepted: the payer wins, the blocked value leaves the account.
    let (account_a, campaign_a, accepted) = app
        .disputed_campaign(&master, "a@empresa0.com.br", 700)
        .await;
    let done = app
        .services
        .disputes
        .resolve(
            &support,
            &accepted,
            Resolution::Accept,
            Some("MED procedente"),
        )
        .await
        .unwrap();
    assert_eq!(done.row.status, "ACCEPTED");
    assert_eq!(app.balance(&campaign_a, &account_a).await, (0, 0, 0));
    let body = json(
        app.get(&format!("/api/v1/dispute/{accepted}"), Some(&campaign_a))
            .await,
        200,
    )
    .await;
    assert_eq!(body["dispute"]["status"], "ACCEPTED");
    assert_eq!(body["dispute"]["resolutionNote"], "MED procedente");
    assert!(body["dispute"]["closedAt"].is_string());
    // Closed: no evidence, no second decision.
    assert_error(
        evidence(
            &app,
            &campaign_a,
            &accepted,
            json!([{"url": "https://a.example"}]),
        )
        .await,
        409,
        "DISPUTE_CLOSED",
    )
    .await;
    let again = app
        .services
        .disputes
        .resolve(&support, &accepted, Resolution::Reject, None)
        .await;
    assert!(
        matches!(
            again,
            Err(cofre_server::service::disputes::DisputeError::Closed(
                "ACCEPTED"
            ))
        ),
        "{again:?}"
    );
    assert_eq!(app.balance(&campaign_a, &account_a).await, (0, 0, 0));

    // Rejected: the receiver wins, the value is available again.
    let (account_b, campaign_b, rejected) = app
        .disputed_campaign(&master, "b@empresa0.com.br", 300)
        .await;
    app.services
        .disputes
        .resolve(&support, &rejected, Resolution::Reject, None)
        .await
        .unwrap();
    assert_eq!(app.balance(&campaign_b, &account_b).await, (300, 0, 300));

    // Canceled by the payer (sandbox): released too.
    let (account_c, campaign_c, canceled) = app
        .disputed_campaign(&master, "c@empresa0.com.br", 200)
        .await;
    let body = json(
        app.post(
            &format!("/api/v1/sandbox/dispute/{canceled}/cancel"),
            Some(&campaign_c),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(body["dispute"]["status"], "CANCELED");
    assert_eq!(app.balance(&campaign_c, &account_c).await, (200, 0, 200));
    assert_error(
        app.post(
            &format!("/api/v1/sandbox/dispute/{canceled}/cancel"),
            Some(&campaign_c),
            json!({}),
        )
        .await,
        409,
        "DISPUTE_CLOSED",
    )
    .await;

    // Events of one millisecond have no order, so compare them as a set.
    let mut events: Vec<(String, String)> = app
        .events_of(&company.id)
        .await
        .into_iter()
        .filter(|e| e.0.starts_with("DISPUTE_"))
        .map(|e| (e.0, e.2["dispute"]["id"].as_str().unwrap().to_owned()))
        .collect();
    let mut expected = vec![
        ("DISPUTE_CREATE".to_owned(), accepted.clone()),
        ("DISPUTE_ACCEPTED".to_owned(), accepted.clone()),
        ("DISPUTE_CREATE".to_owned(), rejected.clone()),
        ("DISPUTE_REJECTED".to_owned(), rejected.clone()),
        ("DISPUTE_CREATE".to_owned(), canceled.clone()),
        ("DISPUTE_CANCELED".to_owned(), canceled.clone()),
    ];
    events.sort();
    expected.sort();
    assert_eq!(events, expected);
    let statement = json(app.get("/api/v1/statement", Some(&campaign_a)).await, 200).await;
    let kinds: Vec<&str> = statement["statement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["DISPUTE_DEBIT", "DISPUTE_BLOCK", "PIX_IN"]);
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(support_decisions_move_the_blocked_value_and_close_the_dispute);
