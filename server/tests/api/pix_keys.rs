//! `/api/v1/pix-keys`: registering, listing, deleting keys and choosing the default.

use serde_json::json;

use crate::db_test;
use crate::helpers::*;

async fn keys_of_each_type_are_validated_and_normalised(db: Db) {
    let app = spawn_app(db).await;
    // Company 1 has an alphanumeric CNPJ.
    let company = app.company(1, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.campaign(&master).await;

    let email = json(
        app.create_pix_key(&campaign, "EMAIL", " Caixa@Loja.COM ")
            .await,
        201,
    )
    .await;
    assert_eq!(email["pixKey"]["key"], "caixa@loja.com");
    assert_eq!(email["pixKey"]["isDefault"], true);
    let phone = json(
        app.create_pix_key(&campaign, "PHONE", "(11) 98765-4321")
            .await,
        201,
    )
    .await;
    assert_eq!(phone["pixKey"]["key"], "+5511987654321");
    let evp = json(
        app.create_pix_key(&campaign, "EVP", "00000000-0000-4000-8000-000000000000")
            .await,
        201,
    )
    .await;
    let evp_key = evp["pixKey"]["key"].as_str().unwrap();
    assert_ne!(
        evp_key, "00000000-0000-4000-8000-000000000000",
        "EVP is generated, never taken"
    );
    assert_eq!(uuid::Uuid::parse_str(evp_key).unwrap().get_version_num(), 4);
    let cnpj = json(
        app.create_pix_key(&campaign, "CNPJ", "12.abc.345/01de-35")
            .await,
        201,
    )
    .await;
    assert_eq!(cnpj["pixKey"]["key"], "12ABC34501DE35");
    assert_eq!(cnpj["pixKey"]["isDefault"], false);

    assert_error(
        app.create_pix_key(&campaign, "CPF", "111.444.777-35").await,
        400,
        "PIX_KEY_NOT_HOLDERS",
    )
    .await;
    assert_error(
        app.create_pix_key(&campaign, "CNPJ", "11.222.333/0001-81")
            .await,
        400,
        "PIX_KEY_NOT_HOLDERS",
    )
    .await;
    assert_error(
        app.create_pix_key(&campaign, "EMAIL", "not-an-email").await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    assert_error(
        app.create_pix_key(&campaign, "PHONE", "12").await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    let body = assert_error(
        app.create_pix_key(&campaign, "TWITTER", "@cofre").await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "type");
    let body = assert_error(
        app.post(
            "/api/v1/pix-keys",
            Some(&campaign),
            json!({"pixKey": "a@b.com"}),
        )
        .await,
        400,
        "VALIDATION_ERROR",
    )
    .await;
    assert_eq!(body["details"][0]["field"], "type");

    let listed = json(app.list_pix_keys(&campaign).await, 200).await;
    let keys: Vec<&str> = listed["pixKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "caixa@loja.com",
            "+5511987654321",
            evp_key,
            "12ABC34501DE35"
        ]
    );
    assert_eq!(listed["pageInfo"]["totalCount"], 4);
}
db_test!(keys_of_each_type_are_validated_and_normalised);

async fn a_key_is_unique_in_the_whole_directory(db: Db) {
    let app = spawn_app(db).await;
    app.directory(&[("externa@banco.com", "EMAIL", "111.444.777-35")])
        .await;
    let ours = app.company(0, true).await;
    let theirs = app.company(1, true).await;
    let our_master = app.master(&ours).await;
    let their_master = app.master(&theirs).await;
    json(
        app.create_pix_key(&our_master, "EMAIL", "unica@empresa.com")
            .await,
        201,
    )
    .await;
    assert_error(
        app.create_pix_key(&their_master, "EMAIL", "UNICA@empresa.com")
            .await,
        409,
        "PIX_KEY_ALREADY_EXISTS",
    )
    .await;
    assert_error(
        app.create_pix_key(&our_master, "EMAIL", "unica@empresa.com")
            .await,
        409,
        "PIX_KEY_ALREADY_EXISTS",
    )
    .await;
    assert_error(
        app.create_pix_key(&their_master, "EMAIL", "externa@banco.com")
            .await,
        409,
        "PIX_KEY_ALREADY_EXISTS",
    )
    .await;
    let theirs_listed = json(app.list_pix_keys(&their_master).await, 200).await;
    assert_eq!(theirs_listed["pixKeys"], json!([]));
}
db_test!(a_key_is_unique_in_the_whole_directory);

async fn an_account_holds_at_most_twenty_keys(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    for i in 0..20 {
        json(
            app.create_pix_key(&master, "EMAIL", &format!("chave{i}@empresa.com"))
                .await,
            201,
        )
        .await;
    }
    assert_error(
        app.create_pix_key(&master, "EVP", "").await,
        409,
        "PIX_KEY_LIMIT_REACHED",
    )
    .await;
    let listed = json(app.list_pix_keys(&master).await, 200).await;
    assert_eq!(listed["pixKeys"].as_array().unwrap().len(), 20);
}
db_test!(an_account_holds_at_most_twenty_keys);

async fn the_default_key_moves_on_request_and_when_it_is_deleted(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    for key in ["a@empresa.com", "b@empresa.com", "c@empresa.com"] {
        json(app.create_pix_key(&master, "EMAIL", key).await, 201).await;
    }
    let chosen = json(
        app.put(
            "/api/v1/pix-keys/c@empresa.com/default",
            Some(&master),
            json!({}),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(chosen["pixKey"]["isDefault"], true);
    let defaults = |listed: serde_json::Value| -> Vec<String> {
        listed["pixKeys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["isDefault"] == true)
            .map(|k| k["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        defaults(json(app.list_pix_keys(&master).await, 200).await),
        ["c@empresa.com"]
    );
    assert_eq!(
        app.delete_pix_key(&master, "C@EMPRESA.COM").await.status(),
        204
    );
    assert_eq!(
        defaults(json(app.list_pix_keys(&master).await, 200).await),
        ["a@empresa.com"]
    );
    assert_error(
        app.delete_pix_key(&master, "c@empresa.com").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    assert_error(
        app.put(
            "/api/v1/pix-keys/nada@empresa.com/default",
            Some(&master),
            json!({}),
        )
        .await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
}
db_test!(the_default_key_moves_on_request_and_when_it_is_deleted);

async fn keys_are_managed_with_the_accounts_own_app_id(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, first) = app.campaign(&master).await;
    let (_, second) = app.campaign(&master).await;
    json(
        app.create_pix_key(&first, "EMAIL", "primeira@empresa.com")
            .await,
        201,
    )
    .await;
    assert_error(
        app.delete_pix_key(&second, "primeira@empresa.com").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    // Not even the MASTER deletes a campaign's key with its own AppID.
    assert_error(
        app.delete_pix_key(&master, "primeira@empresa.com").await,
        404,
        "PIX_KEY_NOT_FOUND",
    )
    .await;
    let listed = json(app.list_pix_keys(&second).await, 200).await;
    assert_eq!(listed["pixKeys"], json!([]));
    assert_eq!(
        json(app.list_pix_keys(&first).await, 200).await["pixKeys"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
db_test!(keys_are_managed_with_the_accounts_own_app_id);

/// Found by the tax_id and pix_key fuzz targets (scripts/fuzz): a CNPJ of 14 bytes with
/// a multi-byte character across byte 12 panicked in the tax id reader (a 500), and an
/// email key took any Unicode and control characters.
async fn keys_with_characters_outside_their_type_are_refused(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let master = app.master(&company).await;
    let (_, campaign) = app.campaign(&master).await;
    for (kind, key) in [
        ("CNPJ", "0000000000\u{8a28}0"),
        ("CNPJ", "00000000000ş0"),
        ("CPF", "111.444.777-3ş"),
        ("EMAIL", "ℬf(:\u{0}@j.br"),
        ("EMAIL", "joão@empresa.com.br"),
        ("EMAIL", "caixa@empresa..com"),
    ] {
        assert_error(
            app.create_pix_key(&campaign, kind, key).await,
            400,
            "PIX_KEY_INVALID",
        )
        .await;
    }
    // Detected by shape on lookups: 14 bytes make it a CNPJ, which it is not.
    assert_error(
        app.check_key(&campaign, "0000000000\u{8a28}0").await,
        400,
        "PIX_KEY_INVALID",
    )
    .await;
    let listed = json(app.list_pix_keys(&campaign).await, 200).await;
    assert_eq!(listed["pixKeys"], json!([]), "nothing saved");
    assert_eq!(app.count("pix_keys").await, 0);
}
db_test!(keys_with_characters_outside_their_type_are_refused);
