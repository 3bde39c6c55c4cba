//! The campaign flow of the seed (section 1), step by step, as an integrator runs it.

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn the_seven_steps_of_a_campaign(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    // An account of another bank held by the company itself: the withdraw destination.
    app.directory(&[("tesouraria@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;

    // 1-2. A MASTER API is created once (console or CLI) and its AppID kept safe.
    let master = app.master(&company).await;

    // 3. Create a bank account with the MASTER AppID; store the accountId.
    let created = json(app.create_account(&master).await, 200).await;
    let account = &created["account"];
    let account_id = account["accountId"].as_str().unwrap().to_owned();
    assert_eq!(account["taxId"], "11.222.333/0001-81");
    assert_eq!(account["isDefault"], false);
    assert_eq!(
        account["balance"],
        json!({"total": 0, "blocked": 0, "available": 0})
    );

    // 4. Create an application with that accountId; store its appID.
    let application = json(
        app.create_application(
            &master,
            json!({"accountId": account_id, "application": {"name": "Campanha Natal", "type": "API"}}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(
        application["application"]["companyBankAccount"],
        account_id.as_str()
    );
    let campaign = application["application"]["appID"]
        .as_str()
        .unwrap()
        .to_owned();

    // 5. Create a Pix key with the campaign's AppID.
    let key = json(
        app.create_pix_key(&campaign, "EMAIL", "Natal@Empresa0.com.br")
            .await,
        201,
    )
    .await;
    assert_eq!(key["pixKey"]["key"], "natal@empresa0.com.br");
    assert_eq!(key["pixKey"]["type"], "EMAIL");
    let listed = json(app.list_pix_keys(&campaign).await, 200).await;
    assert_eq!(listed["pixKeys"].as_array().unwrap().len(), 1);
    assert_eq!(listed["account"]["accountId"], account_id.as_str());
    assert!(listed["account"]["balance"].is_object());

    // 6. Set the withdraw key (support enabled the withdraw key API for the account).
    app.enable_withdraw_key_api(&account_id).await;
    let withdraw = json(
        app.post_withdraw_key(&campaign, json!({"pixKey": "tesouraria@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    assert_eq!(
        withdraw["account"]["pixKeyWithdraw"],
        json!({"pixKey": "tesouraria@empresa0.com.br", "type": "EMAIL"})
    );
    let read = json(
        app.get(&format!("/api/v1/account/{account_id}"), Some(&campaign))
            .await,
        200,
    )
    .await;
    assert_eq!(
        read["account"]["pixKeyWithdraw"]["pixKey"],
        "tesouraria@empresa0.com.br"
    );

    // 7. At the end of the campaign, deleting its Pix key: nobody can find it to pay it.
    let deleted = app.delete_pix_key(&campaign, "natal@empresa0.com.br").await;
    assert_eq!(deleted.status(), 204);
    assert!(deleted.bytes().await.unwrap().is_empty());
    let payer = app.company(1, true).await;
    let payer_app = app.master(&payer).await;
    assert_error(
        app.check_key(&payer_app, "natal@empresa0.com.br").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    let listed = json(app.list_pix_keys(&campaign).await, 200).await;
    assert_eq!(listed["pixKeys"], json!([]));
}
db_test!(the_seven_steps_of_a_campaign);

async fn an_application_restricted_to_other_scopes_gets_403_everywhere(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, _) = app.campaign(&master).await;
    app.enable_withdraw_key_api(&company.main_account_id).await;
    let files_only = app.application(&company, "API", &["FILE_POST"], &[]).await;
    let master_files_only = app
        .application(&company, "MASTER", &["FILE_POST"], &[])
        .await;
    let calls = [
        (app.create_account(&master_files_only).await, "ACCOUNT_POST"),
        (
            app.get("/api/v1/account", Some(&files_only)).await,
            "ACCOUNT_GET",
        ),
        (
            app.get(&format!("/api/v1/account/{account_id}"), Some(&files_only))
                .await,
            "ACCOUNT_GET",
        ),
        (
            app.create_pix_key(&files_only, "EVP", "").await,
            "PIX_KEY_POST",
        ),
        (app.list_pix_keys(&files_only).await, "PIX_KEY_GET"),
        (
            app.delete_pix_key(&files_only, "x@y.com").await,
            "PIX_KEY_DELETE",
        ),
        (
            app.put(
                "/api/v1/pix-keys/x@y.com/default",
                Some(&files_only),
                json!({}),
            )
            .await,
            "PIX_KEY_PUT",
        ),
        (
            app.check_key(&files_only, "x@y.com").await,
            "PIX_KEY_CHECK_GET",
        ),
        (
            app.get("/api/v1/pix-keys/x@y.com/check", Some(&files_only))
                .await,
            "PIX_KEY_CHECK_GET",
        ),
        (
            app.get("/api/v1/pix-keys/tokens", Some(&files_only)).await,
            "PIX_KEY_CHECK_GET",
        ),
        (
            app.post_withdraw_key(&files_only, json!({"pixKey": "x@y.com"}))
                .await,
            "PIX_KEY_WITHDRAW_POST",
        ),
        (
            app.put_withdraw_key(&files_only, json!({"pixKey": "x@y.com"}))
                .await,
            "PIX_KEY_WITHDRAW_PUT",
        ),
        (
            app.create_application(
                &master_files_only,
                json!({"application": {"name": "x", "type": "API"}}),
            )
            .await,
            "APPLICATION_POST",
        ),
    ];
    for (response, scope) in calls {
        let body = assert_error(response, 403, "SCOPE_MISSING").await;
        assert!(body["error"].as_str().unwrap().contains(scope), "{body}");
    }
}
db_test!(an_application_restricted_to_other_scopes_gets_403_everywhere);

async fn another_companys_ids_are_404_on_every_campaign_endpoint(db: Db) {
    let app = spawn_app(db).await;
    let ours = app.company(0, true).await;
    let theirs = app.company(1, true).await;
    app.directory(&[("caixa@empresa1.com.br", "EMAIL", CNPJS[1])])
        .await;
    let our_master = app.master(&ours).await;
    let their_master = app.master(&theirs).await;
    let (their_account, their_campaign) = app.campaign(&their_master).await;
    json(
        app.create_pix_key(&their_campaign, "EMAIL", "deles@empresa1.com.br")
            .await,
        201,
    )
    .await;
    app.enable_withdraw_key_api(&their_account).await;
    app.enable_withdraw_key_api(&ours.main_account_id).await;
    json(
        app.post_withdraw_key(&their_campaign, json!({"pixKey": "caixa@empresa1.com.br"}))
            .await,
        200,
    )
    .await;

    assert_error(
        app.get(
            &format!("/api/v1/account/{their_account}"),
            Some(&our_master),
        )
        .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    assert_error(
        app.delete_pix_key(&our_master, "deles@empresa1.com.br")
            .await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.put(
            "/api/v1/pix-keys/deles@empresa1.com.br/default",
            Some(&our_master),
            json!({}),
        )
        .await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    // Their withdraw key is theirs: our PUT does not find it.
    assert_error(
        app.put_withdraw_key(&our_master, json!({"pixKey": "caixa@empresa1.com.br"}))
            .await,
        404,
        "WITHDRAW_KEY_NOT_FOUND",
    )
    .await;
    let accounts = json(app.get("/api/v1/account", Some(&our_master)).await, 200).await;
    assert!(
        accounts["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["accountId"] != their_account.as_str())
    );
    // Their key is still theirs.
    let keys = json(app.list_pix_keys(&their_campaign).await, 200).await;
    assert_eq!(keys["pixKeys"][0]["key"], "deles@empresa1.com.br");
}
db_test!(another_companys_ids_are_404_on_every_campaign_endpoint);
