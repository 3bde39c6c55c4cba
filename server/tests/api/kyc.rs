//! KYC onboarding: submission by the MASTER application, files by rule 7, the
//! in-review idempotency, support's review and the lifecycle events; and the removed
//! account-register endpoints.

use cofre_server::service::kyc::Decision;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

fn submission(correlation_id: &str, documents: &[&str]) -> Value {
    json!({
        "taxID": "11.222.333/0001-81",
        "correlationID": correlation_id,
        "representatives": [{
            "name": "Maria Souza",
            "taxID": "529.982.247-25",
            "email": "Maria@Empresa.com.br",
            "birthDate": "1985-04-12",
            "documents": documents,
        }],
    })
}

async fn onboarding(app: &TestApp, master: &str, correlation_id: &str) -> Value {
    json(
        app.get(
            &format!("/api/v1/kyc/onboarding?correlationID={correlation_id}"),
            Some(master),
        )
        .await,
        200,
    )
    .await["onboarding"]
        .clone()
}

async fn submission_is_created_once_and_in_review_changes_nothing(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;

    let created = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-1", &[&doc]),
        )
        .await,
        201,
    )
    .await;
    let o = &created["onboarding"];
    assert_eq!(o["status"], "IN_REVIEW");
    assert_eq!(o["taxID"], "11222333000181");
    assert_eq!(o["correlationID"], "kyc-1");
    assert_eq!(o["representatives"][0]["email"], "maria@empresa.com.br");
    assert_eq!(o["representatives"][0]["documents"][0]["id"], doc.as_str());

    // In review: 200 and nothing changes, whatever the body.
    let mut other_body = submission("kyc-1", &["file_unknown"]);
    other_body["taxID"] = json!("12.ABC.345/01DE-35");
    let again = json(
        app.post("/api/v1/kyc/onboarding", Some(&master), other_body)
            .await,
        200,
    )
    .await;
    assert_eq!(again["onboarding"]["id"], o["id"]);
    let stored = onboarding(&app, &master, "kyc-1").await;
    assert_eq!(stored["taxID"], "11222333000181");
    assert_eq!(stored["status"], "IN_REVIEW");
    assert_eq!(app.count("kyc_onboardings").await, 1);
    assert_eq!(app.count("kyc_representatives").await, 1);

    let reps = json(
        app.get(
            "/api/v1/kyc/representatives?correlationID=kyc-1",
            Some(&master),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(reps["representatives"][0]["name"], "Maria Souza");
    assert_eq!(reps["representatives"][0]["taxID"], "52998224725");
    assert_eq!(reps["representatives"][0]["birthDate"], "1985-04-12");

    // Lifecycle events belong to the MASTER application.
    let events: Vec<_> = app
        .events_of(&company.id)
        .await
        .into_iter()
        .filter(|e| e.0.starts_with("KYC_"))
        .collect();
    assert_eq!(events.len(), 1, "the repeat emitted nothing");
    assert_eq!(events[0].0, "KYC_ONBOARDING_IN_REVIEW");
    let master_id = app.caller(&master).await.application_id;
    assert_eq!(events[0].1.as_deref(), Some(master_id.as_str()));
    assert_eq!(events[0].2["onboarding"]["correlationID"], "kyc-1");
}
db_test!(submission_is_created_once_and_in_review_changes_nothing);

async fn documents_must_be_kyc_files_of_the_company(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let kyc_doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let evidence = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    let foreign = app.uploaded(&other_master, "KYC_DOCUMENT").await;

    for (docs, status, code) in [
        (
            vec![kyc_doc.as_str(), evidence.as_str()],
            400,
            "FILE_PURPOSE_MISMATCH",
        ),
        (
            vec![kyc_doc.as_str(), foreign.as_str()],
            404,
            "FILE_NOT_FOUND",
        ),
        (vec!["file_nope"], 404, "FILE_NOT_FOUND"),
    ] {
        assert_error(
            app.post(
                "/api/v1/kyc/onboarding",
                Some(&master),
                submission("kyc-2", &docs),
            )
            .await,
            status,
            code,
        )
        .await;
    }
    assert_eq!(app.count("kyc_onboardings").await, 0, "nothing saved");
    assert_error(
        app.get("/api/v1/kyc/onboarding?correlationID=kyc-2", Some(&master))
            .await,
        404,
        "KYC_ONBOARDING_NOT_FOUND",
    )
    .await;

    // Every field is checked and every invalid one named at once.
    let body = assert_error(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            json!({
                "taxID": "11.222.333/0001-82",
                "correlationID": "kyc-3",
                "representatives": [{
                    "name": "",
                    "taxID": "11.222.333/0001-81",
                    "email": "maria",
                    "birthDate": "2999-01-01",
                    "documents": [],
                }],
            }),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let mut fields: Vec<&str> = body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "representatives[0].birthDate",
            "representatives[0].documents",
            "representatives[0].email",
            "representatives[0].name",
            "representatives[0].taxID",
            "taxID",
        ]
    );
    let body = assert_error(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            json!({"taxID": "11.222.333/0001-81", "correlationID": "kyc-4"}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "representatives");
    let body = assert_error(
        app.post("/api/v1/kyc/onboarding", Some(&master), json!({}))
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "correlationID");
    assert_eq!(app.count("kyc_onboardings").await, 0);

    // MASTER only; the query needs its correlationID; another company's is 404.
    let (_, campaign) = app.campaign(&master).await;
    assert_error(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&campaign),
            submission("kyc-5", &[&kyc_doc]),
        )
        .await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;
    json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-5", &[&kyc_doc]),
        )
        .await,
        201,
    )
    .await;
    assert_error(
        app.get("/api/v1/kyc/onboarding", Some(&master)).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_error(
        app.get(
            "/api/v1/kyc/representatives?correlationID=kyc-5",
            Some(&other_master),
        )
        .await,
        404,
        "KYC_ONBOARDING_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get(
            "/api/v1/kyc/onboarding?correlationID=kyc-5",
            Some(&campaign),
        )
        .await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;

    // Onboarding webhooks are the MASTER's too.
    let hook = json!({"webhook": {"name": "kyc", "event": "KYC_ONBOARDING_APPROVED", "url": "https://hooks.example/kyc", "isActive": true}});
    assert_error(
        app.post("/api/v1/webhook", Some(&campaign), hook.clone())
            .await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;
    json(app.post("/api/v1/webhook", Some(&master), hook).await, 201).await;
}
db_test!(documents_must_be_kyc_files_of_the_company);

async fn support_review_moves_the_onboarding_and_emits_its_events(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let created = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-9", &[&doc]),
        )
        .await,
        201,
    )
    .await;
    let id = created["onboarding"]["id"].as_str().unwrap().to_owned();
    let kyc = &app.services.kyc;

    // Asking for documents needs a note.
    assert!(
        kyc.review(&id, Decision::RequestDocuments, None, "suporte@cofre.dev")
            .await
            .is_err()
    );
    kyc.review(
        &id,
        Decision::RequestDocuments,
        Some("RG ilegível"),
        "suporte@cofre.dev",
    )
    .await
    .unwrap();
    let o = onboarding(&app, &master, "kyc-9").await;
    assert_eq!(o["status"], "DOCUMENTS_REQUESTED");
    assert_eq!(o["reviewNote"], "RG ilegível");

    // Resubmitting replaces the representatives and goes back to review; the files
    // are still checked (a dispute file is refused and nothing changes).
    let evidence = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    assert_error(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-9", &[&evidence]),
        )
        .await,
        400,
        "FILE_PURPOSE_MISMATCH",
    )
    .await;
    assert_eq!(
        onboarding(&app, &master, "kyc-9").await["status"],
        "DOCUMENTS_REQUESTED"
    );
    let new_doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let again = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-9", &[&doc, &new_doc]),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(again["onboarding"]["status"], "IN_REVIEW");
    assert_eq!(
        again["onboarding"]["representatives"][0]["documents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    kyc.review(&id, Decision::Approve, None, "suporte@cofre.dev")
        .await
        .unwrap();
    assert_eq!(
        onboarding(&app, &master, "kyc-9").await["status"],
        "APPROVED"
    );
    let closed = kyc
        .review(&id, Decision::Reject, Some("tarde"), "suporte@cofre.dev")
        .await;
    assert!(
        matches!(
            closed,
            Err(cofre_server::service::kyc::KycError::NotInReview(
                "APPROVED"
            ))
        ),
        "{closed:?}"
    );
    // A closed onboarding keeps its decision: 200, unchanged.
    let repeat = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-9", &[&doc]),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(repeat["onboarding"]["status"], "APPROVED");

    let master_id = app.caller(&master).await.application_id;
    let mut events: Vec<(String, Option<String>)> = app
        .events_of(&company.id)
        .await
        .into_iter()
        .filter(|e| e.0.starts_with("KYC_"))
        .map(|e| (e.0, e.1))
        .collect();
    events.sort();
    let m = Some(master_id);
    assert_eq!(
        events,
        vec![
            ("KYC_ONBOARDING_APPROVED".to_owned(), m.clone()),
            ("KYC_ONBOARDING_DOCUMENTS_REQUESTED".to_owned(), m.clone()),
            ("KYC_ONBOARDING_IN_REVIEW".to_owned(), m.clone()),
            ("KYC_ONBOARDING_IN_REVIEW".to_owned(), m),
        ]
    );
}
db_test!(support_review_moves_the_onboarding_and_emits_its_events);

async fn account_register_endpoints_answer_410(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    for response in [
        app.post("/api/v1/account-register", Some(&master), json!({}))
            .await,
        app.post("/api/v1/account-register", None, json!({})).await,
        app.request(
            reqwest::Method::PATCH,
            "/api/v1/account-register/abc",
            Some(&master),
        )
        .send()
        .await
        .unwrap(),
        app.request(reqwest::Method::PATCH, "/api/v1/account-register", None)
            .header("accept-language", "en")
            .send()
            .await
            .unwrap(),
    ] {
        let body = assert_error(response, 410, "ENDPOINT_REMOVED").await;
        assert!(
            body["error"].as_str().unwrap().contains("2026-04"),
            "{body}"
        );
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("/api/v1/changelog"),
            "{body}"
        );
    }
    let changelog = json(app.get("/api/v1/changelog", None).await, 200).await;
    assert!(
        changelog["changelog"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["month"] == "2026-04" && e["type"] == "Removed"),
        "{changelog}"
    );
}
db_test!(account_register_endpoints_answer_410);

async fn concurrent_identical_submissions_create_one_onboarding(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let answers = futures_util::future::join_all((0..8).map(|_| {
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            submission("kyc-c", &[&doc]),
        )
    }))
    .await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 201]);
    assert_eq!(app.count("kyc_onboardings").await, 1);
    assert_eq!(app.count("kyc_representatives").await, 1);
    let in_review = app
        .events_of(&company.id)
        .await
        .into_iter()
        .filter(|e| e.0 == "KYC_ONBOARDING_IN_REVIEW")
        .count();
    assert_eq!(in_review, 1);
}
db_test!(concurrent_identical_submissions_create_one_onboarding);
