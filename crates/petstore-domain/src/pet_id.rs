//! `PetId`: the identifier the store assigns to a pet when it is created.

use std::fmt;

/// Identifier of a stored pet. Any `i64` can be asked for; only the store hands out new ones,
/// so there is nothing to validate beyond the integer itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PetId(i64);

impl PetId {
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for PetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
