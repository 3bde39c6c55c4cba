//! The authorisation matrix, generated from the router's own OpenAPI document (not a
//! hand-kept list): every `/api/v1` route against every kind of caller that must be
//! refused answers exactly the status and `code` of CONTRACT.md, in its order
//! (401 -> 403 MASTER -> 403 scope). A new route that declares no scope fails here
//! unless it is added, on purpose, to the short lists below.

use reqwest::Method;
use serde_json::Value;

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
