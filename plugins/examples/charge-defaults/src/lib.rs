//! Charges without a comment get `comment`; every charge expires in `expires_in`
//! seconds (when set); charges above `max_value` centavos are refused.
#![no_std]
use cofre_rules_sdk::*;

struct ChargeDefaults;

impl Rules for ChargeDefaults {
    fn shape_charge(mut draft: ChargeDraft) -> ChargeDecision {
        if let Some(max) = config_as::<i64>("max_value")
            && draft.value > max
        {
            return ChargeDecision::Deny(Denial {
                code: "CHARGE_VALUE_ABOVE_LIMIT".to_string(),
                message: "This campaign takes charges up to its limit".to_string(),
            });
        }
        if draft.comment.is_none() {
            draft.comment = config("comment");
        }
        if let Some(seconds) = config_as::<i64>("expires_in") {
            draft.expires_in = seconds;
        }
        ChargeDecision::Keep(draft)
    }
}

export_rules!(ChargeDefaults);
