//! Store-level checks that no endpoint shows directly, on both databases.

use cofre_server::store::sessions::SessionTable;
use tower_sessions::SessionStore;
use tower_sessions::session::{Id, Record};

use crate::db_test;
use crate::helpers::*;

async fn console_sessions_round_trip_and_expire(db: Db) {
    let app = spawn_app(db).await;
    let table = SessionTable::new(app.services.store.clone());
    let mut record = Record {
        id: Id::default(),
        data: [("user_id".to_owned(), serde_json::json!("usr_1"))]
            .into_iter()
            .collect(),
        expiry_date: time::OffsetDateTime::now_utc() + time::Duration::hours(1),
    };
    table.create(&mut record).await.unwrap();
    let loaded = table
        .load(&record.id)
        .await
        .unwrap()
        .expect("saved session loads");
    assert_eq!(loaded.data["user_id"], "usr_1");

    record
        .data
        .insert("user_id".into(), serde_json::json!("usr_2"));
    table.save(&record).await.unwrap();
    assert_eq!(
        table.load(&record.id).await.unwrap().unwrap().data["user_id"],
        "usr_2"
    );

    let mut expired = Record {
        id: Id::default(),
        data: Default::default(),
        expiry_date: time::OffsetDateTime::now_utc() - time::Duration::minutes(1),
    };
    table.create(&mut expired).await.unwrap();
    assert!(
        table.load(&expired.id).await.unwrap().is_none(),
        "expired sessions do not load"
    );
    assert_eq!(table.delete_expired().await.unwrap(), 1);

    table.delete(&record.id).await.unwrap();
    assert!(table.load(&record.id).await.unwrap().is_none());
}
db_test!(console_sessions_round_trip_and_expire);

async fn one_main_account_per_company_is_a_database_rule(db: Db) {
    let app = spawn_app(db).await;
    let company = app.company(0, true).await;
    let mut tx = app.services.store.begin().await.unwrap();
    let second_main = cofre_server::store::accounts::AccountRow {
        id: "acc_second_main".into(),
        company_id: company.id.clone(),
        is_default: true,
        withdraw_key_api_enabled: false,
        correlation_id: None,
        withdraw_key_id: None,
        created_at: 0,
    };
    let err = cofre_server::store::accounts::insert(&mut tx, &second_main)
        .await
        .unwrap_err();
    assert!(
        matches!(err, cofre_server::store::StoreError::Duplicate),
        "{err:?}"
    );
}
db_test!(one_main_account_per_company_is_a_database_rule);
