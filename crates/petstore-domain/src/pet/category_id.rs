//! `CategoryId`: the category a pet belongs to, and a category's own id (`crate::Category`). A
//! pet's need not name a category (the spec shows only the identifier), so the only rule is
//! that identifiers start at 1.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CategoryId(i64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be at least {min} (got {actual})", min = CategoryId::MIN)]
pub struct CategoryIdError {
    pub actual: i64,
}

impl CategoryId {
    pub const MIN: i64 = 1;
    /// The largest id: ids are int64.
    pub const MAX: i64 = i64::MAX;

    pub fn parse(value: i64) -> Result<Self, CategoryIdError> {
        if value < Self::MIN {
            return Err(CategoryIdError { actual: value });
        }
        Ok(Self(value))
    }

    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for CategoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_one_and_the_largest_int64() {
        assert_eq!(CategoryId::parse(1).unwrap().get(), 1);
        assert_eq!(CategoryId::parse(i64::MAX).unwrap().get(), i64::MAX);
    }

    #[test]
    fn rejects_zero_and_negatives() {
        assert_eq!(CategoryId::parse(0), Err(CategoryIdError { actual: 0 }));
        assert_eq!(CategoryId::parse(-7), Err(CategoryIdError { actual: -7 }));
        assert!(CategoryId::parse(i64::MIN).is_err());
    }

    #[test]
    fn error_message_states_the_minimum() {
        let err = CategoryId::parse(0).unwrap_err();
        assert_eq!(err.to_string(), "must be at least 1 (got 0)");
    }
}
