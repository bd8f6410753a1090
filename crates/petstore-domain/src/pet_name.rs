//! `PetName`: a pet's name, 1 to 255 characters, not blank, without NUL (U+0000).

use std::fmt;

/// A validated pet name. Built only through [`PetName::parse`], so holding one proves it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PetName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PetNameError {
    #[error("must not be empty")]
    Empty,
    #[error("must not be blank")]
    Blank,
    #[error("must not contain the NUL character (U+0000)")]
    Nul,
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
}

impl PetName {
    /// Longest accepted name, in Unicode scalar values (what a user counts as characters far more
    /// often than bytes are).
    pub const MAX_CHARS: usize = 255;

    pub fn parse(raw: impl Into<String>) -> Result<Self, PetNameError> {
        let raw = raw.into();
        if raw.is_empty() {
            return Err(PetNameError::Empty);
        }
        // PostgreSQL `text` cannot hold U+0000 and SQLite's `length()` stops at it, so storing
        // one fails (a 500) or is miscounted: refuse it here, the same on every backend.
        if raw.contains('\0') {
            return Err(PetNameError::Nul);
        }
        if raw.trim().is_empty() {
            return Err(PetNameError::Blank);
        }
        let chars = raw.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(PetNameError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        Ok(Self(raw))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl fmt::Display for PetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_an_ordinary_name() {
        assert_eq!(PetName::parse("Rex").unwrap().as_str(), "Rex");
    }

    #[test]
    fn keeps_inner_spaces_and_unicode_as_given() {
        assert_eq!(
            PetName::parse(" Mr. Ñandú 🐦").unwrap().as_str(),
            " Mr. Ñandú 🐦"
        );
    }

    #[test]
    fn rejects_empty() {
        assert_eq!(PetName::parse(""), Err(PetNameError::Empty));
    }

    #[test]
    fn rejects_whitespace_only() {
        assert_eq!(PetName::parse(" \t\n "), Err(PetNameError::Blank));
    }

    #[test]
    fn rejects_nul_anywhere() {
        for raw in ["\0", "\0Rex", "Re\0x", "Rex\0"] {
            assert_eq!(PetName::parse(raw), Err(PetNameError::Nul), "{raw:?}");
        }
    }

    #[test]
    fn accepts_exactly_255_characters_counted_as_chars_not_bytes() {
        let name = "é".repeat(255);
        assert_eq!(PetName::parse(name.clone()).unwrap().as_str(), name);
    }

    #[test]
    fn rejects_256_characters() {
        assert_eq!(
            PetName::parse("a".repeat(256)),
            Err(PetNameError::TooLong {
                max: 255,
                actual: 256
            })
        );
    }
}
