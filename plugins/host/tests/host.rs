//! The host against real components built from `plugins/examples` by
//! `scripts/build-plugins` (the test fails, not skips, when they are missing).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use cofre_plugin_host::*;

fn component(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../examples/target/wasm32-wasip2/release/{name}.wasm",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}; run scripts/build-plugins first"))
}

fn host() -> Host {
    // Debug builds run guests several times slower: a roomier deadline than production.
    Host::new(Limits {
        deadline: Duration::from_millis(200),
        ..Limits::default()
    })
    .unwrap()
}

fn config(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn withdrawal(now_ms: i64, recent: Vec<i64>) -> Withdrawal {
    Withdrawal {
        now_ms,
        account_id: "acc_1".into(),
        value: 100,
        withdraw_key: "a@b.com".into(),
        withdraw_key_type: "EMAIL".into(),
        available: 1000,
        blocked: 0,
        recent_withdrawals_ms: recent,
    }
}

fn key(kind: &str) -> PixKeyRequest {
    PixKeyRequest {
        now_ms: 0,
        account_id: "acc_1".into(),
        key: "k".into(),
        key_type: kind.into(),
    }
}

#[test]
fn pix_key_policy_allows_only_the_configured_types() {
    let host = host();
    let plugin = host
        .load("pix-key-policy", "1.0.0", &component("pix_key_policy"))
        .unwrap();
    assert_eq!(plugin.interface, "0.1.0");
    assert_eq!(
        host.check_pix_key(&plugin, &config(&[]), &key("EMAIL"))
            .unwrap()
            .0,
        Decision::Allow
    );
    let (decision, logs) = host
        .check_pix_key(&plugin, &config(&[]), &key("CPF"))
        .unwrap();
    assert!(
        matches!(decision, Decision::Deny { ref code, .. } if code == "PIX_KEY_TYPE_NOT_ALLOWED"),
        "{decision:?}"
    );
    assert_eq!(
        logs,
        [LogLine {
            level: "info".into(),
            message: "refused a key of type CPF".into()
        }]
    );
    let phones = config(&[("allowed_types", "PHONE")]);
    assert_eq!(
        host.check_pix_key(&plugin, &phones, &key("PHONE"))
            .unwrap()
            .0,
        Decision::Allow
    );
    assert_ne!(
        host.check_pix_key(&plugin, &phones, &key("EMAIL"))
            .unwrap()
            .0,
        Decision::Allow
    );
    // Hooks a plugin does not override answer their default.
    assert_eq!(
        host.authorize_withdraw(&plugin, &config(&[]), &withdrawal(0, vec![]))
            .unwrap()
            .0,
        Decision::Allow
    );
}

#[test]
fn withdraw_window_opens_at_the_end_date_and_counts_per_day() {
    let host = host();
    let plugin = host
        .load(
            "campaign-withdraw-window",
            "1.0.0",
            &component("campaign_withdraw_window"),
        )
        .unwrap();
    let cfg = config(&[("opens_at_ms", "1000000"), ("max_per_day", "2")]);
    let deny_code = |d: Decision| match d {
        Decision::Deny { code, .. } => code,
        Decision::Allow => "ALLOW".into(),
    };
    assert_eq!(
        deny_code(
            host.authorize_withdraw(&plugin, &cfg, &withdrawal(999_999, vec![]))
                .unwrap()
                .0
        ),
        "WITHDRAW_WINDOW_CLOSED"
    );
    assert_eq!(
        deny_code(
            host.authorize_withdraw(&plugin, &cfg, &withdrawal(1_000_000, vec![999_000]))
                .unwrap()
                .0
        ),
        "ALLOW"
    );
    let two_today = vec![1_000_000, 1_500_000];
    assert_eq!(
        deny_code(
            host.authorize_withdraw(&plugin, &cfg, &withdrawal(2_000_000, two_today))
                .unwrap()
                .0
        ),
        "WITHDRAW_DAILY_LIMIT"
    );
    let one_yesterday = vec![2_000_000 - 86_400_001, 1_900_000];
    assert_eq!(
        deny_code(
            host.authorize_withdraw(&plugin, &cfg, &withdrawal(2_000_000, one_yesterday))
                .unwrap()
                .0
        ),
        "ALLOW"
    );
}

#[test]
fn charge_defaults_fill_the_draft_and_refuse_above_the_limit() {
    let host = host();
    let plugin = host
        .load("charge-defaults", "1.0.0", &component("charge_defaults"))
        .unwrap();
    let draft = ChargeDraft {
        now_ms: 0,
        account_id: "acc_1".into(),
        correlation_id: "c1".into(),
        value: 500,
        comment: None,
        expires_in: 86_400,
        additional_info: vec![("k".into(), "v".into())],
    };
    let cfg = config(&[
        ("comment", "Campanha de Natal"),
        ("expires_in", "3600"),
        ("max_value", "1000"),
    ]);
    let (decision, _) = host.shape_charge(&plugin, &cfg, &draft).unwrap();
    let ChargeDecision::Keep(shaped) = decision else {
        panic!("{decision:?}")
    };
    assert_eq!(shaped.comment.as_deref(), Some("Campanha de Natal"));
    assert_eq!(shaped.expires_in, 3600);
    assert_eq!(shaped.additional_info, draft.additional_info);
    let big = ChargeDraft {
        value: 1001,
        ..draft
    };
    assert!(
        matches!(host.shape_charge(&plugin, &cfg, &big).unwrap().0, ChargeDecision::Deny { ref code, .. } if code == "CHARGE_VALUE_ABOVE_LIMIT")
    );
}

#[test]
fn webhook_enrich_adds_the_campaign_label() {
    let host = host();
    let plugin = host
        .load("webhook-enrich", "1.0.0", &component("webhook_enrich"))
        .unwrap();
    let event = OutgoingEvent {
        now_ms: 0,
        event: "OPENPIX:CHARGE_COMPLETED".into(),
        payload: r#"{"charge":{"value":1}}"#.into(),
    };
    let (decision, _) = host
        .shape_webhook(
            &plugin,
            &config(&[("campaign_label", "natal-2026")]),
            &event,
        )
        .unwrap();
    let EventDecision::Replace(payload) = decision else {
        panic!("{decision:?}")
    };
    assert_eq!(payload, r#"{"campaign":"natal-2026","charge":{"value":1}}"#);
    assert_eq!(
        host.shape_webhook(&plugin, &config(&[]), &event).unwrap().0,
        EventDecision::Keep
    );
}

#[test]
fn an_endless_plugin_is_stopped_at_its_deadline_and_the_host_goes_on() {
    let host = Host::new(Limits {
        deadline: Duration::from_millis(50),
        ..Limits::default()
    })
    .unwrap();
    let forever = host
        .load("faulty-loop", "0.0.1", &component("faulty_loop"))
        .unwrap();
    let started = Instant::now();
    let err = host
        .authorize_withdraw(&forever, &config(&[]), &withdrawal(0, vec![]))
        .unwrap_err();
    assert!(
        matches!(err, PluginError::Timeout { ref plugin, deadline_ms: 50 } if plugin == "faulty-loop@0.0.1"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let policy = host
        .load("pix-key-policy", "1.0.0", &component("pix_key_policy"))
        .unwrap();
    assert_eq!(
        host.check_pix_key(&policy, &config(&[]), &key("EVP"))
            .unwrap()
            .0,
        Decision::Allow
    );
}

#[test]
fn a_plugin_asking_for_too_much_memory_is_refused() {
    let host = host();
    let greedy = host
        .load("faulty-alloc", "0.0.1", &component("faulty_alloc"))
        .unwrap();
    let err = host
        .authorize_withdraw(&greedy, &config(&[]), &withdrawal(0, vec![]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::MemoryExceeded {
                limit_bytes: 16_777_216,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_trapping_plugin_gives_a_typed_error_naming_it() {
    let host = host();
    let trap = host
        .load("faulty-trap", "0.0.1", &component("faulty_trap"))
        .unwrap();
    let err = host
        .authorize_withdraw(&trap, &config(&[]), &withdrawal(0, vec![]))
        .unwrap_err();
    assert!(
        matches!(err, PluginError::Trap { ref plugin, .. } if plugin == "faulty-trap@0.0.1"),
        "{err}"
    );
    assert!(err.to_string().contains("faulty-trap@0.0.1"));
}

#[test]
fn garbage_core_modules_and_unknown_versions_are_refused_at_load() {
    let host = host();
    assert!(matches!(
        host.load("x", "1", b"not wasm at all"),
        Err(PluginError::Invalid(_))
    ));
    // A core module (the smallest valid one), not a component.
    assert!(matches!(
        host.load("x", "1", b"\0asm\x01\0\0\0"),
        Err(PluginError::Invalid(_))
    ));
    let err = host
        .load("future", "1", &component("faulty_future_version"))
        .unwrap_err();
    assert!(
        matches!(err, PluginError::UnsupportedVersion(ref v) if v == "9.9.9"),
        "{err}"
    );
}
