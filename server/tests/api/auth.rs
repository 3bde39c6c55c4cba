//! AppID authentication and the order of refusals (CONTRACT.md "Details").

use cofre_server::config::RateLimitStore;

use crate::db_test;
use crate::helpers::*;

async fn missing_app_id_is_401(db: Db) {
    let app = spawn_app(db).await;
    assert_error(app.scopes(None).await, 401, "APP_ID_MISSING").await;
}
db_test!(missing_app_id_is_401);

async fn garbage_and_unknown_app_ids_are_401(db: Db) {
    let app = spawn_app(db).await;
    assert_error(
        app.scopes(Some("not base64 !!")).await,
        401,
        "APP_ID_INVALID",
    )
    .await;
    // Valid base64 without the clientId:clientSecret shape.
    assert_error(app.scopes(Some("aGVsbG8=")).await, 401, "APP_ID_INVALID").await;
    let unknown = cofre_server::service::applications::app_id("Client_Id_nobody", "secret");
    assert_error(app.scopes(Some(&unknown)).await, 401, "APP_ID_INVALID").await;
}
db_test!(garbage_and_unknown_app_ids_are_401);

async fn bearer_prefix_is_401_and_bare_value_works(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    assert_error(
        app.scopes(Some(&format!("Bearer {master}"))).await,
        401,
        "APP_ID_INVALID",
    )
    .await;
    let body = json(app.scopes(Some(&master)).await, 200).await;
    assert!(body["scopes"].as_array().is_some_and(|g| !g.is_empty()));
}
db_test!(bearer_prefix_is_401_and_bare_value_works);

async fn wrong_secret_is_401(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let forged =
        cofre_server::service::applications::app_id(&client_id_of(&master), "Client_Secret_guess");
    assert_error(app.scopes(Some(&forged)).await, 401, "APP_ID_INVALID").await;
}
db_test!(wrong_secret_is_401);

async fn deactivated_application_is_401(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let api = app.application(&company, "API", &[], &[]).await;
    let listed = app.services.applications.list(&company.id).await.unwrap();
    let stored = listed
        .iter()
        .find(|a| a.client_id == client_id_of(&api))
        .unwrap();
    app.services
        .applications
        .set_active(&company.id, &stored.id, false)
        .await
        .unwrap();
    assert_error(app.scopes(Some(&api)).await, 401, "APPLICATION_INACTIVE").await;
    let listed = app.services.applications.list(&company.id).await.unwrap();
    assert!(!listed.iter().find(|a| a.id == stored.id).unwrap().is_active);
}
db_test!(deactivated_application_is_401);

async fn rotated_secret_stops_the_old_app_id_at_once(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let api = app.application(&company, "API", &[], &[]).await;
    let body = json(app.rotate_secret(&master, &client_id_of(&api)).await, 200).await;
    let new_app_id = body["application"]["appID"].as_str().unwrap().to_owned();
    assert_ne!(new_app_id, api);
    assert_eq!(body["application"]["clientId"], client_id_of(&api));
    assert!(
        body["application"]["clientSecret"]
            .as_str()
            .unwrap()
            .starts_with("Client_Secret_")
    );
    assert_error(app.scopes(Some(&api)).await, 401, "APP_ID_INVALID").await;
    json(app.scopes(Some(&new_app_id)).await, 200).await;
}
db_test!(rotated_secret_stops_the_old_app_id_at_once);

async fn api_application_on_a_master_route_is_403(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let api = app.application(&company, "API", &[], &[]).await;
    assert_error(
        app.rotate_secret(&api, &client_id_of(&api)).await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;
    // Nothing rotated: the AppID still works.
    json(app.scopes(Some(&api)).await, 200).await;
}
db_test!(api_application_on_a_master_route_is_403);

async fn missing_scope_is_403_and_scopes_list_needs_none(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let restricted = app
        .application(&company, "MASTER", &["APPLICATION_POST"], &[])
        .await;
    let body = assert_error(
        app.rotate_secret(&restricted, &client_id_of(&restricted))
            .await,
        403,
        "SCOPE_MISSING",
    )
    .await;
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("APPLICATION_ROTATE_POST")
    );
    json(app.scopes(Some(&restricted)).await, 200).await;
}
db_test!(missing_scope_is_403_and_scopes_list_needs_none);

async fn ip_outside_the_allow_list_is_403(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let blocked = app.application(&company, "API", &[], &["10.0.0.0/8"]).await;
    let allowed = app.application(&company, "API", &[], &["127.0.0.1"]).await;
    assert_error(app.scopes(Some(&blocked)).await, 403, "IP_NOT_ALLOWED").await;
    json(app.scopes(Some(&allowed)).await, 200).await;
    // The IP check comes before the MASTER check.
    assert_error(
        app.rotate_secret(&blocked, &client_id_of(&blocked)).await,
        403,
        "IP_NOT_ALLOWED",
    )
    .await;
}
db_test!(ip_outside_the_allow_list_is_403);

/// Three requests pass, the fourth is 429 with Retry-After; another AppID is untouched.
async fn rate_limit(db: Db, store: RateLimitStore) -> TestApp {
    let app = spawn_app_with(db, |s| {
        s.rate_limit.per_second = 1;
        s.rate_limit.burst = 3;
        s.rate_limit.store = store;
    })
    .await;
    let company = app.company(0, true).await;
    let first = app.master(&company).await;
    let second = app.application(&company, "API", &[], &[]).await;
    for _ in 0..3 {
        json(app.scopes(Some(&first)).await, 200).await;
    }
    let limited = app.scopes(Some(&first)).await;
    let retry_after: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    assert_error(limited, 429, "TOO_MANY_REQUESTS").await;
    // Another AppID has its own bucket.
    json(app.scopes(Some(&second)).await, 200).await;
    app
}

async fn rate_limit_in_memory_answers_429_with_retry_after_per_app_id(db: Db) {
    let app = rate_limit(db, RateLimitStore::Memory).await;
    assert_eq!(app.count("rate_buckets").await, 0);
}
db_test!(rate_limit_in_memory_answers_429_with_retry_after_per_app_id);

async fn rate_limit_in_the_database_answers_429_with_retry_after_per_app_id(db: Db) {
    let app = rate_limit(db, RateLimitStore::Database).await;
    // One bucket per AppID in the table: the first emptied by its three requests (the
    // fourth was refused by this process's own bucket before reaching the table), the
    // second with one token taken.
    let rows = sqlx::query_as::<_, (i64, i64)>(
        "SELECT millitokens, admitted FROM rate_buckets ORDER BY millitokens",
    )
    .fetch_all(app.services.store.pool())
    .await
    .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].0 < 1000, "{rows:?}");
    assert_eq!(rows[1], (2000, 1), "{rows:?}");
}
db_test!(rate_limit_in_the_database_answers_429_with_retry_after_per_app_id);
