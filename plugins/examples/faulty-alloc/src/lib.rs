//! Test fixture: asks for 256 MiB (the host's memory limit must refuse it).
#![no_std]
use cofre_rules_sdk::*;

struct Greedy;

impl Rules for Greedy {
    fn authorize_withdraw(request: Withdrawal) -> Decision {
        let big: Vec<u8> = alloc_big(256 * 1024 * 1024 + request.value as usize);
        if core::hint::black_box(&big).len() > 0 {
            Decision::Allow
        } else {
            deny("X", "x")
        }
    }
}

fn alloc_big(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 1);
    v
}

export_rules!(Greedy);
