//! The Cofre rules SDK: implement [`Rules`] for your type, overriding only the hooks
//! your rule needs (the others allow or keep), then `cofre_rules_sdk::export_rules!(T);`.
//! Build with `cargo build --release --target wasm32-wasip2`; the `.wasm` is the
//! component to upload. See `plugins/sdk/README.md`.

#![no_std]

extern crate alloc;

/// The generated bindings (in a module: a `#[macro_export]`ed export macro at the crate
/// root would clash with its own re-export).
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/v0.1.0",
        world: "rules",
        pub_export_macro: true,
        export_macro_name: "export_rules",
        default_bindings_module: "cofre_rules_sdk::bindings",
    });
}

pub use alloc::string::{String, ToString};
pub use alloc::vec::Vec;
use bindings::Guest;
pub use bindings::cofre::rules::host::{Level, config, log};
pub use bindings::cofre::rules::types::Denial;
pub use bindings::export_rules;
pub use bindings::{
    ChargeDecision, ChargeDraft, Decision, EventDecision, OutgoingEvent, PixKeyRequest, Withdrawal,
};

/// A refusal with a stable code (what API clients see) and a message.
pub fn deny(code: &str, message: &str) -> Decision {
    Decision::Deny(Denial {
        code: code.to_string(),
        message: message.to_string(),
    })
}

/// A configuration value of the binding, parsed.
pub fn config_as<T: core::str::FromStr>(key: &str) -> Option<T> {
    config(key).and_then(|v| v.trim().parse().ok())
}

/// The hooks of the `cofre:rules` interface. Every hook has a harmless default.
pub trait Rules {
    fn authorize_withdraw(_request: Withdrawal) -> Decision {
        Decision::Allow
    }
    fn check_pix_key(_request: PixKeyRequest) -> Decision {
        Decision::Allow
    }
    fn shape_charge(draft: ChargeDraft) -> ChargeDecision {
        ChargeDecision::Keep(draft)
    }
    fn shape_webhook(_event: OutgoingEvent) -> EventDecision {
        EventDecision::Keep
    }
}

impl<T: Rules> Guest for T {
    fn authorize_withdraw(request: Withdrawal) -> Decision {
        <T as Rules>::authorize_withdraw(request)
    }
    fn check_pix_key(request: PixKeyRequest) -> Decision {
        <T as Rules>::check_pix_key(request)
    }
    fn shape_charge(draft: ChargeDraft) -> ChargeDecision {
        <T as Rules>::shape_charge(draft)
    }
    fn shape_webhook(event: OutgoingEvent) -> EventDecision {
        <T as Rules>::shape_webhook(event)
    }
}
