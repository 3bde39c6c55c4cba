//! The `cofre` command line, driven as an operator (and the acceptance checks) would.

use std::process::Output;

use cofre_server::service::Services;
use cofre_server::store::Store;
use serde_json::Value;

use crate::db_test;
use crate::helpers::*;

async fn cofre(db_url: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args(["--database-url", db_url])
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .await
        .expect("cofre runs")
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON value ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

async fn services(url: &str) -> Services {
    Services::new(Store::connect(url).await.unwrap())
}

async fn migrate_runs_on_a_fresh_database_and_again(db: Db) {
    let test_db = fresh_database(db).await;
    for _ in 0..2 {
        let out = stdout_json(&cofre(&test_db.url, &["migrate", "--json"]).await);
        assert_eq!(
            out["migrations"],
            serde_json::json!([
                "foundation",
                "campaigns",
                "money",
                "events",
                "plugins",
                "console",
                "files disputes kyc",
                "subscriptions",
                "rate buckets"
            ])
        );
    }
}
db_test!(migrate_runs_on_a_fresh_database_and_again);

async fn company_and_application_commands_print_json(db: Db) {
    let test_db = fresh_database(db).await;
    let company = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "company",
                "create",
                "--name",
                "Campanhas SA",
                "--tax-id",
                "12ABC34501DE35",
                "--baas",
                "--admin-email",
                "ops@campanhas.com.br",
                "--admin-password",
                "s3nha-forte",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(company["taxID"], "12.ABC.345/01DE-35");
    let company_id = company["companyId"].as_str().unwrap();
    let main_account = company["mainAccountId"].as_str().unwrap();

    let master = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "application",
                "create",
                "--company",
                company_id,
                "--name",
                "M",
                "--type",
                "MASTER",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(master["type"], "MASTER");
    assert_eq!(master["companyBankAccount"], main_account);
    let api = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "application",
                "create",
                "--company",
                company_id,
                "--name",
                "A",
                "--type",
                "API",
                "--account",
                main_account,
                "--scope",
                "FILE_POST",
                "--allow-ip",
                "10.0.0.0/8",
                "--json",
            ],
        )
        .await,
    );
    for key in [
        "appID",
        "clientId",
        "clientSecret",
        "type",
        "companyBankAccount",
    ] {
        assert!(api[key].is_string(), "{key} in {api}");
    }

    let services = services(&test_db.url).await;
    let caller = services
        .applications
        .authenticate(api["appID"].as_str())
        .await
        .unwrap();
    assert_eq!(caller.company_id, company_id);
    assert_eq!(caller.scopes, Some(vec!["FILE_POST".to_owned()]));
    assert_eq!(caller.allowed_ips.len(), 1);
    let stored = services.companies.get(company_id).await.unwrap();
    assert_eq!(stored.features, ["BAAS"]);
    assert!(
        services
            .users
            .sign_in("ops@campanhas.com.br", "s3nha-forte")
            .await
            .is_ok()
    );
}
db_test!(company_and_application_commands_print_json);

async fn invalid_input_exits_non_zero_and_saves_nothing(db: Db) {
    let test_db = fresh_database(db).await;
    let out = cofre(
        &test_db.url,
        &[
            "company",
            "create",
            "--name",
            "X",
            "--tax-id",
            "11.222.333/0001-82",
            "--admin-email",
            "a@b.co",
            "--admin-password",
            "longenough",
            "--json",
        ],
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("taxID"));
    let services = services(&test_db.url).await;
    let tax = cofre_server::service::tax_id::TaxId::parse("11.222.333/0001-81").unwrap();
    assert!(
        services
            .companies
            .find_by_tax_id(&tax)
            .await
            .unwrap()
            .is_none()
    );
    let out = cofre(
        &test_db.url,
        &[
            "feature",
            "enable",
            "--company",
            "cmp_missing",
            "NOT_A_FEATURE",
        ],
    )
    .await;
    assert!(!out.status.success());
}
db_test!(invalid_input_exits_non_zero_and_saves_nothing);

async fn feature_and_withdraw_key_api_switches(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, false).await;
    let url = &app.db.url;
    assert!(
        cofre(
            url,
            &[
                "feature",
                "enable",
                "--company",
                &company.id,
                "MASTER_APP_READ_ANY_ACCOUNT"
            ]
        )
        .await
        .status
        .success()
    );
    assert!(
        cofre(
            url,
            &["feature", "enable", "--company", &company.id, "BAAS"]
        )
        .await
        .status
        .success()
    );
    assert!(
        cofre(
            url,
            &["feature", "disable", "--company", &company.id, "BAAS"]
        )
        .await
        .status
        .success()
    );
    let stored = app.services.companies.get(&company.id).await.unwrap();
    assert_eq!(stored.features, ["MASTER_APP_READ_ANY_ACCOUNT"]);

    let out = cofre(
        url,
        &[
            "account",
            "withdraw-key-api",
            "enable",
            "--account",
            &company.main_account_id,
        ],
    )
    .await;
    assert!(out.status.success());
    let account =
        cofre_server::store::accounts::get(app.services.store.pool(), &company.main_account_id)
            .await
            .unwrap();
    assert!(account.withdraw_key_api_enabled);
    let out = cofre(
        url,
        &[
            "account",
            "withdraw-key-api",
            "enable",
            "--account",
            "acc_missing",
        ],
    )
    .await;
    assert!(!out.status.success());
}
db_test!(feature_and_withdraw_key_api_switches);

const CSV: &str = "key,type,holderName,holderTaxID,ispb,branch,accountNumber,accountType
joana@banco.com,EMAIL,Joana Dias,111.444.777-35,60701190,0001,12345,CACC
+5521999990000,PHONE,Joana Dias,11144477735,60701190,0001,12345,CACC
";

async fn dict_import_is_idempotent_and_all_or_nothing(db: Db) {
    let test_db = fresh_database(db).await;
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("dict.csv");
    std::fs::write(&csv, CSV).unwrap();
    let csv = csv.to_str().unwrap();
    let first = stdout_json(&cofre(&test_db.url, &["dict", "import", csv, "--json"]).await);
    assert_eq!(
        (first["read"].as_u64(), first["imported"].as_u64()),
        (Some(2), Some(2))
    );
    let again = stdout_json(&cofre(&test_db.url, &["dict", "import", csv, "--json"]).await);
    assert_eq!(
        (again["imported"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(2))
    );

    let jsonl = dir.path().join("more.jsonl");
    std::fs::write(
        &jsonl,
        r#"{"key":"4f6c1a52-2b7e-4c1e-9a0f-3b9d8e7c6a5b","type":"EVP","holderName":"Loja","holderTaxID":"11.444.777/0001-61","ispb":"00000000","branch":"1","accountNumber":"9","accountType":"CACC"}
{"key":"bad-email","type":"EMAIL","holderName":"X","holderTaxID":"11144477735","ispb":"00000000","branch":"1","accountNumber":"9","accountType":"CACC"}
"#,
    )
    .unwrap();
    let out = cofre(
        &test_db.url,
        &["dict", "import", jsonl.to_str().unwrap(), "--json"],
    )
    .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
    let store = Store::connect(&test_db.url).await.unwrap();
    assert_eq!(
        cofre_server::store::directory::count(store.pool())
            .await
            .unwrap(),
        2,
        "nothing of the bad file"
    );
    let entry = cofre_server::store::directory::find(store.pool(), "+5521999990000")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entry.holder_tax_id, "11144477735");
}
db_test!(dict_import_is_idempotent_and_all_or_nothing);

async fn demo_creates_once_and_reissues_the_master_app_id(db: Db) {
    let test_db = fresh_database(db).await;
    let first = stdout_json(&cofre(&test_db.url, &["demo", "--json"]).await);
    let second = stdout_json(&cofre(&test_db.url, &["demo", "--json"]).await);
    for key in [
        "companyId",
        "mainAccountId",
        "masterAppId",
        "adminEmail",
        "adminPassword",
        "baseUrl",
    ] {
        assert!(second[key].is_string(), "{key}");
    }
    assert_eq!(first["companyId"], second["companyId"]);
    assert_eq!(first["mainAccountId"], second["mainAccountId"]);
    let services = services(&test_db.url).await;
    let caller = services
        .applications
        .authenticate(second["masterAppId"].as_str())
        .await
        .unwrap();
    assert!(caller.is_master());
    assert!(
        services
            .applications
            .authenticate(first["masterAppId"].as_str())
            .await
            .is_err()
    );
    let company = services
        .companies
        .get(second["companyId"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(
        company.features.len(),
        6,
        "every feature: {:?}",
        company.features
    );
    let user = services
        .users
        .sign_in(
            second["adminEmail"].as_str().unwrap(),
            second["adminPassword"].as_str().unwrap(),
        )
        .await
        .unwrap();
    assert!(user.permissions.contains(&"API_PLUGINS".to_owned()));
    assert!(
        cofre_server::store::directory::count(services.store.pool())
            .await
            .unwrap()
            >= 4
    );
    // The main account has its Pix key once, however often the demo runs.
    let (keys, account) = services.pix_keys.list(&caller).await.unwrap();
    let keys: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(keys, [cofre_server::service::demo::DEMO_PIX_KEY]);
    assert!(account.withdraw_key_api_enabled);
}
db_test!(demo_creates_once_and_reissues_the_master_app_id);

async fn bench_campaign_drives_every_operation_and_reports_ratios(db: Db) {
    let test_db = fresh_database(db).await;
    let report = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "bench",
                "campaign",
                "--clients",
                "2",
                "--requests",
                "30",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(report["ceiling"]["ratioToCeiling"], 1.0);
    let ops = report["operations"].as_array().unwrap();
    let names: Vec<&str> = ops
        .iter()
        .map(|o| o["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "create-key (POST /api/v1/pix-keys)",
            "list-keys (GET /api/v1/pix-keys)",
            "check-key (POST /api/v1/pix-keys/check)"
        ]
    );
    for op in ops {
        assert_eq!(op["requests"], 30);
        assert!(op["requestsPerSecond"].as_f64().unwrap() > 0.0);
        assert!(op["p99Ms"].as_f64().unwrap() >= op["p50Ms"].as_f64().unwrap());
    }
    // The keys it created are real: 30 keys over two campaigns of the bench company.
    let store = Store::connect(&test_db.url).await.unwrap();
    let n: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) AS n FROM pix_keys")
            .fetch_one(store.pool())
            .await
            .unwrap(),
        "n",
    )
    .unwrap();
    assert_eq!(n, 30);
}
db_test!(bench_campaign_drives_every_operation_and_reports_ratios);

async fn ledger_verify_catches_a_hand_corrupted_posting(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "doe@empresa0.com.br", 1234)
        .await;
    json(
        app.create_charge(
            &campaign,
            serde_json::json!({"correlationID": "c", "value": 99}),
        )
        .await,
        201,
    )
    .await;
    json(app.pay_charge(&campaign, "c").await, 200).await;
    let ok = stdout_json(&cofre(&app.db.url, &["ledger", "verify", "--json"]).await);
    assert_eq!(ok, serde_json::json!({"ok": true, "violations": []}));

    sqlx::query("UPDATE ledger_postings SET amount = amount + 1 WHERE amount = 99")
        .execute(app.services.store.pool())
        .await
        .unwrap();
    let out = cofre(&app.db.url, &["ledger", "verify", "--json"]).await;
    assert!(!out.status.success(), "a corrupted ledger exits non-zero");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let violations: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        violations.iter().any(|v| v.contains("postings sum to 1")),
        "{violations:?}"
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("available 1333 but postings say 1334")),
        "{violations:?}"
    );
}
db_test!(ledger_verify_catches_a_hand_corrupted_posting);

async fn bench_pix_in_reports_a_ratio_to_the_database_ceiling(db: Db) {
    let test_db = fresh_database(db).await;
    let report = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "bench",
                "pix-in",
                "--clients",
                "2",
                "--requests",
                "40",
                "--ceiling-seconds",
                "1",
                "--json",
            ],
        )
        .await,
    );
    assert_eq!(report["cofre"]["requests"], 40);
    assert!(report["ceilingPerSecond"].as_f64().unwrap() > 0.0);
    let ratio = report["ratio"].as_f64().unwrap();
    assert!(
        ratio > 0.0
            && (ratio
                - report["cofre"]["requestsPerSecond"].as_f64().unwrap()
                    / report["ceilingPerSecond"].as_f64().unwrap())
            .abs()
                < 1e-9
    );
    // The Pix ins really landed, and the books balance.
    let store = Store::connect(&test_db.url).await.unwrap();
    assert_eq!(
        cofre_server::service::ledger::verify(&store).await.unwrap(),
        Vec::<String>::new()
    );
    let n: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) AS n FROM ledger_transactions WHERE kind = 'PIX_IN'")
            .fetch_one(store.pool())
            .await
            .unwrap(),
        "n",
    )
    .unwrap();
    assert!(n >= 40, "{n}");
}
db_test!(bench_pix_in_reports_a_ratio_to_the_database_ceiling);

async fn bench_webhooks_drains_its_backlog(db: Db) {
    let test_db = fresh_database(db).await;
    let report = stdout_json(
        &cofre(
            &test_db.url,
            &[
                "bench", "webhooks", "--events", "60", "--loops", "2", "--batch", "8", "--json",
            ],
        )
        .await,
    );
    assert_eq!(report["events"], 60);
    assert!(report["deliveriesPerSecond"].as_f64().unwrap() > 0.0);
    assert!(report["signaturesPerSecondOneCore"].as_f64().unwrap() > 0.0);
    let store = Store::connect(&test_db.url).await.unwrap();
    let delivered: i64 = sqlx::Row::try_get(
        &sqlx::query("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'DELIVERED'")
            .fetch_one(store.pool())
            .await
            .unwrap(),
        "n",
    )
    .unwrap();
    assert_eq!(delivered, 60);
}
db_test!(bench_webhooks_drains_its_backlog);

#[tokio::test]
async fn bench_plugins_measures_the_allow_all_call() {
    let component = format!(
        "{}/../plugins/examples/target/wasm32-wasip2/release/pix_key_policy.wasm",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cofre"))
        .args([
            "bench",
            "plugins",
            "--component",
            &component,
            "--calls",
            "50",
            "--json",
        ])
        .output()
        .await
        .unwrap();
    let report = stdout_json(&out);
    assert_eq!(report["calls"], 50);
    assert!(report["p99Us"].as_f64().unwrap() >= report["p50Us"].as_f64().unwrap());
    assert!(report["callsPerSecondOneCore"].as_f64().unwrap() > 0.0);
}
