//! The time, as a port: the use cases' date rules (the sunset of `getPet`, an order's ship
//! date, a key's expiry) can then be tested at any instant.

use std::time::{SystemTime, UNIX_EPOCH};

/// The time, as far as the use cases are concerned.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> SystemTime;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// `time` in whole seconds since the Unix epoch, as storage keeps times (0 before the epoch).
pub(crate) fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    })
}

/// `time` in whole milliseconds since the Unix epoch (0 before the epoch).
pub(crate) fn unix_millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
    })
}
