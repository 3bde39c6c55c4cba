//! Test fixture: a plugin built for interface version 9.9.9, which no host runs yet.
#![no_std]
extern crate alloc;

wit_bindgen::generate!({ path: "wit", world: "rules" });

use cofre::rules::types::Denial;

struct Future;

impl Guest for Future {
    fn authorize_withdraw(_: Withdrawal) -> Decision {
        Decision::Allow
    }
    fn check_pix_key(_: PixKeyRequest) -> Decision {
        Decision::Deny(Denial {
            code: alloc::string::String::new(),
            message: alloc::string::String::new(),
        })
    }
    fn shape_charge(draft: ChargeDraft) -> ChargeDecision {
        ChargeDecision::Keep(draft)
    }
    fn shape_webhook(_: OutgoingEvent) -> EventDecision {
        EventDecision::Keep
    }
}

export!(Future);
