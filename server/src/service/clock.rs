//! Time as the services see it: the system clock in production, a clock the test
//! moves by hand where time-dependent rules (token bucket refill) are checked.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Brasília time (UTC-3, no daylight saving since 2019): the calendar of due dates,
/// instalments and the dashboard's days.
pub const BRT_OFFSET_MS: i64 = 3 * 3_600_000;

/// The date in Brasília at `now_millis`.
pub fn brasilia_date(now_millis: i64) -> time::Date {
    time::OffsetDateTime::from_unix_timestamp((now_millis - BRT_OFFSET_MS).div_euclid(1000))
        .map(|t| t.date())
        .unwrap_or(time::Date::MIN)
}

/// `YYYY-MM-DD`, as dates are stored and answered.
pub fn date_text(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

pub trait Clock: Send + Sync + Debug + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;
}

#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        crate::store::now_millis()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start_millis: i64) -> Arc<Self> {
        Arc::new(Self(AtomicI64::new(start_millis)))
    }

    pub fn advance(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub type SharedClock = Arc<dyn Clock>;
