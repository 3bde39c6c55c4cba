//! The console host: server-rendered pages and sign-in through a server fn with a
//! session stored in the database.

use serde_json::Value;

use crate::db_test;
use crate::helpers::*;

async fn sign_in_sets_a_session_and_the_landing_page_shows_the_company(db: Db) {
    let app = spawn_app(db).await;
    app.company(0, true).await;
    let login = app.get("/login", None).await;
    assert_eq!(login.status(), 200);
    let page = login.text().await.unwrap();
    assert!(page.contains("name=\"email\"") && page.contains("name=\"password\""));

    let wrong = app
        .client
        .post(app.url("/console/fn/sign_in"))
        .header("accept", "application/json")
        .form(&[
            ("email", "admin0@example.com"),
            ("password", "wrong password"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(
        wrong
            .text()
            .await
            .unwrap()
            .contains("Email ou senha incorretos")
    );

    let signed_in = app
        .client
        .post(app.url("/console/fn/sign_in"))
        // A browser without JavaScript posting the form: answered with a redirect.
        .header("accept", "text/html")
        .header("referer", app.url("/login"))
        .form(&[
            ("email", "ADMIN0@example.com"),
            ("password", "correct horse battery"),
        ])
        .send()
        .await
        .unwrap();
    assert!(
        signed_in.status().is_redirection(),
        "status {}",
        signed_in.status()
    );
    let cookie = signed_in.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cookie.starts_with("cofre_session=")
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Lax")
    );
    let session = cookie.split(';').next().unwrap().to_owned();

    let home = app
        .client
        .get(app.url("/"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    let html = home.text().await.unwrap();
    assert!(html.contains("Empresa 0"), "{html}");
    assert!(html.contains("admin0@example.com"));

    // Without the cookie the landing page shows no company data.
    let anonymous = app.get("/", None).await.text().await.unwrap();
    assert!(!anonymous.contains("Empresa 0"));
}
db_test!(sign_in_sets_a_session_and_the_landing_page_shows_the_company);

const PASSWORD: &str = "correct horse battery";

async fn accounts_of(app: &TestApp, company_id: &str) -> i64 {
    cofre_server::store::accounts::count_for_company(app.services.store.pool(), company_id)
        .await
        .unwrap()
}

async fn applications_of(
    app: &TestApp,
    company_id: &str,
) -> Vec<cofre_server::service::applications::Application> {
    app.services.applications.list(company_id).await.unwrap()
}

async fn five_failures_lock_an_email_even_for_the_right_password(db: Db) {
    let app = spawn_app(db).await;
    app.company(0, true).await;
    for _ in 0..4 {
        assert_refused(
            app.sign_in("admin0@example.com", "wrong password").await,
            401,
            "INVALID_CREDENTIALS",
        )
        .await;
    }
    let locked = app.sign_in("admin0@example.com", "wrong password").await;
    assert_refused(locked, 429, "SIGN_IN_LOCKED").await;
    assert_refused(
        app.sign_in("ADMIN0@example.com", PASSWORD).await,
        429,
        "SIGN_IN_LOCKED",
    )
    .await;
    let stored = cofre_server::store::users::sign_in_failures(
        app.services.store.pool(),
        "admin0@example.com",
    )
    .await
    .unwrap()
    .expect("failures recorded");
    assert_eq!(stored.failures, 5);
    assert!(stored.locked_until.unwrap() > cofre_server::store::now_millis());

    // An unknown email locks the same way, so the lock tells nothing about who exists.
    for _ in 0..4 {
        assert_refused(
            app.sign_in("ghost@example.com", "x").await,
            401,
            "INVALID_CREDENTIALS",
        )
        .await;
    }
    assert_refused(
        app.sign_in("ghost@example.com", "x").await,
        429,
        "SIGN_IN_LOCKED",
    )
    .await;

    // Another user is not affected, and a success clears that user's failures.
    app.company(1, true).await;
    assert_refused(
        app.sign_in("admin1@example.com", "nope").await,
        401,
        "INVALID_CREDENTIALS",
    )
    .await;
    app.console("admin1@example.com", PASSWORD).await;
    assert!(
        cofre_server::store::users::sign_in_failures(
            app.services.store.pool(),
            "admin1@example.com"
        )
        .await
        .unwrap()
        .is_none()
    );
}
db_test!(five_failures_lock_an_email_even_for_the_right_password);

async fn server_fns_need_a_session_and_refuse_other_sites(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    for name in [
        "applications",
        "campaigns",
        "users",
        "support",
        "webhooks",
        "plugins",
    ] {
        assert_refused(app.anonymous_call(name, &[]).await, 401, "NOT_SIGNED_IN").await;
    }
    let console = app.console("admin0@example.com", PASSWORD).await;
    let before = applications_of(&app, &company.id).await.len();
    let form = [("name", "Forjada"), ("kind", "MASTER"), ("account_id", "")];
    for (header, value) in [
        ("origin", "http://evil.example"),
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
    ] {
        let response = console
            .request("create_application")
            .header(header, value)
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_error(response, 403, "CSRF_REJECTED").await;
    }
    assert_eq!(applications_of(&app, &company.id).await.len(), before);
    // The console's own origin passes.
    let same = console
        .request("create_application")
        .header("origin", app.base.clone())
        .header("sec-fetch-site", "same-origin")
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), 200);
    assert_eq!(applications_of(&app, &company.id).await.len(), before + 1);

    // Refusals follow the console's language cookie.
    let member_refusal = app
        .client
        .post(app.url("/console/fn/support"))
        .header("accept", "application/json")
        .header("cookie", format!("{}; cofre_lang=en", console.cookie))
        .send()
        .await
        .unwrap();
    let refused = assert_refused(member_refusal, 403, "CONSOLE_PERMISSION_MISSING").await;
    assert_eq!(
        refused["message"],
        "Your user does not have the SUPPORT permission"
    );

    // Signing out ends the session for good.
    let out = console.call("sign_out", &[]).await.status();
    assert!(out.is_success() || out.is_redirection(), "{out}");
    assert_refused(
        console.call("applications", &[]).await,
        401,
        "NOT_SIGNED_IN",
    )
    .await;
}
db_test!(server_fns_need_a_session_and_refuse_other_sites);

async fn a_session_of_company_a_never_reads_or_changes_company_b(db: Db) {
    let app = spawn_app(db).await;
    let a = app.company(0, true).await;
    let b = app.company(1, true).await;
    let b_master = app.master(&b).await;
    let (b_account, _) = app.campaign(&b_master).await;
    let b_caller = app
        .services
        .applications
        .authenticate(Some(&b_master))
        .await
        .unwrap();
    let b_webhook = app
        .services
        .webhooks
        .create(
            &b_caller,
            cofre_server::service::webhooks::NewWebhook {
                name: Some("B".into()),
                event: Some("OPENPIX:CHARGE_COMPLETED".into()),
                url: Some("https://example.com/hook".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let b_app = applications_of(&app, &b.id).await.remove(0);
    let b_admin = app.services.users.list(&b.id).await.unwrap().remove(0);

    let console = app.console("admin0@example.com", PASSWORD).await;
    let apps = console.ok("applications", &[]).await;
    let listed: Vec<&str> = apps["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert!(!listed.contains(&b_app.id.as_str()));
    assert_eq!(apps["main_account_id"], a.main_account_id.as_str());
    let campaigns = console.ok("campaigns", &[]).await;
    assert!(
        campaigns
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["account_id"] != b_account.as_str()
                && c["account_id"] != b.main_account_id.as_str())
    );
    let webhooks = console.ok("webhooks", &[]).await;
    assert_eq!(webhooks["webhooks"], serde_json::json!([]));
    let users = console.ok("users", &[]).await;
    assert!(
        users
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["email"] != "admin1@example.com")
    );

    let b_id = b_app.id.as_str();
    type Refusal<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16, &'a str);
    let refusals: Vec<Refusal> = vec![
        (
            "set_application_access",
            vec![("application", b_id), ("scopes[]", "FILE_POST")],
            404,
            "APPLICATION_NOT_FOUND",
        ),
        (
            "set_application_active",
            vec![("application", b_id), ("active", "false")],
            404,
            "APPLICATION_NOT_FOUND",
        ),
        (
            "rotate_secret",
            vec![("application", b_id)],
            404,
            "APPLICATION_NOT_FOUND",
        ),
        (
            "create_application",
            vec![("name", "x"), ("kind", "API"), ("account_id", &b_account)],
            404,
            "ACCOUNT_NOT_FOUND",
        ),
        (
            "end_campaign",
            vec![("account", &b_account)],
            404,
            "ACCOUNT_NOT_FOUND",
        ),
        (
            "delete_webhook",
            vec![("webhook", &b_webhook.id)],
            404,
            "WEBHOOK_NOT_FOUND",
        ),
        (
            "deliveries",
            vec![("webhook", &b_webhook.id)],
            404,
            "WEBHOOK_NOT_FOUND",
        ),
        (
            "set_api_plugins",
            vec![("user", &b_admin.id), ("granted", "false")],
            404,
            "USER_NOT_FOUND",
        ),
        (
            "set_feature",
            vec![
                ("company", &b.id),
                ("feature", "BAAS"),
                ("enabled", "false"),
            ],
            403,
            "CONSOLE_PERMISSION_MISSING",
        ),
        (
            "set_withdraw_key_api",
            vec![("account", &b_account), ("enabled", "true")],
            403,
            "CONSOLE_PERMISSION_MISSING",
        ),
    ];
    for (name, form, status, code) in refusals {
        assert_refused(console.call(name, &form).await, status, code).await;
    }
    // Company B is exactly as it was.
    let after = applications_of(&app, &b.id).await;
    let same = after.iter().find(|a| a.id == b_app.id).unwrap();
    assert!(same.is_active);
    assert_eq!(same.scopes, b_app.scopes);
    assert_eq!(after.len(), 2);
    assert!(
        app.services
            .webhooks
            .list(
                &b_caller,
                None,
                cofre_server::service::Page { skip: 0, limit: 10 }
            )
            .await
            .unwrap()
            .0
            .len()
            == 1
    );
    let b_keys = app.list_pix_keys(&b_master).await;
    assert_eq!(b_keys.status(), 200);
    assert!(
        app.get(&format!("/api/v1/account/{b_account}"), Some(&b_master))
            .await
            .status()
            == 200
    );
    let b_user = app.services.users.get(&b_admin.id).await.unwrap();
    assert!(b_user.permissions.contains(&"API_PLUGINS".to_owned()));
    let b_company = app.services.companies.get(&b.id).await.unwrap();
    assert!(b_company.features.contains(&"BAAS".to_owned()));
}
db_test!(a_session_of_company_a_never_reads_or_changes_company_b);

async fn a_user_without_api_plugins_gets_403_until_the_admin_grants_it(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    // Bad input for a new user: every field at once, nothing saved.
    let bad = assert_refused(
        admin
            .call(
                "create_user",
                &[
                    ("email", "nope"),
                    ("password", "short"),
                    ("role", "SUPPORT"),
                ],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(bad["fields"].as_array().unwrap().len(), 3, "{bad}");
    assert_eq!(app.services.users.list(&company.id).await.unwrap().len(), 1);
    let member = admin
        .ok(
            "create_user",
            &[
                ("email", "Membro@Example.com"),
                ("password", PASSWORD),
                ("role", "MEMBER"),
            ],
        )
        .await;
    assert_eq!(member["email"], "membro@example.com");
    assert_eq!(member["api_plugins"], false);
    assert_refused(
        admin
            .call(
                "create_user",
                &[
                    ("email", "membro@example.com"),
                    ("password", PASSWORD),
                    ("role", "MEMBER"),
                ],
            )
            .await,
        409,
        "EMAIL_ALREADY_EXISTS",
    )
    .await;

    let m = app.console("membro@example.com", PASSWORD).await;
    let master_before = applications_of(&app, &company.id).await.len();
    for (name, form) in [
        ("applications", vec![]),
        (
            "create_application",
            vec![("name", "x"), ("kind", "MASTER")],
        ),
        ("plugins", vec![]),
        ("webhooks", vec![]),
        (
            "create_webhook",
            vec![
                ("name", "x"),
                ("event", "OPENPIX:CHARGE_COMPLETED"),
                ("url", "https://example.com/"),
            ],
        ),
        (
            "start_campaign",
            vec![
                ("campaign[name]", "x"),
                ("campaign[key_type]", "EVP"),
                ("campaign[key]", ""),
                ("campaign[withdraw_key]", ""),
            ],
        ),
        (
            "end_campaign",
            vec![("account", company.main_account_id.as_str())],
        ),
    ] {
        let refused =
            assert_refused(m.call(name, &form).await, 403, "CONSOLE_PERMISSION_MISSING").await;
        assert!(
            refused["message"].as_str().unwrap().contains("API_PLUGINS"),
            "{refused}"
        );
    }
    assert_refused(
        m.call("users", &[]).await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    assert_refused(
        m.call("support", &[]).await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    assert_eq!(
        applications_of(&app, &company.id).await.len(),
        master_before
    );
    assert_eq!(accounts_of(&app, &company.id).await, 1);
    // Reading the campaigns needs no permission.
    assert_eq!(m.ok("campaigns", &[]).await.as_array().unwrap().len(), 1);

    // The admin cannot lock themselves out of API/Plugins.
    let me = app.services.users.list(&company.id).await.unwrap();
    let admin_id = me
        .iter()
        .find(|u| u.email == "admin0@example.com")
        .unwrap()
        .id
        .clone();
    let member_id = me
        .iter()
        .find(|u| u.email == "membro@example.com")
        .unwrap()
        .id
        .clone();
    assert_refused(
        admin
            .call(
                "set_api_plugins",
                &[("user", &admin_id), ("granted", "false")],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let granted = admin
        .ok(
            "set_api_plugins",
            &[("user", &member_id), ("granted", "true")],
        )
        .await;
    assert_eq!(granted["api_plugins"], true);
    assert_eq!(
        m.ok("applications", &[]).await["applications"]
            .as_array()
            .unwrap()
            .len(),
        master_before
    );
    let trail = cofre_server::store::audit::list(app.services.store.pool(), Some(&company.id), 10)
        .await
        .unwrap();
    assert_eq!(trail[0].action, "PERMISSION_GRANTED");
    assert_eq!(trail[0].target, "membro@example.com");
    assert_eq!(trail[0].actor_email, "admin0@example.com");
    assert_eq!(trail[1].action, "USER_CREATED");
}
db_test!(a_user_without_api_plugins_gets_403_until_the_admin_grants_it);

async fn scopes_ips_and_status_edited_in_the_console_bind_the_api_at_once(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let console = app.console("admin0@example.com", PASSWORD).await;
    let issued = console
        .ok(
            "create_application",
            &[("name", "Integração"), ("kind", "API"), ("account_id", "")],
        )
        .await;
    let app_id = issued["app_id"].as_str().unwrap().to_owned();
    let id = issued["application"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        issued["application"]["account_id"],
        company.main_account_id.as_str()
    );
    assert_eq!(issued["application"]["scopes"], serde_json::json!([]));
    assert_eq!(app.list_pix_keys(&app_id).await.status(), 200);

    // Invalid edits change nothing.
    let bad = assert_refused(
        console
            .call(
                "set_application_access",
                &[
                    ("application", &id),
                    ("scopes[]", "NO_SUCH_SCOPE"),
                    ("scopes[]", "APPLICATION_ROTATE_POST"),
                    ("allowed_ips", "not-an-ip"),
                ],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(bad["fields"].as_array().unwrap().len(), 3, "{bad}");
    assert_eq!(app.list_pix_keys(&app_id).await.status(), 200);

    let edited = console
        .ok(
            "set_application_access",
            &[
                ("application", &id),
                ("scopes[]", "FILE_POST"),
                ("scopes[]", "PIX_KEY_POST"),
            ],
        )
        .await;
    assert_eq!(
        edited["scopes"],
        serde_json::json!(["FILE_POST", "PIX_KEY_POST"])
    );
    assert_error(app.list_pix_keys(&app_id).await, 403, "SCOPE_MISSING").await;
    let stored = applications_of(&app, &company.id).await;
    assert_eq!(
        stored.iter().find(|a| a.id == id).unwrap().scopes,
        ["FILE_POST", "PIX_KEY_POST"]
    );

    console
        .ok(
            "set_application_access",
            &[
                ("application", &id),
                ("scopes[]", "PIX_KEY_GET"),
                ("allowed_ips", "10.0.0.0/8\n192.168.0.1"),
            ],
        )
        .await;
    assert_error(app.list_pix_keys(&app_id).await, 403, "IP_NOT_ALLOWED").await;
    console
        .ok(
            "set_application_access",
            &[("application", &id), ("allowed_ips", "")],
        )
        .await;
    assert_eq!(app.list_pix_keys(&app_id).await.status(), 200);

    console
        .ok(
            "set_application_active",
            &[("application", &id), ("active", "false")],
        )
        .await;
    assert_error(
        app.list_pix_keys(&app_id).await,
        401,
        "APPLICATION_INACTIVE",
    )
    .await;
    console
        .ok(
            "set_application_active",
            &[("application", &id), ("active", "true")],
        )
        .await;

    let rotated = console.ok("rotate_secret", &[("application", &id)]).await;
    let new_app_id = rotated["app_id"].as_str().unwrap();
    assert_ne!(new_app_id, app_id);
    assert_error(app.list_pix_keys(&app_id).await, 401, "APP_ID_INVALID").await;
    assert_eq!(app.list_pix_keys(new_app_id).await.status(), 200);

    // A MASTER application is always bound to the main account.
    let master = console
        .ok(
            "create_application",
            &[("name", "Central"), ("kind", "MASTER")],
        )
        .await;
    assert_eq!(master["application"]["kind"], "MASTER");
    assert_eq!(
        master["application"]["account_id"],
        company.main_account_id.as_str()
    );
    assert_refused(
        console
            .call("create_application", &[("name", ""), ("kind", "ROOT")])
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
}
db_test!(scopes_ips_and_status_edited_in_the_console_bind_the_api_at_once);

async fn the_campaign_wizard_runs_the_seed_flow_in_one_go(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.directory(&[
        ("tesouraria@empresa0.com.br", "EMAIL", CNPJS[0]),
        ("outro@banco.com.br", "EMAIL", CNPJS[2]),
    ])
    .await;
    let console = app.console("admin0@example.com", PASSWORD).await;
    let wizard =
        |name: &'static str, kind: &'static str, key: &'static str, withdraw: &'static str| {
            [
                ("campaign[name]", name),
                ("campaign[key_type]", kind),
                ("campaign[key]", key),
                ("campaign[withdraw_key]", withdraw),
            ]
        };

    // Refusals first: each leaves no account behind.
    for (form, status, code) in [
        (
            wizard("", "EMAIL", "not an email", ""),
            400,
            "VALIDATION_ERROR",
        ),
        (
            wizard("Natal", "CPF", "111.444.777-35", ""),
            400,
            "VALIDATION_ERROR",
        ),
        (
            wizard("Natal", "EMAIL", "outro@banco.com.br", ""),
            409,
            "PIX_KEY_ALREADY_EXISTS",
        ),
        (
            wizard(
                "Natal",
                "EMAIL",
                "natal@empresa0.com.br",
                "outro@banco.com.br",
            ),
            400,
            "WITHDRAW_KEY_HOLDER_MISMATCH",
        ),
    ] {
        assert_refused(console.call("start_campaign", &form).await, status, code).await;
        assert_eq!(accounts_of(&app, &company.id).await, 1, "{form:?}");
    }
    assert_eq!(applications_of(&app, &company.id).await.len(), 0);

    let created = console
        .ok(
            "start_campaign",
            &wizard(
                "Natal",
                "EMAIL",
                "Natal@Empresa0.com.br",
                "tesouraria@empresa0.com.br",
            ),
        )
        .await;
    let account_id = created["account_id"].as_str().unwrap().to_owned();
    assert_eq!(
        created["pix_key"],
        serde_json::json!(["natal@empresa0.com.br", "EMAIL"])
    );
    assert_eq!(
        created["withdraw_key"],
        serde_json::json!(["tesouraria@empresa0.com.br", "EMAIL"])
    );
    assert_eq!(created["application"]["application"]["kind"], "API");
    assert_eq!(
        created["application"]["application"]["account_id"],
        account_id.as_str()
    );
    let campaign_app = created["application"]["app_id"].as_str().unwrap();
    // The AppID works on the API and sees exactly its account's key.
    let keys = json(app.list_pix_keys(campaign_app).await, 200).await;
    assert_eq!(keys["account"]["accountId"], account_id.as_str());
    assert_eq!(keys["pixKeys"][0]["key"], "natal@empresa0.com.br");
    let row = cofre_server::store::accounts::get(app.services.store.pool(), &account_id)
        .await
        .unwrap();
    assert!(row.withdraw_key_id.is_some());
    assert!(!row.withdraw_key_api_enabled);

    // Money in shows on today's bar of the chart and in the balance.
    assert!(
        app.sandbox_pix(campaign_app, "natal@empresa0.com.br", 12_345)
            .await
            .status()
            .is_success()
    );

    // The dashboard shows it; EVP campaigns get a generated key.
    let evp = console
        .ok("start_campaign", &wizard("Páscoa", "EVP", "", ""))
        .await;
    assert_eq!(evp["pix_key"][1], "EVP");
    assert_eq!(evp["withdraw_key"], serde_json::Value::Null);
    let campaigns = console.ok("campaigns", &[]).await;
    let listed = campaigns.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    let natal = listed
        .iter()
        .find(|c| c["account_id"] == account_id.as_str())
        .unwrap();
    assert_eq!(
        natal["pix_keys"],
        serde_json::json!([["natal@empresa0.com.br", "EMAIL"]])
    );
    assert_eq!(
        natal["withdraw_key"],
        serde_json::json!(["tesouraria@empresa0.com.br", "EMAIL"])
    );
    assert_eq!(natal["flows"].as_array().unwrap().len(), 14);
    assert_eq!(natal["flows"][13]["money_in"], 12_345);
    assert_eq!(natal["flows"][13]["money_out"], 0);
    assert_eq!(natal["total"], 12_345);
    assert_eq!(natal["transactions"][0]["value"], 12_345);

    // Ending it deletes its keys: nobody can pay them again.
    assert_refused(
        console
            .call("end_campaign", &[("account", &company.main_account_id)])
            .await,
        400,
        "MAIN_ACCOUNT_NOT_A_CAMPAIGN",
    )
    .await;
    assert_eq!(
        console
            .ok("end_campaign", &[("account", &account_id)])
            .await,
        1
    );
    let keys = json(app.list_pix_keys(campaign_app).await, 200).await;
    assert_eq!(keys["pixKeys"], serde_json::json!([]));
    let payer = app.company(1, true).await;
    let payer_app = app.master(&payer).await;
    assert_error(
        app.check_key(&payer_app, "natal@empresa0.com.br").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;

    // Without BAAS there are no campaigns, and nothing is made.
    let plain = app.company(2, false).await;
    let plain_console = app.console("admin2@example.com", PASSWORD).await;
    assert_refused(
        plain_console
            .call("start_campaign", &wizard("X", "EVP", "", ""))
            .await,
        403,
        "FEATURE_DISABLED",
    )
    .await;
    assert_eq!(accounts_of(&app, &plain.id).await, 1);
}
db_test!(the_campaign_wizard_runs_the_seed_flow_in_one_go);

async fn support_switches_features_and_withdraw_key_api_with_an_audit_trail(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.services
        .users
        .create_support("suporte@example.com", PASSWORD)
        .await
        .unwrap();
    let admin = app.console("admin0@example.com", PASSWORD).await;
    assert_refused(
        admin
            .call(
                "set_feature",
                &[
                    ("company", &company.id),
                    ("feature", "SPLIT"),
                    ("enabled", "true"),
                ],
            )
            .await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    let support = app.console("suporte@example.com", PASSWORD).await;
    // Support has no company pages.
    assert_refused(
        support.call("applications", &[]).await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    let page = support.ok("support", &[]).await;
    assert!(
        page["companies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == company.id.as_str())
    );
    assert!(
        page["features"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("DISPUTE_EVIDENCE_FILE_ID"))
    );

    assert_refused(
        support
            .call(
                "set_feature",
                &[
                    ("company", &company.id),
                    ("feature", "TELEPORT"),
                    ("enabled", "true"),
                ],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_refused(
        support
            .call(
                "set_feature",
                &[
                    ("company", "cmp_nope"),
                    ("feature", "SPLIT"),
                    ("enabled", "true"),
                ],
            )
            .await,
        404,
        "COMPANY_NOT_FOUND",
    )
    .await;
    assert_refused(
        support
            .call(
                "set_withdraw_key_api",
                &[("account", "acc_nope"), ("enabled", "true")],
            )
            .await,
        404,
        "ACCOUNT_NOT_FOUND",
    )
    .await;
    support
        .ok(
            "set_feature",
            &[
                ("company", &company.id),
                ("feature", "SPLIT"),
                ("enabled", "true"),
            ],
        )
        .await;
    support
        .ok(
            "set_withdraw_key_api",
            &[("account", &company.main_account_id), ("enabled", "true")],
        )
        .await;
    let stored = app.services.companies.get(&company.id).await.unwrap();
    assert!(stored.features.contains(&"SPLIT".to_owned()));
    let account =
        cofre_server::store::accounts::get(app.services.store.pool(), &company.main_account_id)
            .await
            .unwrap();
    assert!(account.withdraw_key_api_enabled);

    let page = support.ok("support", &[]).await;
    let audit = page["audit"].as_array().unwrap();
    assert_eq!(audit.len(), 2, "{audit:?}");
    assert_eq!(audit[0]["action"], "WITHDRAW_KEY_API_ENABLED");
    assert_eq!(audit[0]["target"], company.main_account_id.as_str());
    assert_eq!(audit[1]["action"], "FEATURE_ENABLED");
    assert_eq!(audit[1]["target"], "SPLIT");
    assert_eq!(audit[1]["actor"], "suporte@example.com");
    assert_eq!(audit[1]["company"], "Empresa 0");
}
db_test!(support_switches_features_and_withdraw_key_api_with_an_audit_trail);

async fn dispute_status(app: &TestApp, master: &str, id: &str) -> Value {
    json(
        app.get(&format!("/api/v1/dispute/{id}"), Some(master))
            .await,
        200,
    )
    .await["dispute"]
        .clone()
}

async fn support_resolves_and_opens_disputes_in_the_console_with_an_audit_trail(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let other = app.company(1, true).await;
    let master = app.master(&company).await;
    app.services
        .users
        .create_support("suporte@example.com", PASSWORD)
        .await
        .unwrap();
    let (account, app_id, dispute) = app
        .disputed_campaign(&master, "loja@example.com", 5_000)
        .await;
    assert_eq!(app.balance(&app_id, &account).await, (0, 5_000, 5_000));
    let support = app.console("suporte@example.com", PASSWORD).await;

    let page = support.ok("support", &[]).await;
    let queued = page["disputes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == dispute.as_str())
        .expect("the dispute is on support's queue")
        .clone();
    assert_eq!(queued["status"], "IN_REVIEW");
    assert_eq!(queued["company"], "Empresa 0");
    assert_eq!(queued["value"], 5_000);
    assert_eq!(queued["reason"], "MED: fraude");
    assert!(
        queued["end_to_end_id"]
            .as_str()
            .is_some_and(|e| !e.is_empty())
    );

    // An unknown decision names the field; an unknown dispute is 404. Nothing changes.
    let refused = assert_refused(
        support
            .call(
                "resolve_dispute",
                &[("dispute", &dispute), ("decision", "REFUND")],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(refused["fields"][0]["field"], "decision", "{refused}");
    assert_refused(
        support
            .call(
                "resolve_dispute",
                &[("dispute", "dsp_nope"), ("decision", "ACCEPT")],
            )
            .await,
        404,
        "DISPUTE_NOT_FOUND",
    )
    .await;
    assert_eq!(
        dispute_status(&app, &master, &dispute).await["status"],
        "IN_REVIEW"
    );

    // Accepted: the payer wins and the blocked value leaves the account.
    let accepted = support
        .ok(
            "resolve_dispute",
            &[
                ("dispute", &dispute),
                ("decision", "ACCEPT"),
                ("note", "Fraude confirmada"),
            ],
        )
        .await;
    assert_eq!(accepted["status"], "ACCEPTED");
    assert_eq!(accepted["company"], "Empresa 0");
    let rest = dispute_status(&app, &master, &dispute).await;
    assert_eq!(rest["status"], "ACCEPTED");
    assert_eq!(rest["resolutionNote"], "Fraude confirmada");
    assert_eq!(app.balance(&app_id, &account).await, (0, 0, 0));
    assert!(
        app.events_of(&company.id)
            .await
            .iter()
            .any(|(event, _, payload)| event == "DISPUTE_ACCEPTED"
                && payload["dispute"]["id"] == dispute.as_str())
    );
    let again = assert_refused(
        support
            .call(
                "resolve_dispute",
                &[("dispute", &dispute), ("decision", "REJECT")],
            )
            .await,
        409,
        "DISPUTE_CLOSED",
    )
    .await;
    assert!(
        again["message"].as_str().unwrap().contains("ACCEPTED"),
        "{again}"
    );
    assert_eq!(app.balance(&app_id, &account).await, (0, 0, 0));

    // Support opens one on another Pix by its endToEndId, for the company that got it.
    let pix = json(
        app.sandbox_pix(&app_id, "loja@example.com", 2_500).await,
        200,
    )
    .await;
    let e2e = pix["transaction"]["endToEndId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_refused(
        support
            .call(
                "open_dispute",
                &[("company", "cmp_nope"), ("transaction", &e2e)],
            )
            .await,
        404,
        "COMPANY_NOT_FOUND",
    )
    .await;
    assert_refused(
        support
            .call(
                "open_dispute",
                &[("company", &other.id), ("transaction", &e2e)],
            )
            .await,
        404,
        "TRANSACTION_NOT_FOUND",
    )
    .await;
    let empty = assert_refused(
        support
            .call(
                "open_dispute",
                &[("company", &company.id), ("transaction", " ")],
            )
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(empty["fields"][0]["field"], "transaction", "{empty}");
    assert_eq!(app.balance(&app_id, &account).await, (2_500, 0, 2_500));
    let opened = support
        .ok(
            "open_dispute",
            &[
                ("company", &company.id),
                ("transaction", &e2e),
                ("reason", "Golpe relatado pelo pagador"),
            ],
        )
        .await;
    assert_eq!(opened["status"], "IN_REVIEW");
    assert_eq!(opened["value"], 2_500);
    assert_eq!(opened["end_to_end_id"], e2e.as_str());
    assert_eq!(opened["reason"], "Golpe relatado pelo pagador");
    assert_eq!(app.balance(&app_id, &account).await, (0, 2_500, 2_500));
    assert_refused(
        support
            .call(
                "open_dispute",
                &[("company", &company.id), ("transaction", &e2e)],
            )
            .await,
        409,
        "DISPUTE_ALREADY_EXISTS",
    )
    .await;

    // Rejected: the company keeps the value.
    let opened_id = opened["id"].as_str().unwrap().to_owned();
    let rejected = support
        .ok(
            "resolve_dispute",
            &[
                ("dispute", &opened_id),
                ("decision", "REJECT"),
                ("note", ""),
            ],
        )
        .await;
    assert_eq!(rejected["status"], "REJECTED");
    assert_eq!(rejected["resolution_note"], Value::Null);
    assert_eq!(app.balance(&app_id, &account).await, (2_500, 0, 2_500));
    assert_eq!(
        dispute_status(&app, &master, &opened_id).await["status"],
        "REJECTED"
    );

    // Only the changes that happened are in the trail, with who made them.
    let page = support.ok("support", &[]).await;
    let audit = page["audit"].as_array().unwrap();
    let actions: Vec<_> = audit
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["DISPUTE_REJECT", "DISPUTE_OPEN", "DISPUTE_ACCEPT"]
    );
    assert_eq!(audit[0]["target"], opened_id.as_str());
    assert_eq!(audit[1]["target"], opened_id.as_str());
    assert_eq!(audit[2]["target"], dispute.as_str());
    assert_eq!(audit[2]["detail"], "Fraude confirmada");
    assert_eq!(audit[2]["actor"], "suporte@example.com");
    assert_eq!(audit[2]["company"], "Empresa 0");
    let statuses: Vec<_> = page["disputes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["id"].as_str().unwrap(), d["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            (opened_id.as_str(), "REJECTED"),
            (dispute.as_str(), "ACCEPTED")
        ]
    );
    assert!(app.ledger_violations().await.is_empty());
}
db_test!(support_resolves_and_opens_disputes_in_the_console_with_an_audit_trail);

fn kyc_submission(correlation_id: &str, document: &str) -> Value {
    serde_json::json!({
        "taxID": "11.222.333/0001-81",
        "correlationID": correlation_id,
        "representatives": [{
            "name": "Maria Souza",
            "taxID": "529.982.247-25",
            "email": "maria@empresa.com.br",
            "birthDate": "1990-01-01",
            "documents": [document],
        }],
    })
}

async fn onboarding_of(app: &TestApp, master: &str, correlation_id: &str) -> Value {
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

async fn support_reviews_kyc_onboardings_in_the_console(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    app.services
        .users
        .create_support("suporte@example.com", PASSWORD)
        .await
        .unwrap();
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let created = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            kyc_submission("kyc-console", &doc),
        )
        .await,
        201,
    )
    .await;
    let id = created["onboarding"]["id"].as_str().unwrap().to_owned();
    let support = app.console("suporte@example.com", PASSWORD).await;

    let page = support.ok("support", &[]).await;
    let queued = &page["onboardings"][0];
    assert_eq!(queued["id"], id.as_str());
    assert_eq!(queued["company"], "Empresa 0");
    assert_eq!(queued["correlation_id"], "kyc-console");
    assert_eq!(queued["tax_id"], "11.222.333/0001-81");
    assert_eq!(queued["status"], "IN_REVIEW");
    let rep = &queued["representatives"][0];
    assert_eq!(rep["name"], "Maria Souza");
    assert_eq!(rep["tax_id"], "529.982.247-25");
    assert_eq!(rep["birth_date"], "1990-01-01");
    assert_eq!(rep["documents"], serde_json::json!(["doc.pdf"]));

    // Asking for documents needs a note; an unknown decision is named; both change nothing.
    for (decision, note, field) in [
        ("REQUEST_DOCUMENTS", "", "note"),
        ("REJECT", "  ", "note"),
        ("MAYBE", "hmm", "decision"),
    ] {
        let refused = assert_refused(
            support
                .call(
                    "review_kyc",
                    &[("onboarding", &id), ("decision", decision), ("note", note)],
                )
                .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(refused["fields"][0]["field"], field, "{refused}");
    }
    assert_refused(
        support
            .call(
                "review_kyc",
                &[("onboarding", "kyc_nope"), ("decision", "APPROVE")],
            )
            .await,
        404,
        "KYC_ONBOARDING_NOT_FOUND",
    )
    .await;
    assert_eq!(
        onboarding_of(&app, &master, "kyc-console").await["status"],
        "IN_REVIEW"
    );

    let reviewed = support
        .ok(
            "review_kyc",
            &[
                ("onboarding", &id),
                ("decision", "REQUEST_DOCUMENTS"),
                ("note", "Envie o contrato social"),
            ],
        )
        .await;
    assert_eq!(reviewed["status"], "DOCUMENTS_REQUESTED");
    let rest = onboarding_of(&app, &master, "kyc-console").await;
    assert_eq!(rest["status"], "DOCUMENTS_REQUESTED");
    assert_eq!(rest["reviewNote"], "Envie o contrato social");
    let stored = cofre_server::store::kyc::find(app.services.store.pool(), &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.reviewed_by.as_deref(), Some("suporte@example.com"));
    assert!(
        app.events_of(&company.id)
            .await
            .iter()
            .any(|(event, _, _)| event == "KYC_ONBOARDING_DOCUMENTS_REQUESTED")
    );
    let again = assert_refused(
        support
            .call(
                "review_kyc",
                &[("onboarding", &id), ("decision", "APPROVE")],
            )
            .await,
        409,
        "KYC_ONBOARDING_NOT_IN_REVIEW",
    )
    .await;
    assert!(
        again["message"]
            .as_str()
            .unwrap()
            .contains("DOCUMENTS_REQUESTED"),
        "{again}"
    );

    // The company sends it again; support approves it.
    json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            kyc_submission("kyc-console", &doc),
        )
        .await,
        200,
    )
    .await;
    let approved = support
        .ok(
            "review_kyc",
            &[("onboarding", &id), ("decision", "APPROVE")],
        )
        .await;
    assert_eq!(approved["status"], "APPROVED");
    assert_eq!(
        onboarding_of(&app, &master, "kyc-console").await["status"],
        "APPROVED"
    );

    let page = support.ok("support", &[]).await;
    let audit = page["audit"].as_array().unwrap();
    let actions: Vec<_> = audit
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["KYC_APPROVE", "KYC_REQUEST_DOCUMENTS"]);
    assert_eq!(audit[1]["target"], id.as_str());
    assert_eq!(audit[1]["detail"], "Envie o contrato social");
    assert_eq!(audit[1]["company"], "Empresa 0");
    assert_eq!(page["onboardings"][0]["status"], "APPROVED");
}
db_test!(support_reviews_kyc_onboardings_in_the_console);

async fn only_support_reviews_disputes_and_kyc_in_the_console(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (account, app_id, dispute) = app
        .disputed_campaign(&master, "loja@example.com", 3_000)
        .await;
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let created = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            kyc_submission("kyc-admin", &doc),
        )
        .await,
        201,
    )
    .await;
    let onboarding = created["onboarding"]["id"].as_str().unwrap().to_owned();
    let pix = json(
        app.sandbox_pix(&app_id, "loja@example.com", 1_000).await,
        200,
    )
    .await;
    let e2e = pix["transaction"]["endToEndId"]
        .as_str()
        .unwrap()
        .to_owned();

    let calls: [(&str, Vec<(&str, &str)>); 6] = [
        (
            "resolve_dispute",
            vec![("dispute", &dispute), ("decision", "ACCEPT")],
        ),
        // Permission comes first: a bad decision from an admin is still 403.
        (
            "resolve_dispute",
            vec![("dispute", &dispute), ("decision", "NOPE")],
        ),
        (
            "open_dispute",
            vec![("company", &company.id), ("transaction", &e2e)],
        ),
        (
            "review_kyc",
            vec![("onboarding", &onboarding), ("decision", "APPROVE")],
        ),
        (
            "review_kyc",
            vec![
                ("onboarding", &onboarding),
                ("decision", "REJECT"),
                ("note", "não"),
            ],
        ),
        (
            "review_kyc",
            vec![("onboarding", &onboarding), ("decision", "NOPE")],
        ),
    ];
    let admin = app.console("admin0@example.com", PASSWORD).await;
    for (name, form) in &calls {
        let refused = assert_refused(
            admin.call(name, form).await,
            403,
            "CONSOLE_PERMISSION_MISSING",
        )
        .await;
        assert!(
            refused["message"].as_str().unwrap().contains("SUPPORT"),
            "{name}: {refused}"
        );
        assert_refused(app.anonymous_call(name, form).await, 401, "NOT_SIGNED_IN").await;
    }

    // Nothing changed: the dispute is open, its value blocked, the Pix not disputed,
    // the onboarding in review, and the trail empty.
    assert_eq!(
        dispute_status(&app, &master, &dispute).await["status"],
        "IN_REVIEW"
    );
    assert_eq!(app.balance(&app_id, &account).await, (1_000, 3_000, 4_000));
    assert_eq!(app.count("disputes").await, 1);
    assert_eq!(
        onboarding_of(&app, &master, "kyc-admin").await["status"],
        "IN_REVIEW"
    );
    let audit = cofre_server::store::audit::list(app.services.store.pool(), None, 100)
        .await
        .unwrap();
    assert!(audit.is_empty(), "{audit:?}");
}
db_test!(only_support_reviews_disputes_and_kyc_in_the_console);

async fn support_opens_evidence_files_through_signed_links(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    app.enable_feature(&company, "DISPUTE_EVIDENCE_FILE_ID")
        .await;
    app.services
        .users
        .create_support("suporte@example.com", PASSWORD)
        .await
        .unwrap();
    let (_, app_id, dispute) = app
        .disputed_campaign(&master, "loja@example.com", 5_000)
        .await;
    let file = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    json(
        app.post(
            &format!("/api/v1/dispute/{dispute}/evidence"),
            Some(&app_id),
            serde_json::json!({"documents": [{"fileId": file}, {"url": "https://loja.example/a"}]}),
        )
        .await,
        200,
    )
    .await;
    let support = app.console("suporte@example.com", PASSWORD).await;
    let page = support.ok("support", &[]).await;
    let documents = page["disputes"][0]["documents"].as_array().unwrap().clone();
    assert_eq!(documents[0]["file_id"], file.as_str());
    assert!(documents[1]["file_link"].is_null(), "a url needs no link");
    let link = documents[0]["file_link"].as_str().unwrap();
    assert!(
        link.starts_with(&format!("/api/v1/files/{file}/content?")),
        "{link}"
    );
    let download = app.get(link, None).await;
    assert_eq!(download.status(), 200);
    assert_eq!(download.bytes().await.unwrap().as_ref(), pdf().as_slice());
}
db_test!(support_opens_evidence_files_through_signed_links);

/// A MONTHLY subscription of João on day 1, created over the REST API; answers its id.
async fn subscription(
    app: &TestApp,
    app_id: &str,
    correlation_id: &str,
    charge_type: &str,
) -> String {
    let created = json(
        app.post(
            "/api/v1/subscriptions",
            Some(app_id),
            serde_json::json!({
                "correlationID": correlation_id,
                "value": 4990,
                "customer": {"name": "João", "taxID": "529.982.247-25"},
                "frequency": "MONTHLY",
                "dayGenerateCharge": 1,
                "dayDue": 5,
                "type": "RECURRENT",
                "chargeType": charge_type,
            }),
        )
        .await,
        201,
    )
    .await;
    created["subscription"]["id"].as_str().unwrap().to_owned()
}

/// `GET /console/subscriptions/{id}/payment-book?{query}` with a session cookie, if any.
async fn console_book(
    app: &TestApp,
    cookie: Option<&str>,
    id: &str,
    query: &str,
) -> reqwest::Response {
    let mut request = app
        .client
        .get(app.url(&format!("/console/subscriptions/{id}/payment-book?{query}")));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.unwrap()
}

async fn subscriptions_are_listed_for_every_company_user_and_canceled_with_api_plugins(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.company(1, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let id = subscription(&app, &campaign, "plano-console", "PIX").await;
    assert_refused(
        app.anonymous_call("subscriptions", &[]).await,
        401,
        "NOT_SIGNED_IN",
    )
    .await;

    let admin = app.console("admin0@example.com", PASSWORD).await;
    let page = admin.ok("subscriptions", &[]).await;
    let listed = &page["subscriptions"].as_array().unwrap()[..];
    assert_eq!(listed.len(), 1, "{page}");
    let s = &listed[0];
    assert_eq!(s["id"], id.as_str());
    assert_eq!(s["correlation_id"], "plano-console");
    assert_eq!(s["customer_name"], "João");
    assert_eq!(s["customer_tax_id"], "529.982.247-25");
    assert_eq!(s["value"], 4990);
    assert_eq!(s["frequency"], "MONTHLY");
    assert_eq!(s["day_generate_charge"], 1);
    assert_eq!(s["day_due"], 5);
    assert_eq!(s["charge_type"], "PIX");
    assert_eq!(s["status"], "ACTIVE");
    assert!(
        page["year"].as_i64().unwrap() >= 2026
            && (1..=12).contains(&page["month"].as_i64().unwrap())
    );
    // The first 12 instalments, none issued yet, of at least 13 up to the end of next year.
    let instalments = admin
        .ok("subscription_instalments", &[("subscription", &id)])
        .await;
    let rows = instalments["instalments"].as_array().unwrap();
    assert_eq!(rows.len(), 12, "{instalments}");
    assert!(instalments["total"].as_i64().unwrap() >= 13);
    assert_eq!(rows[0]["number"], 1);
    assert!(
        rows[0]["generation_date"]
            .as_str()
            .unwrap()
            .ends_with("-01")
    );
    assert!(
        rows.iter()
            .all(|r| r["status"] == "SCHEDULED" && r["typed_line"].is_null())
    );
    assert_eq!(app.count("charges").await, 0, "reading issues nothing");
    // The page itself, server-rendered, with the section in the navigation.
    let html = app
        .client
        .get(app.url("/subscriptions"))
        .header("cookie", &admin.cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("href=\"/subscriptions\"") && html.contains("plano-console"),
        "{html}"
    );
    assert!(html.contains(&format!("/console/subscriptions/{id}/payment-book")));

    // A member reads them but cannot cancel.
    admin
        .ok(
            "create_user",
            &[
                ("email", "membro@example.com"),
                ("password", PASSWORD),
                ("role", "MEMBER"),
            ],
        )
        .await;
    let member = app.console("membro@example.com", PASSWORD).await;
    assert_eq!(
        member.ok("subscriptions", &[]).await["subscriptions"][0]["id"],
        id.as_str()
    );
    member
        .ok("subscription_instalments", &[("subscription", &id)])
        .await;
    let refused = assert_refused(
        member
            .call("cancel_subscription", &[("subscription", &id)])
            .await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    assert!(refused["message"].as_str().unwrap().contains("API_PLUGINS"));
    let rest = json(
        app.get(&format!("/api/v1/subscriptions/{id}"), Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(rest["subscription"]["status"], "ACTIVE");

    // Another company sees none of them and cannot touch them.
    let other = app.console("admin1@example.com", PASSWORD).await;
    assert_eq!(
        other.ok("subscriptions", &[]).await["subscriptions"],
        serde_json::json!([])
    );
    for name in ["subscription_instalments", "cancel_subscription"] {
        assert_refused(
            other.call(name, &[("subscription", &id)]).await,
            404,
            "SUBSCRIPTION_NOT_FOUND",
        )
        .await;
    }

    // An API_PLUGINS user cancels it, once.
    let canceled = admin
        .ok("cancel_subscription", &[("subscription", &id)])
        .await;
    assert_eq!(canceled["status"], "CANCELED");
    assert_eq!(canceled["id"], id.as_str());
    let rest = json(
        app.get(&format!("/api/v1/subscriptions/{id}"), Some(&master))
            .await,
        200,
    )
    .await;
    assert_eq!(rest["subscription"]["status"], "CANCELED");
    assert_eq!(
        admin.ok("subscriptions", &[]).await["subscriptions"][0]["status"],
        "CANCELED"
    );
    assert_refused(
        admin
            .call("cancel_subscription", &[("subscription", &id)])
            .await,
        409,
        "SUBSCRIPTION_CANCELED",
    )
    .await;
    assert_eq!(app.count("charges").await, 0);
}
db_test!(subscriptions_are_listed_for_every_company_user_and_canceled_with_api_plugins);

async fn the_console_opens_the_payment_book_pdf_with_the_session(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.company(1, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let id = subscription(&app, &campaign, "carne-console", "BOLETO").await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    let year = admin.ok("subscriptions", &[]).await["year"]
        .as_i64()
        .unwrap();
    // January of next year: at least one instalment (day 1) is generated by then.
    let query = format!("month=1&year={}", year + 1);

    // Refusals first: none issues a charge.
    assert_error(
        console_book(&app, None, &id, &query).await,
        401,
        "NOT_SIGNED_IN",
    )
    .await;
    let bad = assert_error(
        console_book(
            &app,
            Some(&admin.cookie),
            &id,
            &format!("month=13&year={year}"),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(bad["details"][0]["field"], "month", "{bad}");
    assert_error(
        console_book(&app, Some(&admin.cookie), &id, "month=abc&year=2027").await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    let other = app.console("admin1@example.com", PASSWORD).await;
    assert_error(
        console_book(&app, Some(&other.cookie), &id, &query).await,
        404,
        "SUBSCRIPTION_NOT_FOUND",
    )
    .await;
    admin
        .ok(
            "create_user",
            &[
                ("email", "membro@example.com"),
                ("password", PASSWORD),
                ("role", "MEMBER"),
            ],
        )
        .await;
    let member = app.console("membro@example.com", PASSWORD).await;
    let refused = assert_error(
        console_book(&app, Some(&member.cookie), &id, &query).await,
        403,
        "CONSOLE_PERMISSION_MISSING",
    )
    .await;
    assert!(refused["error"].as_str().unwrap().contains("API_PLUGINS"));
    // A link on another site carries the Lax cookie along; the browser says so.
    let cross = app
        .client
        .get(app.url(&format!("/console/subscriptions/{id}/payment-book?{query}")))
        .header("cookie", &admin.cookie)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_error(cross, 403, "CSRF_REJECTED").await;
    assert_eq!(app.count("charges").await, 0);

    let book = console_book(&app, Some(&admin.cookie), &id, &query).await;
    assert_eq!(book.status(), 200);
    assert_eq!(book.headers()["content-type"], "application/pdf");
    let disposition = book.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(disposition.starts_with("inline"), "{disposition}");
    let pdf = book.bytes().await.unwrap();
    assert!(pdf.starts_with(b"%PDF"));
    let issued = app.count("charges").await;
    assert!(issued >= 1);
    assert_eq!(app.count("subscription_instalments").await, issued);

    // Again: the same instalments, no new charge.
    let again = console_book(&app, Some(&admin.cookie), &id, &query).await;
    assert_eq!(again.status(), 200);
    assert!(again.bytes().await.unwrap().starts_with(b"%PDF"));
    assert_eq!(app.count("charges").await, issued);

    // The page shows the issued instalments with their boletos' typed lines.
    let instalments = admin
        .ok("subscription_instalments", &[("subscription", &id)])
        .await;
    let first = &instalments["instalments"][0];
    assert_eq!(first["status"], "ACTIVE", "{instalments}");
    assert_eq!(
        first["typed_line"]
            .as_str()
            .unwrap()
            .chars()
            .filter(char::is_ascii_digit)
            .count(),
        47
    );

    // A canceled subscription has no payment book.
    admin
        .ok("cancel_subscription", &[("subscription", &id)])
        .await;
    assert_error(
        console_book(&app, Some(&admin.cookie), &id, &query).await,
        409,
        "SUBSCRIPTION_CANCELED",
    )
    .await;
    assert_eq!(app.count("charges").await, issued);
}
db_test!(the_console_opens_the_payment_book_pdf_with_the_session);
