//! The bound on a key's open orders: how many orders one key may have `placed` and not yet
//! approved at once, so that one key cannot reserve every available pet. An approved order is
//! the staff's decision and no longer counts; cancelling one frees its place.

use std::fmt;
use std::num::NonZeroU32;

/// How many open (`placed`) orders one key may have at once: 1 to [`MAX`](Self::MAX).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenOrderLimit(NonZeroU32);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a whole number from 1 to {max}", max = OpenOrderLimit::MAX)]
pub struct OpenOrderLimitError;

/// Placing one more order would pass the key's bound; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "this API key already has {limit} open orders, as many as a key may have: wait until one \
     is approved, or cancel one"
)]
pub struct TooManyOpenOrders {
    pub limit: OpenOrderLimit,
}

impl OpenOrderLimit {
    /// The bound unless configured otherwise.
    pub const DEFAULT: OpenOrderLimit = OpenOrderLimit(NonZeroU32::new(10).expect("not zero"));

    /// The largest bound that can be configured; far more than any customer needs, and a count
    /// that stays cheap.
    pub const MAX: u32 = 100_000;

    pub fn parse(value: u64) -> Result<Self, OpenOrderLimitError> {
        u32::try_from(value)
            .ok()
            .filter(|value| *value <= Self::MAX)
            .and_then(NonZeroU32::new)
            .map(Self)
            .ok_or(OpenOrderLimitError)
    }

    pub const fn get(self) -> u32 {
        self.0.get()
    }

    /// Whether a key with `open` open orders may place one more.
    pub fn admit_one_more(self, open: u64) -> Result<(), TooManyOpenOrders> {
        if open < u64::from(self.get()) {
            Ok(())
        } else {
            Err(TooManyOpenOrders { limit: self })
        }
    }
}

impl Default for OpenOrderLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for OpenOrderLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for OpenOrderLimit {
    type Err = OpenOrderLimitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.trim()
            .parse::<u64>()
            .map_err(|_| OpenOrderLimitError)
            .and_then(Self::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_from_1_to_the_maximum() {
        assert_eq!(OpenOrderLimit::DEFAULT.get(), 10);
        assert_eq!(OpenOrderLimit::parse(1).unwrap().get(), 1);
        assert_eq!(OpenOrderLimit::parse(100_000).unwrap().get(), 100_000);
        for bad in [0, 100_001, u64::MAX] {
            assert_eq!(
                OpenOrderLimit::parse(bad),
                Err(OpenOrderLimitError),
                "{bad}"
            );
        }
        assert_eq!("25".parse(), Ok(OpenOrderLimit::parse(25).unwrap()));
        for bad in ["", "-1", "ten", "1.5", "0"] {
            assert_eq!(
                bad.parse::<OpenOrderLimit>(),
                Err(OpenOrderLimitError),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_key_at_its_limit_may_not_place_one_more() {
        let limit = OpenOrderLimit::parse(2).unwrap();
        assert_eq!(limit.admit_one_more(0), Ok(()));
        assert_eq!(limit.admit_one_more(1), Ok(()));
        assert_eq!(limit.admit_one_more(2), Err(TooManyOpenOrders { limit }));
        assert_eq!(limit.admit_one_more(7), Err(TooManyOpenOrders { limit }));
    }
}
