//! Withdrawals only after the campaign ends (`opens_at_ms`) and at most `max_per_day`
//! (default 1) in any 24 hours.
#![no_std]
use cofre_rules_sdk::*;

struct WithdrawWindow;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

impl Rules for WithdrawWindow {
    fn authorize_withdraw(request: Withdrawal) -> Decision {
        let opens_at: i64 = config_as("opens_at_ms").unwrap_or(0);
        if request.now_ms < opens_at {
            return deny(
                "WITHDRAW_WINDOW_CLOSED",
                "Withdrawals open when the campaign ends",
            );
        }
        let max_per_day: usize = config_as("max_per_day").unwrap_or(1);
        let today = request
            .recent_withdrawals_ms
            .iter()
            .filter(|at| request.now_ms - **at < DAY_MS)
            .count();
        if today >= max_per_day {
            return deny(
                "WITHDRAW_DAILY_LIMIT",
                "The daily number of withdrawals was reached",
            );
        }
        Decision::Allow
    }
}

export_rules!(WithdrawWindow);
