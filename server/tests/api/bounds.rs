//! Resource bounds (issue 10): bodies, JSON depth, header counts, multipart parts and
//! list limits are bounded, each with a clear 4xx and nothing saved.

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn oversized_and_hostile_requests_get_a_clear_4xx(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;

    // A JSON body past `server.max_body_bytes` (1 MiB).
    let comment = "x".repeat(1024 * 1024 + 1);
    assert_error(
        app.post(
            "/api/v1/charge",
            Some(&campaign),
            json!({"correlationID": "big", "value": 100, "comment": comment}),
        )
        .await,
        413,
        "PAYLOAD_TOO_LARGE",
    )
    .await;

    // JSON nested far deeper than any request needs: refused, no stack overflow. Where
    // the field is typed, the first wrong level is named; where it takes any JSON
    // (webhook headers), serde_json's recursion limit ends it.
    let deep = format!(
        "{{\"correlationID\": \"deep\", \"value\": 100, \"additionalInfo\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let body = assert_error(
        app.request(reqwest::Method::POST, "/api/v1/charge", Some(&campaign))
            .header("content-type", "application/json")
            .body(deep)
            .send()
            .await
            .unwrap(),
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "additionalInfo[0][0]");
    let nested = format!(
        "{{\"webhook\": {{\"name\": \"h\", \"event\": \"OPENPIX:CHARGE_CREATED\", \
         \"url\": \"https://hooks.example/x\", \"headers\": {{\"x\": {}1{}}}}}}}",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert_error(
        app.request(reqwest::Method::POST, "/api/v1/webhook", Some(&master))
            .header("content-type", "application/json")
            .body(nested)
            .send()
            .await
            .unwrap(),
        400,
        "INVALID_JSON",
    )
    .await;
    assert_eq!(app.count("charges").await, 0, "nothing saved");
    assert_eq!(app.count("webhooks").await, 0, "nothing saved");

    // Too many headers: the HTTP layer refuses before any handler runs.
    let mut request = app.request(reqwest::Method::GET, "/api/v1/charge", Some(&campaign));
    for i in 0..200 {
        request = request.header(format!("x-filler-{i}"), "y");
    }
    let status = request.send().await.map(|r| r.status().as_u16());
    assert!(matches!(status, Ok(431)), "200 headers answered {status:?}");

    // List limits: at most 100 per page on every list.
    for path in [
        "/api/v1/charge?limit=101",
        "/api/v1/dispute?limit=101",
        "/api/v1/subscriptions?limit=101",
        "/api/v1/statement?limit=1000000",
        "/api/v1/customer?limit=0",
        "/api/v1/webhook?skip=-1",
    ] {
        let body = assert_error(app.get(path, Some(&master)).await, 400, "VALIDATION_ERROR").await;
        let field = body["details"][0]["field"].as_str().unwrap();
        assert!(field == "limit" || field == "skip", "{path}: {body}");
    }
    let page = json(
        app.get("/api/v1/charge?limit=100", Some(&campaign)).await,
        200,
    )
    .await;
    assert_eq!(page["pageInfo"]["limit"], 100);

    // Multipart: at most 8 parts.
    let mut form = reqwest::multipart::Form::new().text("purpose", "KYC_DOCUMENT");
    for _ in 0..8 {
        form = form.text("correlationID", "c");
    }
    assert_error(
        app.request(reqwest::Method::POST, "/api/v1/files", Some(&master))
            .multipart(form)
            .send()
            .await
            .unwrap(),
        400,
        "MULTIPART_INVALID",
    )
    .await;
    assert_eq!(app.count("files").await, 0);
}
db_test!(oversized_and_hostile_requests_get_a_clear_4xx);

/// Slow-loris: a connection that never finishes its headers, or idles after a request,
/// is closed after `server.header_read_timeout_ms`, while other clients are served.
async fn slow_connections_are_closed(db: Db) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let app = spawn_app_with(db, |s| s.server.header_read_timeout_ms = 300).await;
    let addr = app.base.trim_start_matches("http://").to_owned();

    // Headers started, never finished.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: cofre\r\nX-Slow: ")
        .await
        .unwrap();
    // An idle keep-alive connection after one answered request.
    let mut idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: cofre\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 12];
    idle.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");

    // Others are served meanwhile.
    assert_eq!(app.get("/healthz", None).await.status(), 200);

    // Both are closed by the server: reads reach the end of the stream (after any
    // answer it chose to send), well before the generous bound.
    for (name, stream) in [("slow", &mut slow), ("idle", &mut idle)] {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            stream.read_to_end(&mut rest),
        )
        .await;
        assert!(closed.is_ok(), "{name} connection still open after 30 s");
        let text = String::from_utf8_lossy(&rest);
        assert!(!text.contains("200 OK"), "{name}: {text}");
    }
}
db_test!(slow_connections_are_closed);
