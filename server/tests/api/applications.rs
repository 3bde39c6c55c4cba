//! `POST /api/v1/application` and `POST /api/v1/application/rotate-secret`.

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn master_creates_an_api_application_bound_to_an_account(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let body = json(
        app.create_application(
            &master,
            json!({"accountId": company.main_account_id, "application": {"name": "Campanha", "type": "API"}}),
        )
        .await,
        201,
    )
    .await;
    let created = &body["application"];
    assert_eq!(created["name"], "Campanha");
    assert_eq!(created["type"], "API");
    assert_eq!(created["isActive"], true);
    assert_eq!(
        created["companyBankAccount"],
        company.main_account_id.as_str()
    );
    let app_id = created["appID"].as_str().unwrap();
    assert_eq!(client_id_of(app_id), created["clientId"].as_str().unwrap());
    json(app.scopes(Some(app_id)).await, 200).await;

    let stored = app.services.applications.list(&company.id).await.unwrap();
    let stored = stored
        .iter()
        .find(|a| a.client_id == created["clientId"].as_str().unwrap())
        .unwrap();
    assert_eq!(stored.account_id, company.main_account_id);
    assert!(stored.scopes.is_empty());
}
db_test!(master_creates_an_api_application_bound_to_an_account);

async fn validation_errors_list_every_invalid_field(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let body = assert_error(
        app.create_application(
            &master,
            json!({"application": {"scopes": ["NOPE", "APPLICATION_POST"], "type": "API", "name": " ",
                   "allowedIps": ["300.1.1.1"]}}),
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
    assert_eq!(
        fields,
        [
            "application.name",
            "application.scopes[0]",
            "application.scopes[1]",
            "application.allowedIps[0]"
        ]
    );
    assert_eq!(
        app.services
            .applications
            .list(&company.id)
            .await
            .unwrap()
            .len(),
        1,
        "nothing saved"
    );

    let body = assert_error(
        app.create_application(&master, json!({})).await,
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
    assert_eq!(fields, ["application.name", "application.type"]);
}
db_test!(validation_errors_list_every_invalid_field);

async fn another_companys_ids_are_404(db: Db) {
    let app = spawn_app(db).await;
    let ours = app.company(0, true).await;
    let theirs = app.company(1, true).await;
    let master = app.master(&ours).await;
    let their_app = app.master(&theirs).await;
    assert_error(
        app.create_application(
            &master,
            json!({"accountId": theirs.main_account_id, "application": {"name": "x", "type": "API"}}),
        )
        .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    assert_error(
        app.rotate_secret(&master, &client_id_of(&their_app)).await,
        404,
        "APPLICATION_NOT_FOUND",
    )
    .await;
    json(app.scopes(Some(&their_app)).await, 200).await;
}
db_test!(another_companys_ids_are_404);

async fn scopes_are_listed_by_group(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let api = app.application(&company, "API", &["FILE_POST"], &[]).await;
    let body = json(app.scopes(Some(&api)).await, 200).await;
    let names: Vec<&str> = body["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            g["scopes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap())
        })
        .collect();
    for seed_scope in [
        "PIX_KEY_WITHDRAW_POST",
        "PIX_KEY_WITHDRAW_PUT",
        "FILE_POST",
        "APPLICATION_ROTATE_POST",
        "SUBSCRIPTION_PAYMENT_BOOK_GET",
    ] {
        assert!(names.contains(&seed_scope), "{seed_scope}");
    }
}
db_test!(scopes_are_listed_by_group);
