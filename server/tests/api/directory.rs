//! Directory lookups (`/api/v1/pix-keys/check`) and their token bucket.

use std::sync::Arc;

use cofre_server::service::Services;
use cofre_server::service::clock::ManualClock;
use cofre_server::service::directory::LookupError;

use crate::db_test;
use crate::helpers::*;

async fn tokens(app: &TestApp, app_id: &str) -> i64 {
    json(app.get("/api/v1/pix-keys/tokens", Some(app_id)).await, 200).await["tokens"]["available"]
        .as_i64()
        .unwrap()
}

async fn a_lookup_shows_the_masked_owner_and_costs_by_result(db: Db) {
    let app = spawn_app(db).await;
    app.directory(&[("ana@banco.com", "EMAIL", "111.444.777-35")])
        .await;
    let company = app.company(0, true).await;
    let other = app.company(1, true).await;
    let master = app.master(&company).await;
    let other_master = app.master(&other).await;
    json(
        app.create_pix_key(&other_master, "EMAIL", "loja@empresa1.com")
            .await,
        201,
    )
    .await;
    assert_eq!(tokens(&app, &master).await, 500);

    let first = json(app.check_key(&master, "ana@banco.com").await, 200).await;
    assert_eq!(first["pixKey"], "ana@banco.com");
    assert_eq!(first["type"], "EMAIL");
    assert_eq!(first["owner"]["taxID"], "111.***.***-35");
    assert_eq!(first["owner"]["psp"], "60701190");
    assert_eq!(first["owner"]["account"], "*****67");
    let second = json(
        app.get("/api/v1/pix-keys/ana@banco.com/check", Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(first["pixKeyEndToEndId"].as_str().unwrap().len(), 32);
    assert_ne!(
        first["pixKeyEndToEndId"], second["pixKeyEndToEndId"],
        "a new id every lookup"
    );
    assert_eq!(tokens(&app, &master).await, 498, "found costs 1");

    let own = json(app.check_key(&master, "loja@empresa1.com").await, 200).await;
    assert_eq!(own["owner"]["psp"], "COFRE");
    assert_eq!(own["owner"]["name"], "Empresa 1");
    assert_eq!(
        tokens(&app, &master).await,
        498,
        "Cofre's own keys cost nothing"
    );

    assert_error(
        app.check_key(&master, "ninguem@banco.com").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    assert_eq!(tokens(&app, &master).await, 478, "not found costs 20");
    assert_error(
        app.check_key(&master, "not a key").await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    assert_eq!(
        tokens(&app, &master).await,
        478,
        "an invalid key costs nothing"
    );
    assert_eq!(
        tokens(&app, &other_master).await,
        500,
        "each holder has its own bucket"
    );
}
db_test!(a_lookup_shows_the_masked_owner_and_costs_by_result);

async fn the_bucket_is_shared_by_every_app_id_of_a_holder_and_refuses_below_twenty(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.campaign(&master).await;
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    // 500 tokens: 24 misses leave 20, the 25th is still allowed, then below 20.
    for i in 0..25 {
        let app_id = if i % 2 == 0 { &master } else { &campaign };
        assert_error(
            app.check_key(app_id, &format!("falta{i}@banco.com")).await,
            404,
            "PIX_KEY_NOT_FOUND",
        )
        .await;
    }
    let refused = app.check_key(&campaign, "outra@banco.com").await;
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    assert_error(refused, 429, "TOO_MANY_REQUESTS").await;
    assert_error(
        app.check_key(&master, "outra@banco.com").await,
        429,
        "TOO_MANY_REQUESTS",
    )
    .await;
    assert_eq!(tokens(&app, &master).await, 0);
    assert_error(
        app.check_key(&other_master, "outra@banco.com").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
}
db_test!(the_bucket_is_shared_by_every_app_id_of_a_holder_and_refuses_below_twenty);

async fn concurrent_lookups_never_overspend_the_bucket(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let keys: Vec<String> = (0..32).map(|i| format!("corrida{i}@banco.com")).collect();
    let answers =
        futures_util::future::join_all(keys.iter().map(|k| app.check_key(&master, k))).await;
    let statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 404).count(),
        25,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        7,
        "{statuses:?}"
    );
}
db_test!(concurrent_lookups_never_overspend_the_bucket);

async fn the_bucket_refills_twenty_tokens_a_minute(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let clock = ManualClock::new(1_800_000_000_000);
    let services = Services::with_clock(app.services.store.clone(), clock.clone() as Arc<_>);
    let master = app.master(&company).await;
    let caller = services
        .applications
        .authenticate(Some(&master))
        .await
        .unwrap();
    for i in 0..25 {
        let miss = services
            .directory
            .check(&caller, &format!("falta{i}@banco.com"))
            .await;
        assert!(matches!(miss, Err(LookupError::NotFound)), "{miss:?}");
    }
    assert!(matches!(
        services.directory.check(&caller, "mais@banco.com").await,
        Err(LookupError::RateLimited {
            retry_after_secs: 60
        })
    ));
    clock.advance(59_000);
    assert_eq!(
        services.directory.tokens(&caller).await.unwrap().available,
        19
    );
    assert!(matches!(
        services.directory.check(&caller, "mais@banco.com").await,
        Err(LookupError::RateLimited { .. })
    ));
    clock.advance(1_000);
    assert_eq!(
        services.directory.tokens(&caller).await.unwrap().available,
        20
    );
    assert!(matches!(
        services.directory.check(&caller, "mais@banco.com").await,
        Err(LookupError::NotFound)
    ));
    assert_eq!(
        services.directory.tokens(&caller).await.unwrap().available,
        0
    );
    // A long pause fills the bucket only up to its capacity.
    clock.advance(3_600_000);
    assert_eq!(
        services.directory.tokens(&caller).await.unwrap().available,
        500
    );
}
db_test!(the_bucket_refills_twenty_tokens_a_minute);
