//! Test fixture: never answers (the host's deadline must stop it).
#![no_std]
use cofre_rules_sdk::*;

struct Forever;

impl Rules for Forever {
    fn authorize_withdraw(request: Withdrawal) -> Decision {
        let mut n = request.value as u64;
        loop {
            n = core::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

export_rules!(Forever);
