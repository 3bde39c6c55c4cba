//! The console host: server-rendered pages and sign-in through a server fn with a
//! session stored in the database.

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
