//! `OrderId`: the identifier the store assigns to an order when it is placed.

use std::fmt;

/// Identifier of a stored order, assigned by the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderId(i64);

impl OrderId {
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    /// An id as clients write it: plain decimal digits with an optional `-`, within int64.
    pub fn parse(raw: &str) -> Option<Self> {
        crate::decimal::parse_i64(raw).map(Self)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
