//! `/api/v1/account`: creation (BaaS, MASTER, correlationID), listing and reading.

use reqwest::Method;
use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn only_a_master_of_a_baas_company_creates_accounts(db: Db) {
    let app = spawn_app(db).await;
    let plain = app.company(0, false).await;
    let plain_master = app.master(&plain).await;
    let body = assert_error(
        app.create_account(&plain_master).await,
        403,
        "FEATURE_DISABLED",
    )
    .await;
    assert!(body["error"].as_str().unwrap().contains("BAAS"));
    let baas = app.company(1, true).await;
    let api = app.application(&baas, "API", &[], &[]).await;
    assert_error(
        app.create_account(&api).await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;
    let accounts =
        cofre_server::store::accounts::count_for_company(app.services.store.pool(), &plain.id)
            .await
            .unwrap();
    assert_eq!(accounts, 1, "only the main account");
}
db_test!(only_a_master_of_a_baas_company_creates_accounts);

async fn master_lists_every_account_and_an_api_app_only_its_own(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (first, campaign) = app.campaign(&master).await;
    let (second, _) = app.campaign(&master).await;

    let all = json(app.get("/api/v1/account", Some(&master)).await, 200).await;
    let ids: Vec<&str> = all["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["accountId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            company.main_account_id.as_str(),
            first.as_str(),
            second.as_str()
        ]
    );
    assert_eq!(all["accounts"][0]["isDefault"], true);
    assert_eq!(
        all["pageInfo"],
        json!({"skip": 0, "limit": 10, "totalCount": 3, "hasPreviousPage": false, "hasNextPage": false})
    );
    let page = json(
        app.get("/api/v1/account?skip=1&limit=1", Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(page["accounts"][0]["accountId"], first.as_str());
    assert_eq!(page["pageInfo"]["hasNextPage"], true);
    assert_eq!(page["pageInfo"]["hasPreviousPage"], true);

    let own = json(app.get("/api/v1/account", Some(&campaign)).await, 200).await;
    assert_eq!(own["accounts"].as_array().unwrap().len(), 1);
    assert_eq!(own["accounts"][0]["accountId"], first.as_str());
    json(
        app.get(&format!("/api/v1/account/{first}"), Some(&campaign))
            .await,
        200,
    )
    .await;
    assert_error(
        app.get(&format!("/api/v1/account/{second}"), Some(&campaign))
            .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get(
            &format!("/api/v1/account/{}", company.main_account_id),
            Some(&campaign),
        )
        .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    assert_error(
        app.get("/api/v1/account/acc_nope", Some(&master)).await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
}
db_test!(master_lists_every_account_and_an_api_app_only_its_own);

async fn bad_paging_is_400(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    for query in ["limit=0", "limit=101", "skip=-1", "limit=abc"] {
        let body = assert_error(
            app.get(&format!("/api/v1/account?{query}"), Some(&master))
                .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        let field = query.split('=').next().unwrap();
        assert_eq!(body["details"][0]["field"], field, "{query}");
    }
}
db_test!(bad_paging_is_400);

async fn pix_key_withdraw_appears_only_where_the_api_is_enabled(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, _) = app.campaign(&master).await;
    let path = format!("/api/v1/account/{account_id}");
    let off = json(app.get(&path, Some(&master)).await, 200).await;
    assert!(
        off["account"]
            .as_object()
            .unwrap()
            .get("pixKeyWithdraw")
            .is_none()
    );
    app.enable_withdraw_key_api(&account_id).await;
    let on = json(app.get(&path, Some(&master)).await, 200).await;
    assert_eq!(on["account"]["pixKeyWithdraw"], serde_json::Value::Null);
    assert!(
        on["account"]
            .as_object()
            .unwrap()
            .contains_key("pixKeyWithdraw")
    );
}
db_test!(pix_key_withdraw_appears_only_where_the_api_is_enabled);

async fn a_repeated_correlation_id_answers_the_same_account_even_concurrently(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let create = || async {
        app.request(Method::POST, "/api/v1/account", Some(&master))
            .json(&json!({"correlationID": "campanha-natal-2026"}))
            .send()
            .await
            .unwrap()
    };
    let answers = futures_util::future::join_all((0..10).map(|_| create())).await;
    let mut ids = Vec::new();
    for answer in answers {
        let body = json(answer, 200).await;
        ids.push(body["account"]["accountId"].as_str().unwrap().to_owned());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one account for one correlationID: {ids:?}");
    let again = json(create().await, 200).await;
    assert_eq!(again["account"]["accountId"], ids[0].as_str());
    let count =
        cofre_server::store::accounts::count_for_company(app.services.store.pool(), &company.id)
            .await
            .unwrap();
    assert_eq!(count, 2, "main account + one campaign");
    let body = assert_error(
        app.request(Method::POST, "/api/v1/account", Some(&master))
            .json(&json!({"correlationID": ""}))
            .send()
            .await
            .unwrap(),
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "correlationID");
}
db_test!(a_repeated_correlation_id_answers_the_same_account_even_concurrently);
