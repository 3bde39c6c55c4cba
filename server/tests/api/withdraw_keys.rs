//! The withdraw key: one test per row of the seed's state table (section 3), and every
//! refusal around it.

use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

const KEY_A: &str = "saques@empresa0.com.br";
const KEY_B: &str = "+5511912345678";
const EVP: &str = "6d1f3c0e-8a4b-4c2d-9e7f-0a1b2c3d4e5f";

/// A campaign whose account has the withdraw key API enabled, and directory entries of
/// the company's own keys at other banks.
async fn setup(db: Db) -> (TestApp, TestCompany, String, String) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.directory(&[
        (KEY_A, "EMAIL", CNPJS[0]),
        (KEY_B, "PHONE", CNPJS[0]),
        (EVP, "EVP", CNPJS[0]),
        ("alguem@banco.com", "EMAIL", "111.444.777-35"),
    ])
    .await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app.campaign(&master).await;
    app.enable_withdraw_key_api(&account_id).await;
    (app, company, account_id, campaign)
}

async fn registered_keys(app: &TestApp, company: &TestCompany) -> i64 {
    cofre_server::store::withdraw_keys::count_for_company(app.services.store.pool(), &company.id)
        .await
        .unwrap()
}

async fn selected(app: &TestApp, account_id: &str) -> Option<String> {
    let account = cofre_server::store::accounts::get(app.services.store.pool(), account_id)
        .await
        .unwrap();
    let id = account.withdraw_key_id?;
    Some(
        cofre_server::store::withdraw_keys::get(app.services.store.pool(), &id)
            .await
            .unwrap()
            .key,
    )
}

fn withdraw_key(body: &Value) -> &Value {
    &body["account"]["pixKeyWithdraw"]
}

async fn row_1_post_registers_and_selects_a_key_that_passes_the_checks(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    let body = json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    assert_eq!(body["account"]["accountId"], account_id.as_str());
    assert_eq!(
        withdraw_key(&body),
        &json!({"pixKey": KEY_A, "type": "EMAIL"})
    );
    assert_eq!(registered_keys(&app, &company).await, 1);
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_A));
}
db_test!(row_1_post_registers_and_selects_a_key_that_passes_the_checks);

async fn row_2_post_of_a_key_the_company_has_is_400_and_changes_nothing(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_B}))
            .await,
        200,
    )
    .await;
    let body = assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        400,
        "PIX_KEY_ALREADY_EXISTS",
    )
    .await;
    assert_eq!(body["error"], "Chave pix já existente");
    assert_eq!(registered_keys(&app, &company).await, 2);
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_B));
}
db_test!(row_2_post_of_a_key_the_company_has_is_400_and_changes_nothing);

async fn row_3_put_selects_a_registered_key_that_is_not_selected(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_B, "type": "PHONE"}))
            .await,
        200,
    )
    .await;
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_B));
    let body = json(
        app.put_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    assert_eq!(
        withdraw_key(&body),
        &json!({"pixKey": KEY_A, "type": "EMAIL"})
    );
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_A));
    assert_eq!(registered_keys(&app, &company).await, 2);
}
db_test!(row_3_put_selects_a_registered_key_that_is_not_selected);

async fn row_3_a_key_registered_by_one_campaign_is_selectable_by_another(db: Db) {
    let (app, company, _, campaign) = setup(db).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    let master = app.master(&company).await;
    let (second_account, second) = app.campaign(&master).await;
    app.enable_withdraw_key_api(&second_account).await;
    let body = json(
        app.put_withdraw_key(&second, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    assert_eq!(withdraw_key(&body)["pixKey"], KEY_A);
    assert_eq!(
        selected(&app, &second_account).await.as_deref(),
        Some(KEY_A)
    );
    assert_eq!(registered_keys(&app, &company).await, 1);
}
db_test!(row_3_a_key_registered_by_one_campaign_is_selectable_by_another);

async fn row_4_put_of_the_selected_key_answers_the_account_unchanged(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    let before = json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    let after = json(
        app.put_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    assert_eq!(before, after);
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_A));
    assert_eq!(registered_keys(&app, &company).await, 1);
}
db_test!(row_4_put_of_the_selected_key_answers_the_account_unchanged);

async fn row_5_put_of_a_key_the_company_does_not_have_is_404(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    assert_error(
        app.put_withdraw_key(&campaign, json!({"pixKey": KEY_B}))
            .await,
        404,
        "WITHDRAW_KEY_NOT_FOUND",
    )
    .await;
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_A));
    assert_eq!(registered_keys(&app, &company).await, 1);
}
db_test!(row_5_put_of_a_key_the_company_does_not_have_is_404);

async fn both_calls_are_403_until_support_enables_the_account(db: Db) {
    let (app, company, _, _) = setup(db).await;
    let master = app.master(&company).await;
    let (_, disabled) = app.campaign(&master).await;
    assert_error(
        app.post_withdraw_key(&disabled, json!({"pixKey": KEY_A}))
            .await,
        403,
        "WITHDRAW_KEY_API_DISABLED",
    )
    .await;
    assert_error(
        app.put_withdraw_key(&disabled, json!({"pixKey": KEY_A}))
            .await,
        403,
        "WITHDRAW_KEY_API_DISABLED",
    )
    .await;
    // Even a body that is wrong: the switch is checked first.
    assert_error(
        app.post_withdraw_key(&disabled, json!({})).await,
        403,
        "WITHDRAW_KEY_API_DISABLED",
    )
    .await;
    assert_eq!(registered_keys(&app, &company).await, 0);
}
db_test!(both_calls_are_403_until_support_enables_the_account);

async fn each_call_needs_its_own_scope(db: Db) {
    let (app, company, account_id, _) = setup(db).await;
    let c = app.services.companies.get(&company.id).await.unwrap();
    let post_only = app
        .services
        .applications
        .create(
            &c,
            cofre_server::service::applications::NewApplication {
                name: Some("post only".into()),
                kind: Some("API".into()),
                account_id: Some(account_id.clone()),
                scopes: vec!["PIX_KEY_WITHDRAW_POST".into()],
                allowed_ips: vec![],
            },
        )
        .await
        .unwrap()
        .app_id;
    json(
        app.post_withdraw_key(&post_only, json!({"pixKey": KEY_A}))
            .await,
        200,
    )
    .await;
    let body = assert_error(
        app.put_withdraw_key(&post_only, json!({"pixKey": KEY_A}))
            .await,
        403,
        "SCOPE_MISSING",
    )
    .await;
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("PIX_KEY_WITHDRAW_PUT")
    );
}
db_test!(each_call_needs_its_own_scope);

async fn refusals_of_the_directory_checks(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": "sumiu@banco.com"}))
            .await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": "alguem@banco.com"}))
            .await,
        400,
        "WITHDRAW_KEY_HOLDER_MISMATCH",
    )
    .await;
    // A key of a Cofre account (here the company's own campaign key) is never accepted.
    json(
        app.create_pix_key(&campaign, "EMAIL", "campanha@empresa0.com.br")
            .await,
        201,
    )
    .await;
    assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": "campanha@empresa0.com.br"}))
            .await,
        400,
        "WITHDRAW_KEY_INTERNAL",
    )
    .await;
    assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": "???"}))
            .await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    let body = assert_error(
        app.post_withdraw_key(&campaign, json!({})).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "pixKey");
    assert_error(
        app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A, "type": "CPF"}))
            .await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    assert_eq!(registered_keys(&app, &company).await, 0);
    assert_eq!(selected(&app, &account_id).await, None);
}
db_test!(refusals_of_the_directory_checks);

async fn random_is_the_withdraw_name_of_the_directorys_evp(db: Db) {
    let (app, _, _, campaign) = setup(db).await;
    let body = json(
        app.post_withdraw_key(
            &campaign,
            json!({"pixKey": EVP.to_uppercase(), "type": "RANDOM"}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        withdraw_key(&body),
        &json!({"pixKey": EVP, "type": "RANDOM"})
    );
    let listed = json(app.get("/api/v1/account", Some(&campaign)).await, 200).await;
    assert_eq!(listed["accounts"][0]["pixKeyWithdraw"]["type"], "RANDOM");
}
db_test!(random_is_the_withdraw_name_of_the_directorys_evp);

async fn twenty_concurrent_identical_posts_register_one_key(db: Db) {
    let (app, company, account_id, campaign) = setup(db).await;
    let posts = (0..20).map(|_| app.post_withdraw_key(&campaign, json!({"pixKey": KEY_A})));
    let answers = futures_util::future::join_all(posts).await;
    let mut ok = 0;
    for answer in answers {
        match answer.status().as_u16() {
            200 => ok += 1,
            _ => {
                assert_error(answer, 400, "PIX_KEY_ALREADY_EXISTS").await;
            }
        }
    }
    assert_eq!(ok, 1, "exactly one POST registers the key");
    assert_eq!(registered_keys(&app, &company).await, 1);
    assert_eq!(selected(&app, &account_id).await.as_deref(), Some(KEY_A));
}
db_test!(twenty_concurrent_identical_posts_register_one_key);
