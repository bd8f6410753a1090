//! `PetId`: the identifier the store assigns to a pet when it is created.

use std::fmt;

/// Identifier of a stored pet. Any `i64` can be asked for; only the store hands out new ones,
/// so there is nothing to validate beyond the integer itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PetId(i64);

/// Text that is not a pet id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an int64 integer written as digits (got `{raw}`)")]
pub struct PetIdError {
    pub raw: String,
}

impl PetId {
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    /// An id as clients write it: plain decimal digits with an optional `-`, within int64.
    /// `+5`, `05.0`, `1e3` and surrounding spaces are refused rather than read leniently, so a
    /// client bug shows instead of reaching another pet.
    pub fn parse(raw: &str) -> Result<Self, PetIdError> {
        crate::decimal::parse_i64(raw)
            .map(Self)
            .ok_or_else(|| PetIdError {
                raw: raw.to_owned(),
            })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_int64_including_its_bounds() {
        assert_eq!(PetId::parse("7"), Ok(PetId::new(7)));
        assert_eq!(PetId::parse("-3"), Ok(PetId::new(-3)));
        assert_eq!(PetId::parse("0"), Ok(PetId::new(0)));
        assert_eq!(
            PetId::parse(&i64::MAX.to_string()),
            Ok(PetId::new(i64::MAX))
        );
        assert_eq!(
            PetId::parse(&i64::MIN.to_string()),
            Ok(PetId::new(i64::MIN))
        );
    }

    #[test]
    fn refuses_anything_but_plain_digits_within_int64() {
        for raw in [
            "",
            "-",
            "+5",
            "1.0",
            "1e3",
            " 1",
            "abc",
            "9223372036854775808",
            "--1",
        ] {
            let error = PetId::parse(raw).expect_err(raw);
            assert_eq!(error.raw, raw);
            assert!(error.to_string().contains("int64"), "{error}");
        }
    }
}
