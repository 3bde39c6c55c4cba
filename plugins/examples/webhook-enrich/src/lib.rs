//! Adds `"campaign": <campaign_label>` to every outgoing webhook payload.
#![no_std]
use cofre_rules_sdk::*;

struct WebhookEnrich;

impl Rules for WebhookEnrich {
    fn shape_webhook(event: OutgoingEvent) -> EventDecision {
        let Some(label) = config("campaign_label") else {
            return EventDecision::Keep;
        };
        match serde_json::from_str::<serde_json::Value>(&event.payload) {
            Ok(serde_json::Value::Object(mut map)) => {
                map.insert("campaign".to_string(), serde_json::Value::String(label));
                EventDecision::Replace(serde_json::Value::Object(map).to_string())
            }
            _ => EventDecision::Keep,
        }
    }
}

export_rules!(WebhookEnrich);
