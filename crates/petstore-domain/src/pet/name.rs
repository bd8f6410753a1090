//! `PetName`: a pet's name, 1 to 255 characters, following the rule for every human-entered
//! name ([`crate::human_name`]: visible characters and spaces, no invisible or control ones).

use std::fmt;

use crate::human_name::{self, HumanNameError};

/// A validated pet name. Built only through [`PetName::parse`] (or, for rows already stored,
/// [`PetName::parse_stored`]), so holding one proves it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PetName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PetNameError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
    #[error(transparent)]
    Characters(#[from] HumanNameError),
    /// Only from [`PetName::parse_stored`]: the rules that always held.
    #[error("must not be blank or contain the NUL character (U+0000)")]
    Stored,
}

impl PetName {
    /// Longest accepted name, in Unicode scalar values (what a user counts as characters far more
    /// often than bytes are).
    pub const MAX_CHARS: usize = 255;

    /// A name as a client sends it, stored exactly as given (spaces around it included).
    pub fn parse(raw: impl Into<String>) -> Result<Self, PetNameError> {
        let raw = raw.into();
        Self::check_length(&raw)?;
        human_name::check(&raw)?;
        Ok(Self(raw))
    }

    /// A name read back from storage, for the adapters only. Rows written under older, looser
    /// character rules (v1 took any character but NUL, and a name of invisible characters) are
    /// served as stored; the rules that always held (length, no NUL, not whitespace only) are
    /// still checked, so a row changed behind the service's back is noticed.
    pub fn parse_stored(raw: impl Into<String>) -> Result<Self, PetNameError> {
        let raw = raw.into();
        Self::check_length(&raw)?;
        if raw.contains('\0') || raw.chars().all(char::is_whitespace) {
            return Err(PetNameError::Stored);
        }
        Ok(Self(raw))
    }

    fn check_length(raw: &str) -> Result<(), PetNameError> {
        if raw.is_empty() {
            return Err(PetNameError::Empty);
        }
        let chars = raw.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(PetNameError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        Ok(())
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
    fn follows_the_rule_for_human_entered_names() {
        assert_eq!(
            PetName::parse("   "),
            Err(PetNameError::Characters(HumanNameError::Blank))
        );
        for raw in ["Re\0x", "abc\u{202e}gpj.exe", "\u{200b}\u{200b}", "\u{301}"] {
            assert!(
                matches!(PetName::parse(raw), Err(PetNameError::Characters(_))),
                "{raw:?}"
            );
        }
        let err = PetName::parse("abc\u{202e}gpj.exe").unwrap_err();
        assert!(err.to_string().contains("U+202E"), "{err}");
    }

    #[test]
    fn a_stored_name_from_before_the_rule_is_still_read() {
        for raw in [
            "\u{200b}\u{200b}",
            "abc\u{202e}gpj.exe",
            "Rex\n",
            "\u{2800}",
        ] {
            assert!(PetName::parse(raw).is_err(), "{raw:?}");
            assert_eq!(PetName::parse_stored(raw).unwrap().as_str(), raw);
        }
        assert_eq!(PetName::parse_stored(" "), Err(PetNameError::Stored));
        assert_eq!(PetName::parse_stored("a\0"), Err(PetNameError::Stored));
        assert_eq!(PetName::parse_stored(""), Err(PetNameError::Empty));
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
