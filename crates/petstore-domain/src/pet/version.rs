//! `PetVersion`: which state of a pet a client has seen, so a write based on an older state can
//! be told apart from one based on the current state.

use std::fmt;

/// A pet's version: a positive integer that starts at [`first`](Self::first) when the pet is
/// created and moves to [`next`](Self::next) on every change to it (its fields changed, an order
/// moving its status, its removal), and on nothing else. Two reads of a pet with the same
/// version saw the same pet. Adapters derive what they need from it (a validator, a stored
/// column); the domain only promises that it changes exactly when the pet does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PetVersion(i64);

/// An integer that is not a pet version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a pet's version must be at least 1 (got {actual})")]
pub struct PetVersionError {
    pub actual: i64,
}

impl PetVersion {
    /// The version of a pet just created.
    pub const fn first() -> Self {
        Self(1)
    }

    /// The version after one more change. After `i64::MAX` it starts again at
    /// [`first`](Self::first), so this never fails; a client would need to hold a version
    /// across 2^63 changes of one pet to mistake one for the other.
    #[must_use]
    pub const fn next(self) -> Self {
        match self.0.checked_add(1) {
            Some(next) => Self(next),
            None => Self::first(),
        }
    }

    /// A version as storage kept it.
    pub fn parse(value: i64) -> Result<Self, PetVersionError> {
        if value < 1 {
            return Err(PetVersionError { actual: value });
        }
        Ok(Self(value))
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for PetVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_pet_starts_at_one_and_each_change_moves_it_on() {
        let first = PetVersion::first();
        assert_eq!(first.get(), 1);
        assert_eq!(first.next().get(), 2);
        assert_eq!(first.next().next().get(), 3);
        assert_ne!(first.next(), first);
    }

    #[test]
    fn the_largest_version_is_followed_by_the_first() {
        let last = PetVersion::parse(i64::MAX).unwrap();
        assert_eq!(last.next(), PetVersion::first());
    }

    #[test]
    fn parses_what_it_gave_out_and_refuses_zero_and_negatives() {
        for value in [1, 2, 41, i64::MAX] {
            assert_eq!(PetVersion::parse(value).map(PetVersion::get), Ok(value));
        }
        for value in [0, -1, i64::MIN] {
            assert_eq!(
                PetVersion::parse(value),
                Err(PetVersionError { actual: value })
            );
        }
        assert_eq!(
            PetVersion::parse(0).unwrap_err().to_string(),
            "a pet's version must be at least 1 (got 0)"
        );
        assert_eq!(PetVersion::parse(42).unwrap().to_string(), "42");
    }
}
