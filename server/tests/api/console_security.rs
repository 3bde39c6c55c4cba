//! The console's security review (issue 10): every server fn and console route refuses
//! other sites, sign-in never keeps a session id the browser brought, sign-out ends the
//! session on the server, the session cookie's flags and lifetime, the sign-in lock in
//! the database, escaping of everything people type, links built from typed URLs, the
//! security headers of console responses, and companies kept apart in the server fns
//! that `console.rs` does not cover.

use reqwest::Response;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

const PASSWORD: &str = "correct horse battery";

/// What a browser says about a request from another site.
const CROSS_SITE: [(&str, &str); 4] = [
    ("origin", "https://evil.example"),
    ("origin", "null"),
    ("sec-fetch-site", "cross-site"),
    ("sec-fetch-site", "same-site"),
];

/// Every server fn the app registers, from the registry that mounts them, so that a
/// new one is covered without being named here.
fn server_fn_paths() -> Vec<String> {
    let mut paths: Vec<String> = leptos::server_fn::axum::server_fn_paths()
        .map(|(path, method)| {
            assert_eq!(method.as_str(), "POST", "{path}");
            path.to_owned()
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The session id inside a `Set-Cookie: cofre_session=...` of this response.
fn session_id(response: &Response) -> Option<String> {
    set_cookie(response).map(|c| c.split(';').next().unwrap()["cofre_session=".len()..].to_owned())
}

fn set_cookie(response: &Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("cofre_session="))
        .map(str::to_owned)
}

/// Ids of the stored console sessions.
async fn stored_sessions(app: &TestApp) -> Vec<String> {
    use sqlx::Row;
    sqlx::query("SELECT id FROM console_sessions ORDER BY id")
        .fetch_all(app.services.store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>("id"))
        .collect()
}

/// Signs in through the server fn carrying `cookie` (a session the browser already had).
async fn sign_in_with(app: &TestApp, cookie: &str, email: &str) -> Response {
    app.client
        .post(app.url("/console/fn/sign_in"))
        .header("accept", "application/json")
        .header("cookie", cookie)
        .form(&[("email", email), ("password", PASSWORD)])
        .send()
        .await
        .unwrap()
}

/// The server-rendered HTML of a console page for this session.
async fn page(console: &ConsoleSession<'_>, path: &str) -> String {
    let response = console
        .app
        .client
        .get(console.app.url(path))
        .header("cookie", &console.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{path}");
    response.text().await.unwrap()
}

/// A MONTHLY BOLETO subscription of João on day 1 over the REST API; answers its id.
async fn subscription(app: &TestApp, app_id: &str, correlation_id: &str, name: &str) -> String {
    let created = json(
        app.post(
            "/api/v1/subscriptions",
            Some(app_id),
            json!({
                "correlationID": correlation_id,
                "value": 4990,
                "customer": {"name": name, "taxID": "529.982.247-25"},
                "frequency": "MONTHLY",
                "dayGenerateCharge": 1,
                "dayDue": 5,
                "type": "RECURRENT",
                "chargeType": "BOLETO",
            }),
        )
        .await,
        201,
    )
    .await;
    created["subscription"]["id"].as_str().unwrap().to_owned()
}

async fn server_fn_refusal_is_csrf(response: Response) -> bool {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    status == 403 && text.contains("CSRF_REJECTED")
}

async fn every_server_fn_refuses_other_sites_and_serves_its_own(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    admin
        .ok(
            "create_user",
            &[
                ("email", "membro@example.com"),
                ("password", PASSWORD),
                ("role", "MEMBER"),
                ("api_plugins", "on"),
            ],
        )
        .await;
    let member = app
        .services
        .users
        .list(&company.id)
        .await
        .unwrap()
        .into_iter()
        .find(|u| u.email == "membro@example.com")
        .unwrap();

    let paths = server_fn_paths();
    assert!(paths.len() >= 30, "{paths:?}");
    for path in &paths {
        assert!(
            path.starts_with(cofre_app::SERVER_FN_PREFIX),
            "{path} is outside {}, where the CSRF guard runs",
            cofre_app::SERVER_FN_PREFIX
        );
    }

    // Whatever the arguments: refused before the server fn reads them.
    let applications = app.services.applications.list(&company.id).await.unwrap();
    let users = app.services.users.list(&company.id).await.unwrap().len();
    let sessions = stored_sessions(&app).await;
    for path in &paths {
        for (header, value) in CROSS_SITE {
            let response = app
                .client
                .post(app.url(path))
                .header("accept", "application/json")
                .header("cookie", &admin.cookie)
                .header(header, value)
                .form(&[
                    ("name", "Forjada"),
                    ("kind", "MASTER"),
                    ("email", "forjado@example.com"),
                    ("password", PASSWORD),
                    ("role", "ADMIN"),
                    ("user", member.id.as_str()),
                    ("granted", "false"),
                ])
                .send()
                .await
                .unwrap();
            assert!(set_cookie(&response).is_none(), "{path} {header}: {value}");
            assert_error(response, 403, "CSRF_REJECTED").await;
        }
    }
    // Nothing ran: no application or user made, no permission taken, no session ended
    // (sign_out) or made (sign_in with right credentials from another site).
    assert_eq!(
        app.services
            .applications
            .list(&company.id)
            .await
            .unwrap()
            .len(),
        applications.len()
    );
    assert_eq!(
        app.services.users.list(&company.id).await.unwrap().len(),
        users
    );
    assert!(
        app.services
            .users
            .get(&member.id)
            .await
            .unwrap()
            .permissions
            .contains(&"API_PLUGINS".to_owned())
    );
    assert_eq!(stored_sessions(&app).await, sessions);
    admin.ok("applications", &[]).await;
    let cross_sign_in = app
        .client
        .post(app.url("/console/fn/sign_in"))
        .header("origin", "https://evil.example")
        .form(&[("email", "admin0@example.com"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert!(set_cookie(&cross_sign_in).is_none());
    assert_error(cross_sign_in, 403, "CSRF_REJECTED").await;
    assert_eq!(stored_sessions(&app).await, sessions);

    // The console's own pages pass, as do clients that are not browsers (no header):
    // every server fn answers for itself, whatever that answer is.
    let own = app.console("membro@example.com", PASSWORD).await;
    for path in paths.iter().filter(|p| !p.ends_with("/sign_out")) {
        for headers in [
            vec![
                ("origin", app.base.as_str()),
                ("sec-fetch-site", "same-origin"),
            ],
            vec![("sec-fetch-site", "none")],
            vec![],
        ] {
            let mut request = app
                .client
                .post(app.url(path))
                .header("accept", "application/json")
                .header("cookie", &own.cookie);
            for (name, value) in &headers {
                request = request.header(*name, *value);
            }
            let response = request.form(&[("x", "y")]).send().await.unwrap();
            assert!(
                !server_fn_refusal_is_csrf(response).await,
                "{path} {headers:?} refused as cross-site"
            );
        }
    }
    let same = admin
        .request("create_application")
        .header("origin", app.base.clone())
        .header("sec-fetch-site", "same-origin")
        .form(&[("name", "Própria"), ("kind", "MASTER"), ("account_id", "")])
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), 200);
    assert_eq!(
        app.services
            .applications
            .list(&company.id)
            .await
            .unwrap()
            .len(),
        applications.len() + 1
    );
}
db_test!(every_server_fn_refuses_other_sites_and_serves_its_own);

async fn the_payment_book_route_refuses_other_sites(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let id = subscription(&app, &campaign, "carne-csrf", "João").await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    let year = admin.ok("subscriptions", &[]).await["year"]
        .as_i64()
        .unwrap();
    let url = app.url(&format!(
        "/console/subscriptions/{id}/payment-book?month=1&year={}",
        year + 1
    ));
    for (header, value) in CROSS_SITE {
        let response = app
            .client
            .get(&url)
            .header("cookie", &admin.cookie)
            .header(header, value)
            .send()
            .await
            .unwrap();
        assert_error(response, 403, "CSRF_REJECTED").await;
    }
    // Each of those would have issued the instalments' charges.
    assert_eq!(app.count("charges").await, 0);
    for headers in [
        vec![("sec-fetch-site", "same-origin")],
        // Typed into the address bar or opened from a bookmark.
        vec![("sec-fetch-site", "none")],
    ] {
        let mut request = app.client.get(&url).header("cookie", &admin.cookie);
        for (name, value) in &headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "{headers:?}");
        assert!(response.bytes().await.unwrap().starts_with(b"%PDF"));
    }
    assert!(app.count("charges").await >= 1);
}
db_test!(the_payment_book_route_refuses_other_sites);

async fn sign_in_never_keeps_a_session_id_the_browser_brought(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    app.services
        .users
        .create(&company.id, "membro@example.com", PASSWORD, "MEMBER", false)
        .await
        .unwrap();

    // An id the attacker made up and planted in the victim's browser.
    let made_up = tower_sessions::session::Id::default().to_string();
    let response = sign_in_with(
        &app,
        &format!("cofre_session={made_up}"),
        "admin0@example.com",
    )
    .await;
    assert!(response.status().is_success(), "{}", response.status());
    let given = session_id(&response).expect("a session cookie");
    assert_ne!(given, made_up);
    assert_eq!(stored_sessions(&app).await, vec![given.clone()]);

    // The attacker's own real session, planted the same way: signing the victim in
    // must not turn the attacker's id into the victim's session.
    let attacker = app.console("membro@example.com", PASSWORD).await;
    let attacker_id = attacker.cookie["cofre_session=".len()..].to_owned();
    let response = sign_in_with(&app, &attacker.cookie, "admin0@example.com").await;
    assert!(response.status().is_success(), "{}", response.status());
    let victim_id = session_id(&response).expect("a new session cookie");
    assert_ne!(victim_id, attacker_id);
    let stored = stored_sessions(&app).await;
    assert!(!stored.contains(&attacker_id), "{stored:?}");
    assert!(stored.contains(&victim_id));
    // The old id is worth nothing now: not the admin, not even the member any more.
    for name in ["users", "applications", "campaigns"] {
        assert_refused(attacker.call(name, &[]).await, 401, "NOT_SIGNED_IN").await;
    }
    let victim = ConsoleSession {
        app: &app,
        cookie: format!("cofre_session={victim_id}"),
    };
    let users = victim.ok("users", &[]).await;
    assert_eq!(users.as_array().unwrap().len(), 2);
}
db_test!(sign_in_never_keeps_a_session_id_the_browser_brought);

async fn signing_out_ends_the_session_on_the_server(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let id = subscription(&app, &campaign, "carne-sair", "João").await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    // The same user in a second browser.
    let other = app.console("admin0@example.com", PASSWORD).await;
    let admin_id = admin.cookie["cofre_session=".len()..].to_owned();
    assert_eq!(stored_sessions(&app).await.len(), 2);
    assert!(page(&admin, "/").await.contains("admin0@example.com"));

    let out = admin.call("sign_out", &[]).await;
    assert!(out.status().is_success(), "{}", out.status());
    // The browser is told to drop the cookie ...
    let removal = set_cookie(&out).expect("a removal cookie");
    assert!(
        removal.starts_with("cofre_session=;") && removal.contains("Max-Age=0"),
        "{removal}"
    );
    // ... and the server forgets the id, so a copy of the cookie opens nothing.
    assert!(!stored_sessions(&app).await.contains(&admin_id));
    for name in ["applications", "users", "current_user"] {
        let response = admin.call(name, &[]).await;
        if name == "current_user" {
            assert_eq!(response.text().await.unwrap(), "null");
        } else {
            assert_refused(response, 401, "NOT_SIGNED_IN").await;
        }
    }
    let home = page(&admin, "/").await;
    assert!(!home.contains("admin0@example.com") && !home.contains("Empresa 0"));
    assert_error(
        app.client
            .get(app.url(&format!(
                "/console/subscriptions/{id}/payment-book?month=1&year=2030"
            )))
            .header("cookie", &admin.cookie)
            .send()
            .await
            .unwrap(),
        401,
        "NOT_SIGNED_IN",
    )
    .await;
    assert_eq!(app.count("charges").await, 0);
    // Signing out of one browser leaves the other signed in.
    other.ok("applications", &[]).await;
}
db_test!(signing_out_ends_the_session_on_the_server);

/// The attributes of a `Set-Cookie` value, lowercased names with their values.
fn cookie_attributes(set_cookie: &str) -> Vec<(String, String)> {
    set_cookie
        .split(';')
        .skip(1)
        .map(|a| {
            let (name, value) = a.trim().split_once('=').unwrap_or((a.trim(), ""));
            (name.to_ascii_lowercase(), value.to_owned())
        })
        .collect()
}

async fn the_session_cookie_is_http_only_lax_host_only_and_lasts_eight_hours(db: Db) {
    let app = spawn_app(db).await;
    app.company(0, true).await;
    let before = cofre_server::store::now_millis();
    let response = app.sign_in("admin0@example.com", PASSWORD).await;
    let after = cofre_server::store::now_millis();
    let cookie = set_cookie(&response).expect("a session cookie");
    let id = session_id(&response).unwrap();
    // 128 random bits.
    assert_eq!(id.len(), 22, "{cookie}");
    let attributes = cookie_attributes(&cookie);
    let has = |name: &str, value: &str| attributes.iter().any(|(n, v)| n == name && v == value);
    assert!(has("httponly", ""), "{cookie}");
    assert!(has("samesite", "Lax"), "{cookie}");
    assert!(has("path", "/"), "{cookie}");
    assert!(has("max-age", "28800"), "{cookie}");
    // Host-only: no Domain that would hand it to sibling hosts; plain http here.
    assert!(!attributes.iter().any(|(n, _)| n == "domain"), "{cookie}");
    assert!(!attributes.iter().any(|(n, _)| n == "secure"), "{cookie}");

    // Stored with the same lifetime, and refused once it is over even if the browser
    // still sends the cookie.
    use sqlx::Row;
    let expires: i64 = sqlx::query("SELECT expires_at FROM console_sessions WHERE id = $1")
        .bind(&id)
        .fetch_one(app.services.store.pool())
        .await
        .unwrap()
        .get("expires_at");
    let eight_hours = 8 * 3_600_000;
    assert!(
        (before + eight_hours - 1_000..=after + eight_hours + 1_000).contains(&expires),
        "{expires}"
    );
    let console = ConsoleSession {
        app: &app,
        cookie: format!("cofre_session={id}"),
    };
    console.ok("applications", &[]).await;
    sqlx::query("UPDATE console_sessions SET expires_at = $1 WHERE id = $2")
        .bind(cofre_server::store::now_millis() - 1)
        .bind(&id)
        .execute(app.services.store.pool())
        .await
        .unwrap();
    assert_refused(
        console.call("applications", &[]).await,
        401,
        "NOT_SIGNED_IN",
    )
    .await;
}
db_test!(the_session_cookie_is_http_only_lax_host_only_and_lasts_eight_hours);

async fn the_session_cookie_is_secure_behind_https(db: Db) {
    // Served under an https public URL, the cookie never travels over plain http, even
    // when `console.secure_cookies` was forgotten.
    let app = spawn_app_with(db, |s| {
        s.server.public_url = Some("https://cofre.example".into());
    })
    .await;
    app.company(0, true).await;
    let cookie = set_cookie(&app.sign_in("admin0@example.com", PASSWORD).await).unwrap();
    assert!(
        cookie_attributes(&cookie)
            .iter()
            .any(|(n, _)| n == "secure"),
        "{cookie}"
    );
    drop(app);

    let app = spawn_app_with(db, |s| s.console.secure_cookies = true).await;
    app.company(0, true).await;
    let cookie = set_cookie(&app.sign_in("admin0@example.com", PASSWORD).await).unwrap();
    assert!(
        cookie_attributes(&cookie)
            .iter()
            .any(|(n, _)| n == "secure"),
        "{cookie}"
    );
}
db_test!(the_session_cookie_is_secure_behind_https);

/// A second `cofre` process on the test's database, as behind a load balancer;
/// answers its base URL (the folder holds its files).
async fn second_process(app: &TestApp) -> (String, tempfile::TempDir) {
    let files = tempfile::tempdir().unwrap();
    let settings = test_settings(&app.db.url, files.path());
    let running = cofre_server::start(settings).await.expect("second process");
    (format!("http://{}", running.addr), files)
}

async fn sign_in_at(app: &TestApp, base: &str, email: &str, password: &str) -> Response {
    app.client
        .post(format!("{base}/console/fn/sign_in"))
        .header("accept", "application/json")
        .form(&[("email", email), ("password", password)])
        .send()
        .await
        .unwrap()
}

async fn the_sign_in_lock_is_kept_in_the_database_and_says_nothing_about_who_exists(db: Db) {
    let app = spawn_app(db).await;
    app.company(0, true).await;
    app.company(1, true).await;

    // A known email with a wrong password and an unknown email get the same answer,
    // attempt after attempt, lock included.
    for attempt in 1..=5 {
        let known = app.sign_in("admin0@example.com", "wrong password").await;
        let unknown = app.sign_in("ninguem@example.com", "wrong password").await;
        let (status, code) = if attempt < 5 {
            (401, "INVALID_CREDENTIALS")
        } else {
            // Locked for fifteen minutes, and told so.
            assert_eq!(header(&known, "retry-after"), "900");
            assert_eq!(header(&unknown, "retry-after"), "900");
            (429, "SIGN_IN_LOCKED")
        };
        let known = assert_refused(known, status, code).await;
        let unknown = assert_refused(unknown, status, code).await;
        assert_eq!(known, unknown, "attempt {attempt}");
    }

    // Another process on the same database knows the lock: it is not in memory. The
    // right password, however the email is typed, is refused too.
    let (second, _files) = second_process(&app).await;
    for email in [
        "admin0@example.com",
        "  Admin0@Example.COM ",
        "ninguem@example.com",
    ] {
        assert_refused(
            sign_in_at(&app, &second, email, PASSWORD).await,
            429,
            "SIGN_IN_LOCKED",
        )
        .await;
    }
    // Failures of locked attempts are not counted on.
    let stored = cofre_server::store::users::sign_in_failures(
        app.services.store.pool(),
        "admin0@example.com",
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(stored.failures, 5);
    // Another user is not locked.
    let other = sign_in_at(&app, &second, "admin1@example.com", PASSWORD).await;
    assert_eq!(other.status(), 200);
    assert!(session_id(&other).is_some());

    // Fifteen minutes later (moved back in the database) the right password opens.
    let now = cofre_server::store::now_millis();
    sqlx::query(
        "UPDATE sign_in_failures SET locked_until = $1, window_start = $2 WHERE email = $3",
    )
    .bind(now - 1)
    .bind(now - 15 * 60_000 - 1)
    .bind("admin0@example.com")
    .execute(app.services.store.pool())
    .await
    .unwrap();
    app.console("admin0@example.com", PASSWORD).await;
    assert!(
        cofre_server::store::users::sign_in_failures(
            app.services.store.pool(),
            "admin0@example.com"
        )
        .await
        .unwrap()
        .is_none()
    );
}
db_test!(the_sign_in_lock_is_kept_in_the_database_and_says_nothing_about_who_exists);

/// Text that runs as script wherever a page puts it unescaped (text, a textarea's
/// raw text, a double-quoted attribute), marked with `tag`.
fn payload(tag: &str) -> String {
    format!("</textarea><script>alert('{tag}')</script>\"><img src=x onerror=alert('{tag}')>")
}

/// Asserts that the page shows each tagged payload as text, and that no payload
/// reached the HTML (text, attributes, or the hydration data in inline scripts) as
/// markup.
fn assert_only_escaped(html: &str, path: &str, tags: &[&str]) {
    for raw in [
        "<script>alert(",
        "</textarea><script",
        "<img src=x",
        "<img/src=x",
        "</script>\"",
        "\"><img",
    ] {
        assert!(
            !html.contains(raw),
            "{path} has {raw} unescaped: …{}…",
            html.split(raw)
                .next()
                .map_or("", |s| &s[s.len().saturating_sub(200)..])
        );
    }
    for tag in tags {
        let shown = format!("&lt;script&gt;alert('{tag}')&lt;/script&gt;");
        assert!(html.contains(&shown), "{path} does not show {tag}: {html}");
    }
}

async fn everything_people_type_is_shown_escaped_on_every_page(db: Db) {
    let app = spawn_app(db).await;
    // The company's name comes from the CLI (`cofre company create --name`).
    let created = app
        .services
        .companies
        .create(cofre_server::service::companies::NewCompany {
            name: payload("company"),
            tax_id: CNPJS[0].into(),
            baas: true,
            admin_email: "admin0@example.com".into(),
            admin_password: PASSWORD.into(),
        })
        .await
        .unwrap();
    let company = TestCompany {
        id: created.company.id,
        main_account_id: created.main_account_id,
    };
    app.services
        .users
        .create_support("suporte@example.com", PASSWORD)
        .await
        .unwrap();
    let master = app.master(&company).await;
    let admin = app.console("admin0@example.com", PASSWORD).await;

    // Typed in the console.
    admin
        .ok(
            "create_application",
            &[
                ("name", &payload("app")),
                ("kind", "MASTER"),
                ("account_id", ""),
            ],
        )
        .await;
    admin
        .ok(
            "start_campaign",
            &[
                ("campaign[name]", &payload("campaign")),
                ("campaign[key_type]", "EVP"),
                ("campaign[key]", ""),
                ("campaign[withdraw_key]", ""),
            ],
        )
        .await;
    admin
        .ok(
            "create_webhook",
            &[
                ("name", &payload("hook")),
                ("event", "OPENPIX:CHARGE_COMPLETED"),
                ("url", "https://example.com/hook"),
            ],
        )
        .await;
    // An email needs no spaces: the same payload without them.
    let email =
        "</textarea><script>alert('user')</script>\"><img/src=x/onerror=alert('user')>@xss.example";
    admin
        .ok(
            "create_user",
            &[
                ("email", email),
                ("password", PASSWORD),
                ("role", "MEMBER"),
                ("api_plugins", "on"),
            ],
        )
        .await;
    let component = std::fs::read(format!(
        "{}/../plugins/examples/target/wasm32-wasip2/release/pix_key_policy.wasm",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("scripts/build-plugins first");
    let form = reqwest::multipart::Form::new()
        .text("name", payload("plugin"))
        .text("version", "</textarea><script>alert('version')</script>")
        .part(
            "file",
            reqwest::multipart::Part::bytes(component).file_name("p.wasm"),
        );
    let uploaded = admin
        .request("upload_plugin")
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = uploaded.status();
    let plugin: Value = uploaded.json().await.unwrap();
    assert_eq!(status, 200, "{plugin}");
    let plugin_id = plugin["id"].as_str().unwrap().to_owned();
    admin
        .ok(
            "set_plugin_binding",
            &[
                ("plugin", &plugin_id),
                ("hook", "check-pix-key"),
                ("config", &format!("note={}", payload("config"))),
            ],
        )
        .await;

    // Sent over the REST API.
    let (account, campaign) = app.funded_campaign(&master, "loja@xss.example", 0).await;
    subscription(&app, &campaign, "plano-xss", &payload("customer")).await;
    json(
        app.sandbox_pix(&campaign, "loja@xss.example", 5_000).await,
        200,
    )
    .await;
    let statement = json(app.get("/api/v1/statement", Some(&campaign)).await, 200).await;
    let received = statement["statement"][0]["endToEndId"]
        .as_str()
        .unwrap()
        .to_owned();
    let opened = json(
        app.post(
            "/api/v1/sandbox/dispute",
            Some(&campaign),
            json!({"transactionID": received}),
        )
        .await,
        200,
    )
    .await;
    let dispute = opened["dispute"]["id"].as_str().unwrap().to_owned();
    let link = "https://x.example/\"><img src=x onerror=alert('url')>";
    json(
        app.post(
            &format!("/api/v1/dispute/{dispute}/evidence"),
            Some(&campaign),
            json!({"documents": [{"url": link, "description": payload("evidence")}]}),
        )
        .await,
        200,
    )
    .await;
    let doc = app.uploaded(&master, "KYC_DOCUMENT").await;
    let onboarding = json(
        app.post(
            "/api/v1/kyc/onboarding",
            Some(&master),
            json!({
                "taxID": CNPJS[0],
                "correlationID": "kyc-xss",
                "representatives": [{
                    "name": payload("kyc"),
                    "taxID": "529.982.247-25",
                    "email": "maria@empresa.com.br",
                    "birthDate": "1990-01-01",
                    "documents": [doc],
                }],
            }),
        )
        .await,
        201,
    )
    .await;
    let onboarding = onboarding["onboarding"]["id"].as_str().unwrap().to_owned();

    // Typed by support.
    let support = app.console("suporte@example.com", PASSWORD).await;
    json(
        app.sandbox_pix(&campaign, "loja@xss.example", 1_000).await,
        200,
    )
    .await;
    let statement = json(app.get("/api/v1/statement", Some(&campaign)).await, 200).await;
    let second = statement["statement"][0]["endToEndId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(second, received);
    support
        .ok(
            "open_dispute",
            &[
                ("company", &company.id),
                ("transaction", &second),
                ("reason", &payload("reason")),
            ],
        )
        .await;
    support
        .ok(
            "resolve_dispute",
            &[
                ("dispute", &dispute),
                ("decision", "REJECT"),
                ("note", &payload("note")),
            ],
        )
        .await;
    support
        .ok(
            "review_kyc",
            &[
                ("onboarding", &onboarding),
                ("decision", "REQUEST_DOCUMENTS"),
                ("note", &payload("kycnote")),
            ],
        )
        .await;
    assert!(!account.is_empty());

    for (path, tags) in [
        ("/", vec!["company"]),
        ("/campaigns/new", vec!["company"]),
        ("/api-plugins", vec!["company", "app", "campaign"]),
        ("/webhooks", vec!["hook"]),
        ("/plugins", vec!["plugin", "version", "config"]),
        ("/users", vec!["user"]),
        ("/subscriptions", vec!["customer"]),
    ] {
        assert_only_escaped(&page(&admin, path).await, path, &tags);
    }
    let member = app.console(email, PASSWORD).await;
    assert_only_escaped(&page(&member, "/").await, "/ (member)", &["user"]);
    let html = page(&support, "/support").await;
    assert_only_escaped(
        &html,
        "/support",
        &[
            "company", "reason", "evidence", "note", "kyc", "kycnote", "user",
        ],
    );
    // The evidence link's address stays inside its attribute.
    assert!(
        html.contains(
            "href=\"https://x.example/&quot;&gt;&lt;img src=x onerror=alert('url')&gt;\""
        ),
        "{html}"
    );
}
db_test!(everything_people_type_is_shown_escaped_on_every_page);

async fn typed_links_can_only_be_http_or_https(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign, dispute) = app
        .disputed_campaign(&master, "loja@empresa0.com.br", 1_000)
        .await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    for url in [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/x",
        "/relative",
    ] {
        let refused = assert_refused(
            admin
                .call(
                    "create_webhook",
                    &[
                        ("name", "Hook"),
                        ("event", "OPENPIX:CHARGE_COMPLETED"),
                        ("url", url),
                    ],
                )
                .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(
            refused["fields"][0]["field"], "webhook.url",
            "{url}: {refused}"
        );
        let body = assert_error(
            app.post(
                &format!("/api/v1/dispute/{dispute}/evidence"),
                Some(&campaign),
                json!({"documents": [{"url": url}]}),
            )
            .await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(
            body["details"][0]["field"], "documents[0].url",
            "{url}: {body}"
        );
    }
    assert_eq!(app.count("webhooks").await, 0);
    assert_eq!(app.count("dispute_evidence").await, 0);
}
db_test!(typed_links_can_only_be_http_or_https);

/// The directives of a Content-Security-Policy, by name.
fn directives(csp: &str) -> std::collections::HashMap<String, Vec<String>> {
    csp.split(';')
        .filter_map(|d| {
            let mut words = d.split_whitespace();
            let name = words.next()?.to_ascii_lowercase();
            Some((name, words.map(str::to_owned).collect()))
        })
        .collect()
}

fn header(response: &Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Headers every console response carries: no framing, no sniffing, no referrer
/// beyond the console, nothing kept by caches.
fn assert_console_headers(response: &Response, what: &str) {
    assert_eq!(header(response, "x-frame-options"), "DENY", "{what}");
    assert_eq!(
        header(response, "x-content-type-options"),
        "nosniff",
        "{what}"
    );
    assert_eq!(header(response, "referrer-policy"), "same-origin", "{what}");
    let csp = directives(&header(response, "content-security-policy"));
    assert_eq!(
        csp.get("frame-ancestors"),
        Some(&vec!["'none'".to_owned()]),
        "{what}: {csp:?}"
    );
}

async fn console_responses_forbid_framing_sniffing_and_foreign_scripts(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let id = subscription(&app, &campaign, "carne-headers", "João").await;
    let admin = app.console("admin0@example.com", PASSWORD).await;
    let year = admin.ok("subscriptions", &[]).await["year"]
        .as_i64()
        .unwrap();

    let mut nonces = Vec::new();
    for path in ["/login", "/", "/api-plugins", "/support"] {
        let response = app
            .client
            .get(app.url(path))
            .header("cookie", &admin.cookie)
            .send()
            .await
            .unwrap();
        assert_console_headers(&response, path);
        assert_eq!(header(&response, "cache-control"), "no-store", "{path}");
        let csp = directives(&header(&response, "content-security-policy"));
        let scripts = csp.get("script-src").cloned().unwrap_or_default();
        // Only this response's own inline scripts run, and the WebAssembly it loads.
        let nonce = scripts
            .iter()
            .find_map(|s| {
                s.strip_prefix("'nonce-")?
                    .strip_suffix('\'')
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| panic!("{path}: no nonce in {csp:?}"));
        assert!(nonce.len() >= 16, "{nonce}");
        assert!(
            scripts.contains(&"'wasm-unsafe-eval'".to_owned()),
            "{csp:?}"
        );
        assert!(
            !scripts
                .iter()
                .any(|s| s == "'unsafe-inline'" || s == "'unsafe-eval'" || s == "*"),
            "{csp:?}"
        );
        for (name, value) in [
            ("default-src", "'self'"),
            ("object-src", "'none'"),
            ("base-uri", "'none'"),
            ("form-action", "'self'"),
        ] {
            assert_eq!(
                csp.get(name),
                Some(&vec![value.to_owned()]),
                "{path}: {csp:?}"
            );
        }
        let html = response.text().await.unwrap();
        let tags: Vec<&str> = html
            .split("<script")
            .skip(1)
            .map(|s| s.split('>').next().unwrap())
            .collect();
        assert!(!tags.is_empty(), "{path}");
        for tag in tags {
            assert!(
                tag.contains(&format!("nonce=\"{nonce}\"")),
                "{path}: <script{tag}>"
            );
        }
        nonces.push(nonce);
    }
    let mut distinct = nonces.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), nonces.len(), "{nonces:?}");

    // Server fns, the payment book and the language switch.
    let server_fn = admin.call("applications", &[]).await;
    assert_eq!(server_fn.status(), 200);
    assert_console_headers(&server_fn, "server fn");
    assert_eq!(header(&server_fn, "cache-control"), "no-store");
    let refused = app.anonymous_call("applications", &[]).await;
    assert_console_headers(&refused, "refused server fn");
    let book = app
        .client
        .get(app.url(&format!(
            "/console/subscriptions/{id}/payment-book?month=1&year={}",
            year + 1
        )))
        .header("cookie", &admin.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(book.status(), 200);
    assert_console_headers(&book, "payment book");
    assert_eq!(header(&book, "cache-control"), "no-store");
    let lang = app.get("/console/lang?to=en", None).await;
    assert_console_headers(&lang, "language switch");
    // Static assets may be cached, but are never sniffed.
    let asset = app.get("/pkg/cofre.css", None).await;
    assert_eq!(header(&asset, "x-content-type-options"), "nosniff");
}
db_test!(console_responses_forbid_framing_sniffing_and_foreign_scripts);

async fn a_session_of_company_a_never_touches_company_b_plugins_or_deliveries(db: Db) {
    let app = spawn_app(db).await;
    let receiver = crate::receiver::Receiver::start(&[]).await;
    app.company(0, true).await;
    let b = app.company(1, true).await;
    let b_master = app.master(&b).await;
    let (b_account, b_campaign) = app
        .funded_campaign(&b_master, "loja@empresa1.com.br", 0)
        .await;
    let component = std::fs::read(format!(
        "{}/../plugins/examples/target/wasm32-wasip2/release/pix_key_policy.wasm",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("scripts/build-plugins first");
    let upload = |app_id: String, component: Vec<u8>| {
        let form = reqwest::multipart::Form::new()
            .part(
                "file",
                reqwest::multipart::Part::bytes(component).file_name("plugin.wasm"),
            )
            .text("name", "regra")
            .text("version", "1.0.0");
        app.request(reqwest::Method::POST, "/api/v1/plugins", Some(&app_id))
            .multipart(form)
            .send()
    };
    let b_plugin = json(
        upload(b_master.clone(), component.clone()).await.unwrap(),
        201,
    )
    .await["plugin"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let b_webhook = json(
        app.post(
            "/api/v1/webhook",
            Some(&b_master),
            json!({"webhook": {"name": "B", "event": "OPENPIX:CHARGE_CREATED", "url": receiver.url}}),
        )
        .await,
        201,
    )
    .await["webhook"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    json(
        app.create_charge(&b_campaign, json!({"correlationID": "b1", "value": 990}))
            .await,
        201,
    )
    .await;
    app.services.webhooks.deliver_due(100).await.unwrap();
    let deliveries_path = format!("/api/v1/webhook/{b_webhook}/deliveries");
    let before =
        json(app.get(&deliveries_path, Some(&b_master)).await, 200).await["deliveries"].clone();
    let b_delivery = before[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(before[0]["status"], "DELIVERED", "{before}");

    let a = app.console("admin0@example.com", PASSWORD).await;
    let a_plugin = a
        .request("upload_plugin")
        .multipart(
            reqwest::multipart::Form::new()
                .text("name", "minha")
                .text("version", "1.0.0")
                .part(
                    "file",
                    reqwest::multipart::Part::bytes(component).file_name("p.wasm"),
                ),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(a_plugin.status(), 200);
    let a_plugin = a_plugin.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = a.ok("plugins", &[]).await;
    assert!(
        listed["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["id"] != b_plugin.as_str())
    );
    assert!(
        !listed["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|acc| acc == b_account.as_str())
    );
    type Refusal<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16, &'a str);
    let refusals: Vec<Refusal> = vec![
        (
            "set_plugin_binding",
            vec![("plugin", &b_plugin), ("hook", "check-pix-key")],
            404,
            "PLUGIN_NOT_FOUND",
        ),
        (
            "set_plugin_binding",
            vec![("plugin", &b_plugin), ("hook", "")],
            404,
            "PLUGIN_NOT_FOUND",
        ),
        (
            "plugin_invocations",
            vec![("plugin", &b_plugin)],
            404,
            "PLUGIN_NOT_FOUND",
        ),
        // Company A's own plugin cannot be bound to company B's account.
        (
            "set_plugin_binding",
            vec![
                ("plugin", &a_plugin),
                ("hook", "check-pix-key"),
                ("accounts", &b_account),
            ],
            404,
            "ACCOUNT_NOT_FOUND",
        ),
        (
            "resend_delivery",
            vec![("delivery", &b_delivery)],
            404,
            "DELIVERY_NOT_FOUND",
        ),
    ];
    for (name, form, status, code) in refusals {
        assert_refused(a.call(name, &form).await, status, code).await;
    }
    // Company B's plugin is unbound and its delivery was not sent again.
    let b_plugins = json(app.get("/api/v1/plugins", Some(&b_master)).await, 200).await;
    assert_eq!(
        b_plugins["plugins"][0]["bindings"],
        json!([]),
        "{b_plugins}"
    );
    let after =
        json(app.get(&deliveries_path, Some(&b_master)).await, 200).await["deliveries"].clone();
    assert_eq!(after, before);
    assert_eq!(app.services.webhooks.deliver_due(100).await.unwrap(), 0);
    assert_eq!(receiver.received().len(), 1);
    let a_plugins = a.ok("plugins", &[]).await;
    assert_eq!(
        a_plugins["plugins"][0]["bindings"],
        json!([]),
        "{a_plugins}"
    );
}
db_test!(a_session_of_company_a_never_touches_company_b_plugins_or_deliveries);

async fn a_session_ended_meanwhile_is_not_saved_back(db: Db) {
    use tower_sessions::SessionStore;
    use tower_sessions::session::{Id, Record};
    let app = spawn_app(db).await;
    let table = cofre_server::store::sessions::SessionTable::new(app.services.store.clone());
    let mut record = Record {
        id: Id::default(),
        data: [("user_id".to_owned(), json!("usr_someone"))].into(),
        expiry_date: time::OffsetDateTime::now_utc() + time::Duration::hours(1),
    };
    table.create(&mut record).await.unwrap();
    assert!(table.load(&record.id).await.unwrap().is_some());
    // A request loaded the session; meanwhile another one signed out.
    table.delete(&record.id).await.unwrap();
    // The first request saving its copy must not sign the user back in.
    table.save(&record).await.unwrap();
    assert!(table.load(&record.id).await.unwrap().is_none());
    assert!(stored_sessions(&app).await.is_empty());
}
db_test!(a_session_ended_meanwhile_is_not_saved_back);
