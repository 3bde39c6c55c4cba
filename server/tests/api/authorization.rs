//! The authorisation matrix, generated from the router's own OpenAPI document (not a
//! hand-kept list): every `/api/v1` route against every kind of caller that must be
//! refused answers exactly the status and `code` of CONTRACT.md, in its order
//! (401 -> 403 MASTER -> 403 scope). A new route that declares no scope fails here
//! unless it is added, on purpose, to the short lists below. Every route with a path
//! parameter is also called by another company's valid AppID with this company's real
//! ids: 404 and the resource's code, and nothing of this company's changes; a new such
//! route fails until it has a fixture in `probe`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::db_test;
use crate::helpers::*;

/// Routes anyone may call: signing keys, the change log, the document itself, signed
/// file links (the link is the credential) and the removed endpoints' 410.
const PUBLIC: &[&str] = &[
    "GET /api/v1/changelog",
    "GET /api/v1/files/{id}/content",
    "GET /api/v1/openapi.json",
    "GET /api/v1/webhook/public-keys",
    "PATCH /api/v1/account-register",
    "PATCH /api/v1/account-register/{id}",
    "POST /api/v1/account-register",
];

/// Routes any authenticated application may call without a scope (seed: "requires no
/// scope").
const NO_SCOPE: &[&str] = &["GET /api/v1/application/scopes"];

/// `/api/v1/x/{id}` with every path parameter filled in.
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("x1");
            }
            '}' => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

async fn call(
    app: &TestApp,
    method: &Method,
    path: &str,
    authorization: Option<&str>,
) -> reqwest::Response {
    let mut req = app.request(method.clone(), path, authorization);
    if *method != Method::GET && *method != Method::DELETE {
        req = req.header("content-type", "application/json").body("{}");
    }
    req.send().await.unwrap()
}

async fn expect(response: reqwest::Response, status: u16, code: &str, route: &str, who: &str) {
    let got = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert_eq!(
        (got, body["code"].as_str().unwrap_or_default()),
        (status, code),
        "{route} called by {who}: {body}"
    );
}

async fn every_route_refuses_each_wrong_caller_as_the_contract_says(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let api = app.application(&company, "API", &[], &[]).await;
    let inactive = app.application(&company, "MASTER", &[], &[]).await;
    let stored = app.services.applications.list(&company.id).await.unwrap();
    let inactive_id = &stored
        .iter()
        .find(|a| a.client_id == client_id_of(&inactive))
        .unwrap()
        .id;
    app.services
        .applications
        .set_active(&company.id, inactive_id, false)
        .await
        .unwrap();
    let rotated = app.application(&company, "MASTER", &[], &[]).await;
    json(
        app.rotate_secret(&master, &client_id_of(&rotated)).await,
        200,
    )
    .await;
    // MASTER applications limited to one scope each: one of them lacks any given scope.
    let limited = [
        (
            "ACCOUNT_GET",
            app.application(&company, "MASTER", &["ACCOUNT_GET"], &[])
                .await,
        ),
        (
            "CHARGE_GET",
            app.application(&company, "MASTER", &["CHARGE_GET"], &[])
                .await,
        ),
    ];

    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    let mut public = Vec::new();
    let mut no_scope = Vec::new();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = method.to_ascii_uppercase().parse::<Method>() else {
                continue;
            };
            let route = format!("{method} {path}");
            let requirement = &op["security"][0];
            let Some((scheme, scopes)) = requirement.as_object().and_then(|o| o.iter().next())
            else {
                public.push(route);
                continue;
            };
            let scopes: Vec<&str> = scopes
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            if scopes.is_empty() {
                no_scope.push(route.clone());
            }
            let url = concrete(path);
            let bearer = format!("Bearer {master}");
            for (who, authorization, status, code) in [
                ("no AppID", None, 401, "APP_ID_MISSING"),
                (
                    "a malformed AppID",
                    Some("not-an-app-id"),
                    401,
                    "APP_ID_INVALID",
                ),
                (
                    "Bearer <valid>",
                    Some(bearer.as_str()),
                    401,
                    "APP_ID_INVALID",
                ),
                (
                    "a deactivated application",
                    Some(inactive.as_str()),
                    401,
                    "APPLICATION_INACTIVE",
                ),
                (
                    "a rotated-away secret",
                    Some(rotated.as_str()),
                    401,
                    "APP_ID_INVALID",
                ),
            ] {
                expect(
                    call(&app, &method, &url, authorization).await,
                    status,
                    code,
                    &route,
                    who,
                )
                .await;
            }
            if scheme == "MasterAppID" {
                expect(
                    call(&app, &method, &url, Some(&api)).await,
                    403,
                    "MASTER_APPLICATION_REQUIRED",
                    &route,
                    "an API application",
                )
                .await;
            }
            if let Some((held, lacking)) = limited.iter().find(|(held, _)| !scopes.contains(held))
                && !scopes.is_empty()
            {
                expect(
                    call(&app, &method, &url, Some(lacking)).await,
                    403,
                    "SCOPE_MISSING",
                    &route,
                    &format!("an application holding only {held}"),
                )
                .await;
            }
            checked += 1;
        }
    }
    public.sort();
    no_scope.sort();
    assert_eq!(
        public, PUBLIC,
        "public routes changed: declare them here on purpose"
    );
    assert_eq!(no_scope, NO_SCOPE, "a route declares no scope: give it one");
    assert!(checked > 60, "only {checked} routes were checked");
}
db_test!(every_route_refuses_each_wrong_caller_as_the_contract_says);

/// Parameterised routes where an id of another company is, on purpose, not 404: what
/// they answer B instead, and why.
const NOT_TENANT_SCOPED: &[(&str, u16, &str)] = &[
    (
        "GET /api/v1/files/{id}/content",
        403,
        "the signed link is the credential, not an AppID: without it, 403 for everyone",
    ),
    (
        "GET /api/v1/pix-keys/{key}/check",
        200,
        "a directory (DICT) lookup any company may make; the owner comes back masked",
    ),
    (
        "PATCH /api/v1/account-register/{id}",
        410,
        "removed: 410 ENDPOINT_REMOVED for everyone",
    ),
];

/// Company A's resources: for every kind a path parameter names, each form of id the
/// routes accept (id, correlationID, globalID, endToEndId, a key as typed), the first the
/// one A reads its resource by.
struct Theirs {
    master: String,
    campaign: String,
    account: Vec<String>,
    /// A paid charge (refundable) and an ACTIVE one (payable, deletable).
    paid_charge: Vec<String>,
    active_charge: Vec<String>,
    customer: Vec<String>,
    dispute: Vec<String>,
    file: Vec<String>,
    /// A key of A's campaign that is not its default.
    pix_key: Vec<String>,
    plugin: Vec<String>,
    qr_code: Vec<String>,
    refund: Vec<String>,
    subscription: Vec<String>,
    transaction: Vec<String>,
    webhook: Vec<String>,
    delivery: Vec<String>,
}

/// Company B, the caller: its MASTER application (every scope) and a campaign
/// application bound to its own account.
struct Ours {
    master: String,
    campaign: String,
    account: String,
}

fn id_of(body: &Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} in {body}"))
        .to_owned()
}

fn plugin_component(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../plugins/examples/target/wasm32-wasip2/release/{name}.wasm",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}; run scripts/build-plugins first"))
}

/// Company A with one of each resource, built through the API as its integrators do.
async fn their_resources(app: &TestApp, company: &TestCompany) -> Theirs {
    let master = app.master(company).await;
    // Registered first, so that the Pix below leaves a delivery (no worker sends it).
    let webhook = json(
        app.post(
            "/api/v1/webhook",
            Some(&master),
            json!({"webhook": {"name": "a", "event": "OPENPIX:TRANSACTION_RECEIVED",
                               "url": "http://127.0.0.1:9/a", "isActive": true}}),
        )
        .await,
        201,
    )
    .await;
    let (account, campaign) = app.funded_campaign(&master, "doe@empresa0.com.br", 0).await;
    json(
        app.create_pix_key(&campaign, "EMAIL", "outra@empresa0.com.br")
            .await,
        201,
    )
    .await;
    let received = json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 5000)
            .await,
        200,
    )
    .await;
    let disputed = json(
        app.sandbox_pix(&campaign, "doe@empresa0.com.br", 1000)
            .await,
        200,
    )
    .await;
    let dispute = json(
        app.post(
            "/api/v1/sandbox/dispute",
            Some(&campaign),
            json!({"transactionID": id_of(&disputed, "/transaction/endToEndId")}),
        )
        .await,
        200,
    )
    .await;
    let paid = json(
        app.create_charge(
            &campaign,
            json!({"correlationID": "pago-a", "value": 3000,
                   "customer": {"name": "Maria Pagadora", "taxID": "529.982.247-25", "email": "maria@example.com"}}),
        )
        .await,
        201,
    )
    .await;
    let paid_charge = id_of(&paid, "/charge/transactionID");
    json(app.pay_charge(&campaign, &paid_charge).await, 200).await;
    let refund = json(
        app.post(
            &format!("/api/v1/charge/{paid_charge}/refund"),
            Some(&campaign),
            json!({"value": 500, "correlationID": "estorno-a"}),
        )
        .await,
        201,
    )
    .await;
    let active = json(
        app.create_charge(
            &campaign,
            json!({"correlationID": "aberta-a", "value": 700}),
        )
        .await,
        201,
    )
    .await;
    let qr_code = json(
        app.post(
            "/api/v1/qrcode-static",
            Some(&campaign),
            json!({"name": "Cofrinho", "correlationID": "qr-a", "value": 1000}),
        )
        .await,
        201,
    )
    .await;
    let subscription = json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            json!({"correlationID": "plano-a", "value": 4990, "frequency": "MONTHLY",
                   "customer": {"name": "João Pagador", "taxID": "111.444.777-35"},
                   "dayGenerateCharge": 10, "dayDue": 5, "type": "RECURRENT", "chargeType": "PIX"}),
        )
        .await,
        201,
    )
    .await;
    let file = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(plugin_component("pix_key_policy"))
                .file_name("plugin.wasm"),
        )
        .text("name", "regra")
        .text("version", "1.0.0");
    let plugin = json(
        app.request(Method::POST, "/api/v1/plugins", Some(&master))
            .multipart(form)
            .send()
            .await
            .unwrap(),
        201,
    )
    .await;
    let plugin = id_of(&plugin, "/plugin/id");
    json(
        app.put(
            &format!("/api/v1/plugins/{plugin}/bindings"),
            Some(&master),
            json!({"bindings": [{"hook": "check-pix-key", "accounts": [account], "config": {}}]}),
        )
        .await,
        200,
    )
    .await;
    // A withdraw key, so that a withdraw that reached A's account would move money.
    app.directory(&[("saques@empresa0.com.br", "EMAIL", CNPJS[0])])
        .await;
    app.enable_withdraw_key_api(&account).await;
    json(
        app.post_withdraw_key(&campaign, json!({"pixKey": "saques@empresa0.com.br"}))
            .await,
        200,
    )
    .await;
    let webhook = id_of(&webhook, "/webhook/id");
    let deliveries = json(
        app.get(
            &format!("/api/v1/webhook/{webhook}/deliveries"),
            Some(&master),
        )
        .await,
        200,
    )
    .await;
    let forms = |body: &Value, pointers: &[&str]| -> Vec<String> {
        pointers.iter().map(|p| id_of(body, p)).collect()
    };
    Theirs {
        // The campaign's account and the company's main one.
        account: vec![account.clone(), company.main_account_id.clone()],
        paid_charge: forms(
            &paid,
            &[
                "/charge/transactionID",
                "/charge/correlationID",
                "/charge/globalID",
            ],
        ),
        active_charge: forms(
            &active,
            &[
                "/charge/transactionID",
                "/charge/correlationID",
                "/charge/globalID",
            ],
        ),
        customer: forms(
            &paid,
            &["/charge/customer/id", "/charge/customer/correlationID"],
        ),
        dispute: vec![id_of(&dispute, "/dispute/id")],
        file: vec![file],
        // As stored and as an integrator may type it.
        pix_key: vec![
            "outra@empresa0.com.br".into(),
            "OUTRA@Empresa0.com.br".into(),
        ],
        plugin: vec![plugin],
        qr_code: forms(
            &qr_code,
            &["/pixQrCode/identifier", "/pixQrCode/correlationID"],
        ),
        refund: forms(
            &refund,
            &[
                "/refund/refundId",
                "/refund/endToEndId",
                "/refund/correlationID",
            ],
        ),
        subscription: forms(
            &subscription,
            &["/subscription/id", "/subscription/globalID"],
        ),
        transaction: forms(
            &received,
            &["/transaction/transactionID", "/transaction/endToEndId"],
        ),
        webhook: vec![webhook],
        delivery: vec![id_of(&deliveries, "/deliveries/0/id")],
        master,
        campaign,
    }
}

/// What B sends to a route: A's ids, a query and a body that would be valid for B's own
/// resource (so that neither can answer first), and the resource's 404 code. `ID` in a
/// body stands for the id in the path.
struct Probe<'a> {
    ids: &'a [String],
    query: String,
    body: Option<Value>,
    code: &'static str,
}

const ID: &str = "{id}";

/// The probe of a route template; `None`: the route has no cross-company fixture yet.
fn probe<'a>(route: &str, a: &'a Theirs, b: &Ours) -> Option<Probe<'a>> {
    let (ids, body, code) = match route {
        "GET /api/v1/account/{accountId}" => (&a.account, None, "ACCOUNT_NOT_FOUND"),
        "POST /api/v1/account/{accountId}" => (
            &a.account,
            Some(json!({"accountId": ID, "value": 100})),
            "ACCOUNT_NOT_FOUND",
        ),
        "POST /api/v1/account/{accountId}/withdraw" => {
            (&a.account, Some(json!({"value": 100})), "ACCOUNT_NOT_FOUND")
        }
        "GET /api/v1/charge/{id}" | "GET /api/v1/charge/{id}/refund" => {
            (&a.paid_charge, None, "CHARGE_NOT_FOUND")
        }
        "POST /api/v1/charge/{id}/refund" => (
            &a.paid_charge,
            Some(json!({"value": 100, "correlationID": "estorno-b"})),
            "CHARGE_NOT_FOUND",
        ),
        "DELETE /api/v1/charge/{id}" => (&a.active_charge, None, "CHARGE_NOT_FOUND"),
        "POST /api/v1/sandbox/charge/{id}/pay" => (
            &a.active_charge,
            Some(json!({"payer": {"name": "Joana"}})),
            "CHARGE_NOT_FOUND",
        ),
        "GET /api/v1/customer/{id}" => (&a.customer, None, "CUSTOMER_NOT_FOUND"),
        "PATCH /api/v1/customer/{id}" => (
            &a.customer,
            Some(json!({"name": "Outro Nome"})),
            "CUSTOMER_NOT_FOUND",
        ),
        "GET /api/v1/dispute/{id}" | "POST /api/v1/sandbox/dispute/{id}/cancel" => {
            (&a.dispute, None, "DISPUTE_NOT_FOUND")
        }
        "POST /api/v1/dispute/{id}/evidence" => (
            &a.dispute,
            Some(
                json!({"documents": [{"url": "https://empresa1.com.br/prova.pdf", "description": "prova"}]}),
            ),
            "DISPUTE_NOT_FOUND",
        ),
        "GET /api/v1/files/{id}" => (&a.file, None, "FILE_NOT_FOUND"),
        "DELETE /api/v1/pix-keys/{key}" | "PUT /api/v1/pix-keys/{key}/default" => {
            (&a.pix_key, None, "PIX_KEY_NOT_FOUND")
        }
        "DELETE /api/v1/plugins/{id}" | "GET /api/v1/plugins/{id}/invocations" => {
            (&a.plugin, None, "PLUGIN_NOT_FOUND")
        }
        "PUT /api/v1/plugins/{id}/bindings" => (
            &a.plugin,
            Some(
                json!({"bindings": [{"hook": "check-pix-key", "accounts": [b.account], "config": {}}]}),
            ),
            "PLUGIN_NOT_FOUND",
        ),
        "GET /api/v1/qrcode-static/{id}" | "GET /api/v1/pixQrCode/{id}" => {
            (&a.qr_code, None, "QRCODE_NOT_FOUND")
        }
        "GET /api/v1/refund/{id}" => (&a.refund, None, "REFUND_NOT_FOUND"),
        "GET /api/v1/subscriptions/{id}"
        | "PUT /api/v1/subscriptions/{id}/cancel"
        | "GET /api/v1/subscriptions/{id}/installments"
        | "GET /api/v1/subscriptions/{id}/payment-book" => {
            (&a.subscription, None, "SUBSCRIPTION_NOT_FOUND")
        }
        "GET /api/v1/transaction/{id}" => (&a.transaction, None, "TRANSACTION_NOT_FOUND"),
        "DELETE /api/v1/webhook/{id}" | "GET /api/v1/webhook/{id}/deliveries" => {
            (&a.webhook, None, "WEBHOOK_NOT_FOUND")
        }
        "POST /api/v1/webhook/deliveries/{id}/resend" => {
            (&a.delivery, Some(json!({})), "DELIVERY_NOT_FOUND")
        }
        // NOT_TENANT_SCOPED: what they answer instead.
        "GET /api/v1/files/{id}/content" => (&a.file, None, "FILE_URL_INVALID"),
        "GET /api/v1/pix-keys/{key}/check" => (&a.pix_key, None, ""),
        "PATCH /api/v1/account-register/{id}" => (&a.account, Some(json!({})), "ENDPOINT_REMOVED"),
        _ => return None,
    };
    let query = if route.ends_with("/payment-book") {
        // The last month a payment book may reach: the end of next year.
        let year = (time::OffsetDateTime::now_utc() - time::Duration::hours(3)).year() + 1;
        format!("?month=12&year={year}")
    } else {
        String::new()
    };
    Some(Probe {
        ids,
        query,
        body,
        code,
    })
}

/// The template's path with its one parameter replaced by `id`.
fn with_id(template: &str, id: &str) -> String {
    let (head, rest) = template.split_once('{').unwrap();
    let tail = rest.split_once('}').unwrap().1;
    assert!(!tail.contains('{'), "{template}: one parameter expected");
    format!("{head}{}{tail}", urlencode(id))
}

/// What A reads of its own resources: every answer must be 200 (the ids are real) and
/// the same after B's calls as before (nothing of A's changed), and the rows of every
/// table that holds a resource.
async fn their_state(app: &TestApp, a: &Theirs) -> Vec<(String, Value)> {
    let of_campaign = [
        format!("/api/v1/account/{}", a.account[0]),
        format!("/api/v1/charge/{}", a.paid_charge[0]),
        format!("/api/v1/charge/{}", a.active_charge[0]),
        format!("/api/v1/charge/{}/refund", a.paid_charge[0]),
        "/api/v1/charge".into(),
        format!("/api/v1/customer/{}", a.customer[0]),
        format!("/api/v1/dispute/{}", a.dispute[0]),
        "/api/v1/pix-keys".into(),
        format!("/api/v1/qrcode-static/{}", a.qr_code[0]),
        format!("/api/v1/refund/{}", a.refund[0]),
        format!("/api/v1/subscriptions/{}", a.subscription[0]),
        format!("/api/v1/subscriptions/{}/installments", a.subscription[0]),
        format!("/api/v1/transaction/{}", a.transaction[0]),
        "/api/v1/statement".into(),
    ];
    let of_master = [
        format!("/api/v1/account/{}", a.account[1]),
        format!("/api/v1/files/{}", a.file[0]),
        "/api/v1/plugins".into(),
        format!("/api/v1/plugins/{}/invocations", a.plugin[0]),
        "/api/v1/webhook".into(),
        format!("/api/v1/webhook/{}/deliveries", a.webhook[0]),
    ];
    let mut state = Vec::new();
    for (app_id, url) in of_campaign
        .iter()
        .map(|u| (&a.campaign, u))
        .chain(of_master.iter().map(|u| (&a.master, u)))
    {
        let mut body = json(app.get(url, Some(app_id)).await, 200).await;
        // A file comes with a new signed link on every read.
        body.as_object_mut().unwrap().remove("url");
        state.push((url.clone(), body));
    }
    for table in [
        "accounts",
        "pix_keys",
        "withdraw_keys",
        "ledger_transactions",
        "ledger_postings",
        "customers",
        "charges",
        "static_qr_codes",
        "webhooks",
        "events",
        "deliveries",
        "delivery_attempts",
        "plugins",
        "plugin_invocations",
        "files",
        "disputes",
        "dispute_evidence",
        "subscriptions",
        "subscription_instalments",
    ] {
        state.push((format!("rows of {table}"), json!(app.count(table).await)));
    }
    state
}

/// The ids of `list` (at `field`), to show that A's resources without a GET by id exist.
fn named(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item[field].as_str().unwrap().to_owned())
        .collect()
}

/// The matrix's other dimension: a valid AppID of company B, holding every scope, with
/// an id of company A's on every parameterised route answers 404 and the resource's
/// code, on every form of the id, before its body is looked at; and A's resources are
/// exactly as they were afterwards.
async fn another_companys_ids_are_not_found_on_every_route(db: Db) {
    let app = spawn_app_with(db, |s| s.webhooks.workers = 0).await;
    let company_a = app.company(0, true).await;
    let a = their_resources(&app, &company_a).await;
    let company_b = app.company(1, true).await;
    let b_master = app.master(&company_b).await;
    let (b_account, b_campaign) = app
        .funded_campaign(&b_master, "doe@empresa1.com.br", 1000)
        .await;
    let b = Ours {
        master: b_master,
        campaign: b_campaign,
        account: b_account,
    };
    // MASTER_APP_READ_ANY_ACCOUNT reaches the company's other accounts, never another
    // company's; B has it off, so no 403 FEATURE_DISABLED can stand in for the 404.
    let b_company = app.services.companies.get(&company_b.id).await.unwrap();
    assert!(!b_company.has(cofre_server::service::features::Feature::MasterAppReadAnyAccount));

    // Keys, plugins, webhooks and deliveries have no GET by id: A's lists name them.
    let keys = json(app.list_pix_keys(&a.campaign).await, 200).await;
    assert!(named(&keys["pixKeys"], "key").contains(&a.pix_key[0]));
    let plugins = json(app.get("/api/v1/plugins", Some(&a.master)).await, 200).await;
    assert!(named(&plugins["plugins"], "id").contains(&a.plugin[0]));
    let webhooks = json(app.get("/api/v1/webhook", Some(&a.master)).await, 200).await;
    assert!(named(&webhooks["webhooks"], "id").contains(&a.webhook[0]));
    let deliveries = format!("/api/v1/webhook/{}/deliveries", a.webhook[0]);
    let deliveries = json(app.get(&deliveries, Some(&a.master)).await, 200).await;
    assert!(named(&deliveries["deliveries"], "id").contains(&a.delivery[0]));
    let doc = json(app.get("/api/v1/openapi.json", None).await, 200).await;
    // Every form of every id is real: a GET route reads it for one of A's applications.
    for (path, item) in doc["paths"].as_object().unwrap() {
        let route = format!("GET {path}");
        if item.get("get").is_none() || NOT_TENANT_SCOPED.iter().any(|(r, ..)| *r == route) {
            continue;
        }
        let Some(probe) = probe(&route, &a, &b) else {
            continue;
        };
        for id in probe.ids {
            let url = format!("{}{}", with_id(path, id), probe.query);
            let mut statuses = Vec::new();
            for app_id in [&a.campaign, &a.master] {
                statuses.push(app.get(&url, Some(app_id)).await.status().as_u16());
                if statuses.contains(&200) {
                    break;
                }
            }
            assert!(statuses.contains(&200), "{url} for A: {statuses:?}");
        }
    }
    let before = their_state(&app, &a).await;

    let mut probed = 0;
    let mut excluded = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.contains('{') {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = method.to_ascii_uppercase().parse::<Method>() else {
                continue;
            };
            let route = format!("{method} {path}");
            let Some(probe) = probe(&route, &a, &b) else {
                panic!("route {route} has no cross-company fixture: add one to `probe`");
            };
            let status = match NOT_TENANT_SCOPED.iter().find(|(r, ..)| *r == route) {
                Some((_, status, _)) => {
                    excluded.push(route.clone());
                    *status
                }
                None => {
                    probed += 1;
                    404
                }
            };
            // Routes for applications bound to an account are also tried with B's.
            let mut callers = vec![("B's MASTER application", &b.master)];
            if op["security"][0].get("AppID").is_some() {
                callers.push(("B's campaign application", &b.campaign));
            }
            for id in probe.ids {
                let url = format!("{}{}", with_id(path, id), probe.query);
                for (who, app_id) in &callers {
                    let mut req = app.request(method.clone(), &url, Some(app_id));
                    if let Some(body) = &probe.body {
                        let body = body
                            .to_string()
                            .replace(&json!(ID).to_string(), &json!(id).to_string());
                        req = req.header("content-type", "application/json").body(body);
                    }
                    let who = format!("{who} with A's {id}");
                    expect(req.send().await.unwrap(), status, probe.code, &route, &who).await;
                }
            }
        }
    }
    excluded.sort();
    let mut listed: Vec<&str> = NOT_TENANT_SCOPED.iter().map(|(r, ..)| *r).collect();
    listed.sort();
    assert_eq!(
        excluded, listed,
        "NOT_TENANT_SCOPED names a route that is gone"
    );
    assert!(probed >= 30, "only {probed} routes were probed");

    let after = their_state(&app, &a).await;
    for ((what, was), (_, is)) in before.iter().zip(&after) {
        assert_eq!(was, is, "{what} changed after B's calls");
    }
    assert_eq!(app.ledger_violations().await, Vec::<String>::new());
}
db_test!(another_companys_ids_are_not_found_on_every_route);
