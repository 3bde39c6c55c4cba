//! Subscriptions and the payment book (seed rule 5 and the 2026-09 change-log entry).

use cofre_server::service::boleto;
use serde_json::{Value, json};
use time::{Date, Month};

use crate::db_test;
use crate::helpers::*;

fn body(correlation_id: &str, charge_type: &str, day: i64) -> Value {
    json!({
        "correlationID": correlation_id,
        "value": 4990,
        "customer": {"name": "João Pagador", "taxID": "529.982.247-25", "email": "joao@example.com"},
        "frequency": "MONTHLY",
        "dayGenerateCharge": day,
        "dayDue": 5,
        "type": "RECURRENT",
        "chargeType": charge_type,
    })
}

/// Today in Brasília, as the service counts days.
fn today() -> Date {
    (time::OffsetDateTime::now_utc() - time::Duration::hours(3)).date()
}

/// How many MONTHLY instalments on day 1 are generated from today to the end of `year`/`month`.
fn monthly_on_day_one_until(year: i32, month: Month) -> usize {
    let t = today();
    let (mut y, mut m) = (t.year(), t.month());
    if t.day() != 1 {
        (y, m) = if m == Month::December {
            (y + 1, Month::January)
        } else {
            (y, m.next())
        };
    }
    let mut count = 0;
    while (y, u8::from(m)) <= (year, u8::from(month)) {
        count += 1;
        (y, m) = if m == Month::December {
            (y + 1, Month::January)
        } else {
            (y, m.next())
        };
    }
    count
}

async fn book(app: &TestApp, app_id: &str, id: &str, query: &str) -> reqwest::Response {
    app.get(
        &format!("/api/v1/subscriptions/{id}/payment-book{query}"),
        Some(app_id),
    )
    .await
}

fn pdf_pages_text(bytes: &[u8]) -> Vec<String> {
    let doc = lopdf::Document::load_mem(bytes).expect("the payment book parses as PDF");
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    pages
        .iter()
        .map(|p| doc.extract_text(&[*p]).expect("text of a page"))
        .collect()
}

async fn a_subscription_is_created_once_and_issues_nothing_at_creation(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let created = json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("plano-1", "PIX", 10),
        )
        .await,
        201,
    )
    .await;
    let s = &created["subscription"];
    assert_eq!(s["status"], "ACTIVE");
    assert_eq!(s["frequency"], "MONTHLY");
    assert_eq!(s["type"], "RECURRENT");
    assert_eq!(s["chargeType"], "PIX");
    assert_eq!(s["customer"]["taxID"], "52998224725");
    assert_eq!(app.count("charges").await, 0, "never a charge at creation");
    let id = s["id"].as_str().unwrap().to_owned();
    let global = s["globalID"].as_str().unwrap().to_owned();

    let again = json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("plano-1", "PIX", 10),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(again["subscription"]["id"], id.as_str());
    assert_error(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("plano-1", "BOLETO", 10),
        )
        .await,
        409,
        "CORRELATION_ID_CONFLICT",
    )
    .await;
    assert_eq!(app.count("subscriptions").await, 1);

    for any in [&id, &global] {
        let got = json(
            app.get(&format!("/api/v1/subscriptions/{any}"), Some(&campaign))
                .await,
            200,
        )
        .await;
        assert_eq!(got["subscription"]["id"], id.as_str());
    }
    let list = json(app.get("/api/v1/subscriptions", Some(&master)).await, 200).await;
    assert_eq!(list["pageInfo"]["totalCount"], 1);
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    assert_error(
        app.get(&format!("/api/v1/subscriptions/{id}"), Some(&other_master))
            .await,
        404,
        "SUBSCRIPTION_NOT_FOUND",
    )
    .await;

    // Every field is checked.
    for (change, field) in [
        (json!({"frequency": "DAILY"}), "frequency"),
        (json!({"dayGenerateCharge": 0}), "dayGenerateCharge"),
        (json!({"dayGenerateCharge": 32}), "dayGenerateCharge"),
        (json!({"dayDue": 2}), "dayDue"),
        (json!({"type": "PIX_AUTOMATIC"}), "type"),
        (json!({"type": null}), "type"),
        (json!({"chargeType": "CARD"}), "chargeType"),
        (json!({"value": 0}), "value"),
        (json!({"customer": {"name": "Sem CPF"}}), "customer.taxID"),
        (json!({"customer": null}), "customer"),
    ] {
        let mut b = body("plano-x", "PIX", 10);
        for (k, v) in change.as_object().unwrap() {
            b[k] = v.clone();
        }
        let error = assert_error(
            app.post("/api/v1/subscriptions", Some(&campaign), b).await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(error["details"][0]["field"], field, "{error}");
    }
    assert_eq!(app.count("subscriptions").await, 1);
}
db_test!(a_subscription_is_created_once_and_issues_nothing_at_creation);

async fn the_boleto_payment_book_issues_each_instalment_once(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let created = json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("carne-1", "BOLETO", 1),
        )
        .await,
        201,
    )
    .await;
    let id = created["subscription"]["id"].as_str().unwrap().to_owned();
    let next_year = today().year() + 1;
    let query = format!("?month=12&year={next_year}");
    let expected = monthly_on_day_one_until(next_year, Month::December);

    let response = book(&app, &campaign, &id, &query).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    let pdf = response.bytes().await.unwrap();
    let pages = pdf_pages_text(&pdf);
    assert_eq!(pages.len(), expected, "one page per instalment");
    assert_eq!(app.count("charges").await as usize, expected);

    // Every instalment has a registered boleto whose typed line is on its page.
    let listed = json(
        app.get(
            &format!("/api/v1/subscriptions/{id}/installments?limit=100"),
            Some(&campaign),
        )
        .await,
        200,
    )
    .await;
    let installments = listed["installments"].as_array().unwrap();
    for (page, item) in pages.iter().zip(installments) {
        assert_eq!(item["status"], "ACTIVE", "{item}");
        let line = item["boleto"]["digitableLine"].as_str().unwrap();
        let barcode = item["boleto"]["barcode"].as_str().unwrap();
        assert_eq!(line.len(), 47);
        assert_eq!(boleto::barcode_from_typed_line(line).unwrap(), barcode);
        assert_eq!(&barcode[9..19], "0000004990", "the value is in the barcode");
        let due = Date::parse(
            item["dueDate"].as_str().unwrap(),
            time::macros::format_description!("[year]-[month]-[day]"),
        )
        .unwrap();
        assert_eq!(
            barcode[5..9].parse::<u16>().unwrap(),
            boleto::due_date_factor(due).unwrap()
        );
        let printed = boleto::format_typed_line(line);
        let text: String = page.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&printed) || page.contains(line),
            "page text lacks {printed}: {text}"
        );
        assert!(text.contains("João Pagador"), "{text}");
    }
    assert_eq!(
        installments.len(),
        expected,
        "the schedule runs to the end of next year"
    );

    // Repeating the call, and 10 concurrent calls, create no extra charge.
    assert_eq!(book(&app, &campaign, &id, &query).await.status(), 200);
    let concurrent =
        futures_util::future::join_all((0..10).map(|_| book(&app, &campaign, &id, &query))).await;
    for r in concurrent {
        assert_eq!(r.status(), 200);
    }
    assert_eq!(app.count("charges").await as usize, expected);
    assert_eq!(
        app.count("subscription_instalments").await as usize,
        expected
    );
}
db_test!(the_boleto_payment_book_issues_each_instalment_once);

async fn payment_book_refusals(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let created = json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("pix-1", "PIX", 28),
        )
        .await,
        201,
    )
    .await;
    let id = created["subscription"]["id"].as_str().unwrap().to_owned();
    let year = today().year();
    for (query, field) in [
        (String::new(), "month"),
        (format!("?year={year}"), "month"),
        ("?month=5".to_owned(), "year"),
        (format!("?month=13&year={year}"), "month"),
        (format!("?month=0&year={year}"), "month"),
        (format!("?month=1&year={}", year + 2), "year"),
        ("?month=1&year=1999".to_owned(), "year"),
    ] {
        let error = assert_error(
            book(&app, &campaign, &id, &query).await,
            400,
            "VALIDATION_ERROR",
        )
        .await;
        assert_eq!(error["details"][0]["field"], field, "{query}: {error}");
    }
    assert_error(
        book(&app, &campaign, &id, "?month=abc&year=2027").await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    // A month before the first instalment has nothing to issue.
    assert_error(
        book(&app, &campaign, &id, &format!("?month=1&year={}", year - 1)).await,
        400,
        "PAYMENT_BOOK_EMPTY",
    )
    .await;
    assert_eq!(app.count("charges").await, 0);

    // The scope, and another company's subscription.
    let limited = app
        .application(&company, "MASTER", &["SUBSCRIPTION_GET"], &[])
        .await;
    assert_error(
        book(&app, &limited, &id, &format!("?month=12&year={year}")).await,
        403,
        "SCOPE_MISSING",
    )
    .await;
    let other = app.company(1, true).await;
    let other_master = app.master(&other).await;
    for query in [format!("?month=12&year={year}"), "?month=13".to_owned()] {
        assert_error(
            book(&app, &other_master, &id, &query).await,
            404,
            "SUBSCRIPTION_NOT_FOUND",
        )
        .await;
    }

    // A PIX book: one page per instalment with its BR Code; then cancel.
    let next = year + 1;
    let response = book(&app, &campaign, &id, &format!("?month=3&year={next}")).await;
    assert_eq!(response.status(), 200);
    let pages = pdf_pages_text(&response.bytes().await.unwrap());
    let charges = app.count("charges").await as usize;
    assert_eq!(pages.len(), charges);
    let listed = json(
        app.get(
            &format!("/api/v1/subscriptions/{id}/installments"),
            Some(&campaign),
        )
        .await,
        200,
    )
    .await;
    let br_code = listed["installments"][0]["brCode"].as_str().unwrap();
    // The code (which has spaces of its own) is printed over several lines.
    let joined: String = pages[0].lines().collect();
    assert!(
        joined.contains(br_code),
        "the BR Code is on the page: {joined}"
    );

    let canceled = json(
        app.put(
            &format!("/api/v1/subscriptions/{id}/cancel"),
            Some(&campaign),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(canceled["subscription"]["status"], "CANCELED");
    assert_error(
        app.put(
            &format!("/api/v1/subscriptions/{id}/cancel"),
            Some(&campaign),
            json!({}),
        )
        .await,
        409,
        "SUBSCRIPTION_CANCELED",
    )
    .await;
    assert_error(
        book(&app, &campaign, &id, &format!("?month=12&year={next}")).await,
        409,
        "SUBSCRIPTION_CANCELED",
    )
    .await;
    assert_eq!(app.count("charges").await as usize, charges);
}
db_test!(payment_book_refusals);

async fn instalments_are_issued_on_their_generation_day(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app
        .funded_campaign(&master, "loja@empresa0.com.br", 0)
        .await;
    let day = i64::from(today().day());
    json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("hoje", "PIX", day),
        )
        .await,
        201,
    )
    .await;
    // Another one, generated on another day of the month, issues nothing today.
    let later = if day == 28 { 27 } else { 28 };
    json(
        app.post(
            "/api/v1/subscriptions",
            Some(&campaign),
            body("depois", "PIX", later),
        )
        .await,
        201,
    )
    .await;
    // An account without a Pix key cannot be charged; it must not hold up the others.
    let (_, keyless) = app.campaign(&master).await;
    json(
        app.post(
            "/api/v1/subscriptions",
            Some(&keyless),
            body("sem-chave", "PIX", day),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(app.count("charges").await, 0);
    app.services.subscriptions.generate_due().await.unwrap();
    assert_eq!(
        app.count("charges").await,
        1,
        "today's instalment was issued"
    );
    app.services.subscriptions.generate_due().await.unwrap();
    assert_eq!(app.count("charges").await, 1, "once");
    let listed = json(app.get("/api/v1/charge", Some(&campaign)).await, 200).await;
    assert!(
        listed["charges"][0]["correlationID"]
            .as_str()
            .unwrap()
            .starts_with("subscription:")
    );
}
db_test!(instalments_are_issued_on_their_generation_day);
