//! `POST /api/v1/files`, `GET /api/v1/files/{id}` and the signed download links.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::db_test;
use crate::helpers::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn upload_is_stored_with_its_hash_and_a_working_link(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let bytes = pdf();
    let body = json(
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("../../etc/recibo.pdf", bytes.clone())),
            None,
        )
        .await,
        201,
    )
    .await;
    let file = &body["file"];
    assert_eq!(file["purpose"], "DISPUTE_EVIDENCE");
    assert_eq!(file["contentType"], "application/pdf");
    assert_eq!(file["name"], "recibo.pdf", "path parts are dropped");
    assert_eq!(file["size"], bytes.len() as i64);
    assert_eq!(file["sha256"], hex(&Sha256::digest(&bytes)));
    let id = file["id"].as_str().unwrap();
    assert_eq!(app.count("files").await, 1);
    assert_eq!(app.stored_objects(), 1);

    let url = body["url"].as_str().unwrap();
    assert!(url.starts_with(&app.base), "{url}");
    let download = app.client.get(url).send().await.unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(download.headers()["content-type"], "application/pdf");
    assert_eq!(download.headers()["x-content-type-options"], "nosniff");
    assert_eq!(download.bytes().await.unwrap().as_ref(), bytes.as_slice());

    // PNG and JPEG are recognised too, whatever the declared type says.
    for (name, bytes, kind) in [
        ("a.pdf", png(), "image/png"),
        ("b.pdf", jpeg(), "image/jpeg"),
    ] {
        let body = json(
            app.upload(&master, Some("KYC_DOCUMENT"), Some((name, bytes)), None)
                .await,
            201,
        )
        .await;
        assert_eq!(body["file"]["contentType"], kind);
    }

    // A new link for a file of the company; another company gets 404.
    let again = json(
        app.get(&format!("/api/v1/files/{id}"), Some(&master)).await,
        200,
    )
    .await;
    assert_eq!(again["file"]["id"], id);
    assert!(again["url"].as_str().unwrap().contains("signature="));
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    assert_error(
        app.get(&format!("/api/v1/files/{id}"), Some(&other_master))
            .await,
        404,
        "FILE_NOT_FOUND",
    )
    .await;
}
db_test!(upload_is_stored_with_its_hash_and_a_working_link);

async fn a_repeated_correlation_id_answers_the_first_upload(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let first = json(
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("a.pdf", pdf())),
            Some("doc-1"),
        )
        .await,
        201,
    )
    .await;
    let second = json(
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("a.pdf", pdf())),
            Some("doc-1"),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(first["file"]["id"], second["file"]["id"]);
    assert_error(
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("b.png", png())),
            Some("doc-1"),
        )
        .await,
        409,
        "CORRELATION_ID_CONFLICT",
    )
    .await;
    assert_error(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("a.pdf", pdf())),
            Some("doc-1"),
        )
        .await,
        409,
        "CORRELATION_ID_CONFLICT",
    )
    .await;
    assert_eq!(app.count("files").await, 1);
    assert_eq!(app.stored_objects(), 1, "repeats leave no bytes behind");
}
db_test!(a_repeated_correlation_id_answers_the_first_upload);

async fn unreadable_content_and_bad_forms_are_refused_and_leave_nothing(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.extend(std::iter::repeat_n(0u8, 4096));
    let mut windows_exe = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00".to_vec();
    windows_exe.extend(std::iter::repeat_n(0u8, 4096));
    let whole = pdf();
    let truncated_pdf = whole[..whole.len() - 8].to_vec();
    let truncated_png = png()[..20].to_vec();
    for (name, bytes) in [
        ("renamed-elf.pdf", elf),
        ("setup.pdf", windows_exe),
        ("cut.pdf", truncated_pdf),
        ("cut.png", truncated_png),
        ("empty.pdf", Vec::new()),
        ("notes.pdf", b"just some text\n".to_vec()),
    ] {
        let body = assert_error(
            app.upload(&master, Some("DISPUTE_EVIDENCE"), Some((name, bytes)), None)
                .await,
            422,
            "FILE_UNREADABLE",
        )
        .await;
        assert!(body.get("errorCode").is_none());
    }

    let body = assert_error(
        app.upload(&master, None, Some(("a.pdf", pdf())), None)
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "purpose");
    let body = assert_error(
        app.upload(&master, Some("SELFIE"), Some(("a.pdf", pdf())), None)
            .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "purpose");
    let body = assert_error(
        app.upload(&master, Some("KYC_DOCUMENT"), None, None).await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "file");
    let long = "x".repeat(101);
    let body = assert_error(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("a.pdf", pdf())),
            Some(&long),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "correlationID");

    // Not multipart at all; an unknown part; too many parts.
    assert_error(
        app.post(
            "/api/v1/files",
            Some(&master),
            json!({"purpose": "KYC_DOCUMENT"}),
        )
        .await,
        415,
        "MULTIPART_REQUIRED",
    )
    .await;
    let form = reqwest::multipart::Form::new()
        .text("purpose", "KYC_DOCUMENT")
        .text("comment", "hello")
        .part(
            "file",
            reqwest::multipart::Part::bytes(pdf()).file_name("a.pdf"),
        );
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
    let form = reqwest::multipart::Form::new()
        .text("purpose", "KYC_DOCUMENT")
        .part(
            "file",
            reqwest::multipart::Part::bytes(pdf()).file_name("a.pdf"),
        )
        .part(
            "file",
            reqwest::multipart::Part::bytes(pdf()).file_name("b.pdf"),
        );
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

    // The scope: an application limited to other scopes gets 403 before anything else.
    let no_scope = app
        .application(&company, "MASTER", &["ACCOUNT_GET"], &[])
        .await;
    assert_error(
        app.upload(
            &no_scope,
            Some("KYC_DOCUMENT"),
            Some(("a.pdf", pdf())),
            None,
        )
        .await,
        403,
        "SCOPE_MISSING",
    )
    .await;
    assert_error(
        app.upload(
            "not-an-app-id",
            Some("KYC_DOCUMENT"),
            Some(("a.pdf", pdf())),
            None,
        )
        .await,
        401,
        "APP_ID_INVALID",
    )
    .await;

    assert_eq!(app.count("files").await, 0);
    assert_eq!(app.stored_objects(), 0, "refused uploads leave no bytes");
}
db_test!(unreadable_content_and_bad_forms_are_refused_and_leave_nothing);

async fn the_size_limit_is_exact(db: Db) {
    let app = spawn_app_with(db, |s| s.files.max_bytes = 1_000).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let sized = |size: usize| {
        let mut bytes = b"%PDF-1.4\n".to_vec();
        let end = b"\n%%EOF\n";
        bytes.extend(std::iter::repeat_n(b' ', size - bytes.len() - end.len()));
        bytes.extend_from_slice(end);
        assert_eq!(bytes.len(), size);
        bytes
    };
    json(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("a.pdf", sized(1_000))),
            None,
        )
        .await,
        201,
    )
    .await;
    let body = assert_error(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("b.pdf", sized(1_001))),
            None,
        )
        .await,
        413,
        "FILE_TOO_LARGE",
    )
    .await;
    assert!(body["error"].as_str().unwrap().contains("1000"), "{body}");
    assert_eq!(app.count("files").await, 1);
    assert_eq!(app.stored_objects(), 1);
}
db_test!(the_size_limit_is_exact);

/// A size line of `/proc/self/status` (`VmHWM`: peak resident memory since the last
/// reset; `VmRSS`: resident now), in bytes.
fn memory(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

fn peak_rss() -> u64 {
    memory("VmHWM:")
}

/// Resets the peak (Linux `clear_refs` 5) and answers the resident size now.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    memory("VmRSS:")
}

/// Sends a multipart upload of `size` bytes over a raw connection, 64 KiB at a time,
/// so that the client never holds the file either. Answers the status and JSON body.
async fn stream_upload(app: &TestApp, app_id: &str, size: usize) -> (u16, Value) {
    let boundary = "cofre-test-boundary";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nDISPUTE_EVIDENCE\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\n\
         Content-Type: application/pdf\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let length = head.len() + size + tail.len();
    let addr = app.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /api/v1/files HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {app_id}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n\
         Connection: close\r\n\r\n{head}%PDF-1.4\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 64 * 1024];
    let mut left = size - "%PDF-1.4\n".len();
    // The server answers once it has read what it drains; a write error after the
    // answer started is not a failure of the test.
    while left > 0 {
        let n = left.min(chunk.len());
        if stream.write_all(&chunk[..n]).await.is_err() {
            break;
        }
        left -= n;
    }
    let _ = stream.write_all(tail.as_bytes()).await;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (
        status,
        serde_json::from_str(body.trim()).unwrap_or(Value::Null),
    )
}

async fn an_11_mib_upload_is_refused_without_holding_it_in_memory(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    // Warm the connection pool and the upload path once with a small file.
    json(
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("a.pdf", pdf())),
            None,
        )
        .await,
        201,
    )
    .await;

    let before = reset_peak();
    let (status, body) = stream_upload(&app, &master, 11 * 1024 * 1024).await;
    let growth = peak_rss().saturating_sub(before);
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], "FILE_TOO_LARGE");
    assert_eq!(app.count("files").await, 1);
    assert_eq!(app.stored_objects(), 1, "the partial upload was removed");

    // The same measurement sees an 11 MiB buffer, so a server that buffered the
    // upload could not pass.
    let before_control = reset_peak();
    let buffer = vec![1u8; 11 * 1024 * 1024];
    let control = peak_rss().saturating_sub(before_control);
    assert_eq!(
        buffer.iter().map(|&b| b as usize).sum::<usize>(),
        buffer.len()
    );
    drop(buffer);
    eprintln!("peak RSS growth: 11 MiB upload {growth} bytes, 11 MiB buffer {control} bytes");
    assert!(control >= 10 * 1024 * 1024, "control measured {control}");
    assert!(
        growth < 6 * 1024 * 1024,
        "the server held {growth} bytes more while refusing an 11 MiB upload"
    );
}
db_test!(an_11_mib_upload_is_refused_without_holding_it_in_memory);

async fn download_links_expire_and_cannot_be_changed(db: Db) {
    let secret = "test-link-secret";
    let app = spawn_app_with(db, |s| s.files.url_secret = Some(secret.into())).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let first = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    let second = app.uploaded(&master, "DISPUTE_EVIDENCE").await;
    let link = |id: &str, expires: i64| {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(format!("{id}.{expires}").as_bytes());
        let signature = hex(&mac.finalize().into_bytes());
        format!("/api/v1/files/{id}/content?expires={expires}&signature={signature}")
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // A link signed like Cofre signs works until its expiry...
    let ok = app.get(&link(&first, now + 60), None).await;
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.bytes().await.unwrap().as_ref(), pdf().as_slice());
    // ...and never after it.
    assert_error(
        app.get(&link(&first, now - 1), None).await,
        403,
        "FILE_URL_EXPIRED",
    )
    .await;

    // The link the API answered, then each part of it changed.
    let body = json(
        app.get(&format!("/api/v1/files/{first}"), Some(&master))
            .await,
        200,
    )
    .await;
    let url = body["url"].as_str().unwrap().to_owned();
    assert_eq!(app.client.get(&url).send().await.unwrap().status(), 200);
    let expires: i64 = url
        .split("expires=")
        .nth(1)
        .and_then(|r| r.split('&').next())
        .and_then(|e| e.parse().ok())
        .unwrap();
    assert!(
        (expires - now - 15 * 60).abs() <= 5,
        "15 minutes by default"
    );
    let tampered = [
        url.replace(&first, &second),
        url.replace(
            &format!("expires={expires}"),
            &format!("expires={}", expires + 3600),
        ),
        {
            let (head, sig) = url.split_once("signature=").unwrap();
            let flipped = if sig.starts_with('0') { "1" } else { "0" };
            format!("{head}signature={flipped}{}", &sig[1..])
        },
        url.split("&signature=").next().unwrap().to_owned(),
        url.replace("signature=", "signature=zz"),
    ];
    for bad in tampered {
        let response = app.client.get(&bad).send().await.unwrap();
        assert_error(response, 403, "FILE_URL_INVALID").await;
    }
}
db_test!(download_links_expire_and_cannot_be_changed);

/// The local S3-compatible server of the tests (`scripts/s3` starts moto).
fn s3_endpoint() -> String {
    std::env::var("COFRE_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:9310".into())
}

/// The keys stored in `bucket`, from its listing.
async fn bucket_keys(app: &TestApp, bucket: &str) -> Vec<String> {
    let listing = app
        .client
        .get(format!("{}/{bucket}", s3_endpoint()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    listing
        .split("<Key>")
        .skip(1)
        .map(|k| k.split("</Key>").next().unwrap().to_owned())
        .collect()
}

async fn files_live_in_an_s3_compatible_bucket_by_config(db: Db) {
    let endpoint = s3_endpoint();
    let bucket = format!("cofre-{}", uuid::Uuid::new_v4().simple());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap_or_else(|e| {
            panic!("an S3-compatible server is required at {endpoint} (scripts/s3): {e}")
        });
    assert!(
        created.status().is_success(),
        "bucket {bucket}: {}",
        created.status()
    );
    let app = spawn_app_with(db, |s| {
        s.files.store = "s3".into();
        s.files.s3_bucket = Some(bucket.clone());
        s.files.s3_endpoint = Some(endpoint.clone());
        s.files.s3_region = Some("us-east-1".into());
        s.files.s3_allow_http = true;
        s.files.s3_access_key_id = Some("test".into());
        s.files.s3_secret_access_key = Some("test".into());
        s.files.max_bytes = 6 * 1024 * 1024;
    })
    .await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let body = json(
        app.upload(&master, Some("KYC_DOCUMENT"), Some(("rg.png", png())), None)
            .await,
        201,
    )
    .await;
    let id = body["file"]["id"].as_str().unwrap();
    assert_eq!(
        bucket_keys(&app, &bucket).await,
        [format!("{}/{id}", company.id)]
    );
    let download = app
        .client
        .get(body["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(download.bytes().await.unwrap().as_ref(), png().as_slice());

    // Larger than one 5 MiB part, and refusals that leave nothing in the bucket.
    let mut big = b"%PDF-1.4\n".to_vec();
    big.resize(5 * 1024 * 1024 + 300_000, b' ');
    big.extend_from_slice(b"\n%%EOF\n");
    let body = json(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("big.pdf", big.clone())),
            None,
        )
        .await,
        201,
    )
    .await;
    assert_eq!(body["file"]["size"], big.len());
    let download = app
        .client
        .get(body["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(download.bytes().await.unwrap().len(), big.len());
    assert_error(
        app.upload(
            &master,
            Some("KYC_DOCUMENT"),
            Some(("x.pdf", b"MZ\x90\x00".repeat(100))),
            None,
        )
        .await,
        422,
        "FILE_UNREADABLE",
    )
    .await;
    let (status, body) = stream_upload(&app, &master, 7 * 1024 * 1024).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (413, Some("FILE_TOO_LARGE"))
    );
    assert_eq!(bucket_keys(&app, &bucket).await.len(), 2);
    assert_eq!(app.count("files").await, 2);
}
db_test!(files_live_in_an_s3_compatible_bucket_by_config);

async fn concurrent_repeats_of_one_upload_store_it_once(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let answers = futures_util::future::join_all((0..8).map(|_| {
        app.upload(
            &master,
            Some("DISPUTE_EVIDENCE"),
            Some(("a.pdf", pdf())),
            Some("same"),
        )
    }))
    .await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 201]);
    let mut ids = Vec::new();
    for answer in answers {
        ids.push(answer.json::<Value>().await.unwrap()["file"]["id"].clone());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(app.count("files").await, 1);
    assert_eq!(app.stored_objects(), 1);
}
db_test!(concurrent_repeats_of_one_upload_store_it_once);
