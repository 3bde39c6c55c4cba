//! Money in and out: sandbox Pix in, withdrawals, refunds, disputes, the statement and
//! seed rule 6 (`companyBankAccount`).

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

/// A campaign with money and a withdraw key: `(app, account, campaign AppID, master)`.
async fn ready_to_withdraw(db: Db, funds: i64) -> (TestApp, String, String, String) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.directory(&[("tesouraria@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", funds)
        .await;
    app.enable_withdraw_key_api(&account_id).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": "tesouraria@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    (app, account_id, campaign, master)
}

async fn a_pix_to_a_key_credits_its_account_until_the_key_is_deleted(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 2500)
        .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (2500, 0, 2500));
    let payer = app.master(&app.company(1, true).await).await;
    json(
        app.sandbox_pix(&payer, "DOE@empresa0.com.br", 500).await,
        200,
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (3000, 0, 3000));
    assert_eq!(
        app.delete_pix_key(&campaign, "doe@empresa0.com.br")
            .await
            .status(),
        204
    );
    assert_error(
        app.sandbox_pix(&payer, "doe@empresa0.com.br", 500).await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (3000, 0, 3000));
    let body = assert_error(
        app.post("/api/v1/sandbox/pix", Some(&payer), json!({"value": -1}))
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"].as_array().unwrap().len(), 2);
}
db_test!(a_pix_to_a_key_credits_its_account_until_the_key_is_deleted);

async fn without_the_sandbox_its_routes_do_not_exist(db: Db) {
    let app = spawn_app_with(db, |s| s.sandbox.enabled = Some(false)).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    assert_error(
        app.sandbox_pix(&master, "a@b.com", 1).await,
        404,
        "ROUTE_NOT_FOUND",
    )
    .await;
    assert_error(app.pay_charge(&master, "x").await, 404, "ROUTE_NOT_FOUND").await;
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    assert!(
        doc["paths"]
            .as_object()
            .unwrap()
            .keys()
            .all(|p| !p.contains("sandbox"))
    );
}
db_test!(without_the_sandbox_its_routes_do_not_exist);

async fn withdrawals_go_to_the_withdraw_key(db: Db) {
    let (app, account_id, campaign, _) = ready_to_withdraw(db, 10_000).await;
    let sent = json(
        app.withdraw(&campaign, &account_id, json!({"value": 2500}))
            .await,
        200,
    )
    .await;
    assert_eq!(sent["transaction"]["value"], 2500);
    assert_eq!(
        sent["transaction"]["endToEndId"].as_str().unwrap().len(),
        32
    );
    assert_eq!(
        sent["account"]["balance"],
        json!({"total": 7500, "blocked": 0, "available": 7500})
    );
    assert_eq!(
        sent["account"]["pixKeyWithdraw"]["pixKey"],
        "tesouraria@empresa0.com.br"
    );
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 0}))
            .await,
        400,
        "WITHDRAW_VALUE_INVALID",
    )
    .await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": -5}))
            .await,
        400,
        "WITHDRAW_VALUE_INVALID",
    )
    .await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 7501}))
            .await,
        400,
        "INSUFFICIENT_FUNDS",
    )
    .await;
    // The official Node client's shape.
    let node = app
        .post(
            &format!("/api/v1/account/{account_id}"),
            Some(&campaign),
            json!({"accountId": account_id, "value": 500}),
        )
        .await;
    assert_eq!(
        json(node, 200).await["account"]["balance"]["available"],
        7000
    );
    // No value: everything available.
    let all = json(app.withdraw(&campaign, &account_id, json!({})).await, 200).await;
    assert_eq!(all["transaction"]["value"], 7000);
    assert_error(
        app.withdraw(&campaign, &account_id, json!({})).await,
        400,
        "INSUFFICIENT_FUNDS",
    )
    .await;
    let statement = json(app.get("/api/v1/statement", Some(&campaign)).await, 200).await;
    let kinds: Vec<&str> = statement["statement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["PIX_OUT", "PIX_OUT", "PIX_OUT", "PIX_IN"]);
    assert_eq!(
        statement["statement"][0]["counterparty"]["pixKey"],
        "tesouraria@empresa0.com.br"
    );
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(withdrawals_go_to_the_withdraw_key);

async fn a_withdrawal_needs_a_selected_key_and_a_visible_account(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 1000)
        .await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 10}))
            .await,
        400,
        "WITHDRAW_KEY_NOT_SET",
    )
    .await;
    let (other_account, _) = app.campaign(&master).await;
    assert_error(
        app.withdraw(&campaign, &other_account, json!({"value": 10}))
            .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    let stranger = app.master(&app.company(1, true).await).await;
    assert_error(
        app.withdraw(&stranger, &account_id, json!({"value": 10}))
            .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (1000, 0, 1000));
}
db_test!(a_withdrawal_needs_a_selected_key_and_a_visible_account);

async fn fifty_concurrent_withdrawals_never_overdraw(db: Db) {
    let (app, account_id, campaign, _) = ready_to_withdraw(db, 10_000).await;
    let path = format!("/api/v1/account/{account_id}/withdraw");
    let answers = futures_util::future::join_all(
        (0..50).map(|_| app.post(&path, Some(&campaign), json!({"value": 300}))),
    )
    .await;
    let mut sent = 0;
    for answer in answers {
        match answer.status().as_u16() {
            200 => sent += 1,
            _ => {
                assert_error(answer, 400, "INSUFFICIENT_FUNDS").await;
            }
        }
    }
    assert_eq!(sent, 33, "10 000 holds 33 withdrawals of 300");
    assert_eq!(app.balance(&campaign, &account_id).await, (100, 0, 100));
    let statement = json(
        app.get("/api/v1/statement?limit=100", Some(&campaign))
            .await,
        200,
    )
    .await;
    let out: i64 = statement["statement"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["type"] == "PIX_OUT")
        .map(|l| l["value"].as_i64().unwrap())
        .sum();
    assert_eq!(out, 9_900);
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(fifty_concurrent_withdrawals_never_overdraw);

/// Found by scripts/crash: a client whose withdrawal got no answer (the server was
/// killed mid-request) could neither learn whether it happened nor retry it safely.
/// With a correlationID the repeat answers the withdrawal already made.
async fn a_withdrawal_repeated_with_its_correlation_id_is_made_once(db: Db) {
    let (app, account_id, campaign, _) = ready_to_withdraw(db, 10_000).await;
    let first = json(
        app.withdraw(
            &campaign,
            &account_id,
            json!({"value": 2500, "correlationID": "saque-1"}),
        )
        .await,
        200,
    )
    .await;
    let again = json(
        app.withdraw(
            &campaign,
            &account_id,
            json!({"value": 2500, "correlationID": "saque-1"}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(again["transaction"], first["transaction"]);
    assert_eq!(again["account"]["balance"]["available"], 7500);
    assert_error(
        app.withdraw(
            &campaign,
            &account_id,
            json!({"value": 100, "correlationID": "saque-1"}),
        )
        .await,
        409,
        "CORRELATION_ID_CONFLICT",
    )
    .await;

    // Concurrent repeats (a client retrying while its first attempt still runs).
    let path = format!("/api/v1/account/{account_id}/withdraw");
    let answers = futures_util::future::join_all((0..10).map(|_| {
        app.post(
            &path,
            Some(&campaign),
            json!({"value": 1000, "correlationID": "saque-2"}),
        )
    }))
    .await;
    let mut ends = std::collections::HashSet::new();
    for answer in answers {
        ends.insert(json(answer, 200).await["transaction"]["endToEndId"].clone());
    }
    assert_eq!(ends.len(), 1, "one withdrawal for ten requests");
    assert_eq!(app.balance(&campaign, &account_id).await, (6500, 0, 6500));

    // A refused attempt keeps nothing: the same request succeeds once money arrives.
    let big = json!({"value": 9000, "correlationID": "saque-3"});
    assert_error(
        app.withdraw(&campaign, &account_id, big.clone()).await,
        400,
        "INSUFFICIENT_FUNDS",
    )
    .await;
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5000)
            .await,
        200,
    )
    .await;
    json(app.withdraw(&campaign, &account_id, big).await, 200).await;
    assert_eq!(app.balance(&campaign, &account_id).await, (2500, 0, 2500));

    // The Node client's shape takes it too; without a correlationID nothing changes.
    let node = json!({"accountId": account_id, "value": 100, "correlationID": "saque-4"});
    let node_path = format!("/api/v1/account/{account_id}");
    json(
        app.post(&node_path, Some(&campaign), node.clone()).await,
        200,
    )
    .await;
    json(app.post(&node_path, Some(&campaign), node).await, 200).await;
    for _ in 0..2 {
        json(
            app.withdraw(&campaign, &account_id, json!({"value": 100}))
                .await,
            200,
        )
        .await;
    }
    assert_eq!(app.balance(&campaign, &account_id).await, (2200, 0, 2200));
    let statement = json(app.get("/api/v1/statement", Some(&campaign)).await, 200).await;
    let out = statement["statement"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["type"] == "PIX_OUT")
        .count();
    assert_eq!(out, 6);
    let confirmed = app
        .events_of(&app.caller(&campaign).await.company_id)
        .await
        .into_iter()
        .filter(|(event, _, _)| event == "OPENPIX:MOVEMENT_CONFIRMED")
        .count();
    assert_eq!(confirmed, 6, "one event per withdrawal made");
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(a_withdrawal_repeated_with_its_correlation_id_is_made_once);

async fn refunds_are_partial_or_full_and_never_above_what_was_received(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    json(
        app.create_charge(&campaign, json!({"correlationID": "c1", "value": 1000}))
            .await,
        201,
    )
    .await;
    let paid = json(app.pay_charge(&campaign, "c1").await, 200).await;
    let e2e = paid["transaction"]["endToEndId"]
        .as_str()
        .unwrap()
        .to_owned();
    // A second Pix in keeps money in the account beyond this charge.
    json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5000)
            .await,
        200,
    )
    .await;

    let partial = json(
        app.post(
            "/api/v1/charge/c1/refund",
            Some(&campaign),
            json!({"value": 300, "correlationID": "r1", "comment": "parcial"}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(partial["refund"]["value"], 300);
    assert_eq!(partial["refund"]["originalEndToEndId"], e2e.as_str());
    let same = json(
        app.post(
            "/api/v1/charge/c1/refund",
            Some(&campaign),
            json!({"value": 300, "correlationID": "r1", "comment": "parcial"}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(same["refund"]["refundId"], partial["refund"]["refundId"]);
    let body = assert_error(
        app.post(
            "/api/v1/refund",
            Some(&campaign),
            json!({"transactionEndToEndId": e2e, "value": 701, "correlationID": "r2"}),
        )
        .await,
        400,
        "REFUND_ABOVE_RECEIVED",
    )
    .await;
    assert!(body["error"].as_str().unwrap().contains("700"));
    let rest = json(
        app.post(
            "/api/v1/refund",
            Some(&campaign),
            json!({"transactionEndToEndId": e2e, "correlationID": "r3"}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(rest["refund"]["value"], 700);
    assert_error(
        app.post(
            "/api/v1/refund",
            Some(&campaign),
            json!({"transactionEndToEndId": e2e, "value": 1, "correlationID": "r4"}),
        )
        .await,
        400,
        "REFUND_ABOVE_RECEIVED",
    )
    .await;
    let listed = json(
        app.get("/api/v1/charge/c1/refund", Some(&campaign)).await,
        200,
    )
    .await;
    assert_eq!(listed["refunds"].as_array().unwrap().len(), 2);
    let by_correlation = json(app.get("/api/v1/refund/r1", Some(&campaign)).await, 200).await;
    assert_eq!(
        by_correlation["refund"]["refundId"],
        partial["refund"]["refundId"]
    );
    let refund_id = partial["refund"]["refundId"].as_str().unwrap();
    json(
        app.get(&format!("/api/v1/refund/{refund_id}"), Some(&campaign))
            .await,
        200,
    )
    .await;
    assert_error(
        app.get("/api/v1/refund/nope", Some(&campaign)).await,
        404,
        "REFUND_NOT_FOUND",
    )
    .await;
    assert_error(
        app.post(
            "/api/v1/refund",
            Some(&campaign),
            json!({"transactionEndToEndId": "E000", "correlationID": "r5"}),
        )
        .await,
        404,
        "TRANSACTION_NOT_FOUND",
    )
    .await;
    assert_eq!(app.balance(&campaign, &account_id).await, (5000, 0, 5000));
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(refunds_are_partial_or_full_and_never_above_what_was_received);

async fn a_sandbox_dispute_moves_the_value_to_blocked(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    let pix = json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 800).await,
        200,
    )
    .await;
    let e2e = pix["transaction"]["endToEndId"].as_str().unwrap();
    let blocked = json(
        app.post(
            "/api/v1/sandbox/dispute",
            Some(&campaign),
            json!({"transactionID": e2e}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(blocked["transaction"]["type"], "DISPUTE_BLOCK");
    assert_eq!(app.balance(&campaign, &account_id).await, (0, 800, 800));
    assert_error(
        app.post(
            "/api/v1/sandbox/dispute",
            Some(&campaign),
            json!({"transactionID": e2e}),
        )
        .await,
        409,
        "DISPUTE_ALREADY_EXISTS",
    )
    .await;
    assert_error(
        app.withdraw(&campaign, &account_id, json!({"value": 1}))
            .await,
        400,
        "WITHDRAW_KEY_NOT_SET",
    )
    .await;
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(a_sandbox_dispute_moves_the_value_to_blocked);

async fn company_bank_account_follows_seed_rule_6(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account_id, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 700)
        .await;
    let (other_account, _) = app.campaign(&master).await;
    let path = format!("/api/v1/statement?companyBankAccount={account_id}");
    assert_error(app.get(&path, Some(&master)).await, 403, "FEATURE_DISABLED").await;
    // An application naming its own account needs nothing more.
    json(app.get(&path, Some(&campaign)).await, 200).await;
    assert_error(
        app.get(
            &format!("/api/v1/statement?companyBankAccount={other_account}"),
            Some(&campaign),
        )
        .await,
        403,
        "MASTER_APPLICATION_REQUIRED",
    )
    .await;

    app.services
        .companies
        .set_feature(
            &company.id,
            cofre_server::service::features::Feature::MasterAppReadAnyAccount,
            true,
        )
        .await
        .unwrap();
    let statement = json(app.get(&path, Some(&master)).await, 200).await;
    assert_eq!(statement["statement"][0]["value"], 700);
    let e2e = statement["statement"][0]["endToEndId"].as_str().unwrap();
    let one = json(
        app.get(
            &format!("/api/v1/transaction/{e2e}?companyBankAccount={account_id}"),
            Some(&master),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(one["transaction"]["type"], "PIX_IN");
    // Without the parameter the MASTER reads its own (main) account, where it is not.
    assert_error(
        app.get(&format!("/api/v1/transaction/{e2e}"), Some(&master))
            .await,
        404,
        "TRANSACTION_NOT_FOUND",
    )
    .await;
    let listed = json(
        app.get(
            &format!("/api/v1/transaction?companyBankAccount={account_id}"),
            Some(&master),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(listed["transactions"].as_array().unwrap().len(), 1);

    let stranger = app.company(1, true).await;
    let (stranger_account, _) = app.campaign(&app.master(&stranger).await).await;
    assert_error(
        app.get(
            &format!("/api/v1/statement?companyBankAccount={stranger_account}"),
            Some(&master),
        )
        .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
}
db_test!(company_bank_account_follows_seed_rule_6);

async fn customers_are_created_read_and_patched(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let created = json(
        app.post(
            "/api/v1/customer",
            Some(&master),
            json!({"name": "Ana Souza", "email": "Ana@Example.com", "taxID": "111.444.777-35", "correlationID": "ana",
                   "address": {"city": "Recife", "state": "PE"}}),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(created["customer"]["email"], "ana@example.com");
    assert_eq!(created["customer"]["taxID"], "111.444.777-35");
    // The same correlationID and fields: the existing customer, nothing duplicated.
    let again = json(
        app.post(
            "/api/v1/customer",
            Some(&master),
            json!({"name": "Ana Souza", "email": "Ana@Example.com", "taxID": "111.444.777-35", "correlationID": "ana",
                   "address": {"city": "Recife", "state": "PE"}}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(again["customer"]["id"], created["customer"]["id"]);
    assert_error(
        app.post(
            "/api/v1/customer",
            Some(&master),
            json!({"name": "Outra", "correlationID": "ana"}),
        )
        .await,
        409,
        "CUSTOMER_ALREADY_EXISTS",
    )
    .await;
    assert_error(
        app.post(
            "/api/v1/customer",
            Some(&master),
            json!({"name": "X", "taxID": "123"}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let id = created["customer"]["id"].as_str().unwrap();
    json(
        app.get(&format!("/api/v1/customer/{id}"), Some(&master))
            .await,
        200,
    )
    .await;
    let patched = app
        .request(
            reqwest::Method::PATCH,
            "/api/v1/customer/ana",
            Some(&master),
        )
        .json(&json!({"phone": "+55 11 98765-4321", "name": "Ana S."}))
        .send()
        .await
        .unwrap();
    let patched = json(patched, 200).await;
    assert_eq!(patched["customer"]["name"], "Ana S.");
    assert_eq!(patched["customer"]["phone"], "+5511987654321");
    assert_eq!(patched["customer"]["email"], "ana@example.com");
    assert_eq!(patched["customer"]["address"]["city"], "Recife");
    let listed = json(app.get("/api/v1/customer", Some(&master)).await, 200).await;
    assert_eq!(listed["pageInfo"]["totalCount"], 1);
    let stranger = app.master(&app.company(1, true).await).await;
    assert_error(
        app.get("/api/v1/customer/ana", Some(&stranger)).await,
        404,
        "CUSTOMER_NOT_FOUND",
    )
    .await;
}
db_test!(customers_are_created_read_and_patched);

/// Found by schemathesis (scripts/fuzz): the sandbox took a Pix of any positive value;
/// two of about `i64::MAX` overflowed the balance (SQLite stored it as a float, Postgres
/// refused it), and from then on every read of that account was a 500.
async fn a_pix_above_the_largest_amount_is_refused_and_balances_stay_readable(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account, campaign) = app.funded_campaign(&master, "a@empresa0.com.br", 0).await;
    for value in [1_000_000_000_000_i64, 9_223_372_036_854_775_000] {
        let body = assert_error(
            app.sandbox_pix(&campaign, "a@empresa0.com.br", value).await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(body["details"][0]["field"], "value");
    }
    assert_eq!(app.balance(&campaign, &account).await, (0, 0, 0));
    // The largest Pix, twice: the balance adds up and reads back.
    let max = 999_999_999_999_i64;
    for _ in 0..2 {
        json(
            app.sandbox_pix(&campaign, "a@empresa0.com.br", max).await,
            200,
        )
        .await;
    }
    assert_eq!(
        app.balance(&campaign, &account).await,
        (2 * max, 0, 2 * max)
    );
    json(app.get("/api/v1/pix-keys", Some(&campaign)).await, 200).await;
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(a_pix_above_the_largest_amount_is_refused_and_balances_stay_readable);
