//! Test fixture: traps (a panic is an `unreachable` trap in WebAssembly).
#![no_std]
use cofre_rules_sdk::*;

struct Trap;

impl Rules for Trap {
    fn authorize_withdraw(request: Withdrawal) -> Decision {
        if core::hint::black_box(request.value) >= 0 {
            core::arch::wasm32::unreachable()
        }
        Decision::Allow
    }
}

export_rules!(Trap);
