//! `PetName`: a pet's name, 1 to 255 characters, with at least one visible character, without
//! NUL (U+0000) and without bidirectional control characters.

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
    #[error(
        "must not contain bidirectional control characters (found U+{:04X}), which make a \
         name display differently from what it is",
        u32::from(*.0)
    )]
    BidiControl(char),
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
}

impl PetName {
    /// Longest accepted name, in Unicode scalar values (what a user counts as characters far more
    /// often than bytes are).
    pub const MAX_CHARS: usize = 255;

    pub fn parse(raw: impl Into<String>) -> Result<Self, PetNameError> {
        Self::checked(raw.into(), Rules::Current)
    }

    /// A name read back from storage. Rows written before the visible-character and
    /// bidirectional-control rules existed may break them and are served as stored; the rules
    /// that always held (length, no NUL, not whitespace only) are still checked, so a row
    /// changed behind the service's back is noticed.
    pub fn parse_stored(raw: impl Into<String>) -> Result<Self, PetNameError> {
        Self::checked(raw.into(), Rules::Stored)
    }

    fn checked(raw: String, rules: Rules) -> Result<Self, PetNameError> {
        if raw.is_empty() {
            return Err(PetNameError::Empty);
        }
        // PostgreSQL `text` cannot hold U+0000 and SQLite's `length()` stops at it, so storing
        // one fails (a 500) or is miscounted: refuse it here, the same on every backend.
        if raw.contains('\0') {
            return Err(PetNameError::Nul);
        }
        if rules == Rules::Current {
            if let Some(control) = raw.chars().find(|&c| is_bidi_control(c)) {
                return Err(PetNameError::BidiControl(control));
            }
        }
        // A name of spaces and invisible characters (`"\u{200b}\u{200b}"`) shows as nothing.
        let shows_nothing =
            |c: char| c.is_whitespace() || (rules == Rules::Current && is_invisible(c));
        if raw.chars().all(shows_nothing) {
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

/// Which rules a name is checked against: all of today's, or those that held when any stored
/// row was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rules {
    Current,
    Stored,
}

/// The embedding, override and isolate controls (U+202A to U+202E, U+2066 to U+2069): they
/// reorder how the text around them is displayed (`abc\u{202e}gpj.exe` shows as `abcexe.jpg`).
pub const fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Characters that draw nothing, from Unicode's Default_Ignorable_Code_Point property (its
/// ranges in the Basic Multilingual Plane): soft hyphen, zero-width spaces and joiners, word
/// joiner and invisible operators, variation selectors, the byte order mark, Hangul fillers.
pub const fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
    )
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
    fn a_name_of_invisible_characters_is_blank() {
        for raw in [
            "\u{200b}\u{200b}",
            " \u{feff} ",
            "\u{2060}",
            "\u{00ad}\u{3164}",
        ] {
            assert_eq!(PetName::parse(raw), Err(PetNameError::Blank), "{raw:?}");
        }
        assert!(
            PetName::parse("Re\u{200b}x").is_ok(),
            "visible characters around one"
        );
    }

    #[test]
    fn rejects_bidi_controls_and_says_which() {
        let err = PetName::parse("abc\u{202e}gpj.exe").unwrap_err();
        assert_eq!(err, PetNameError::BidiControl('\u{202e}'));
        assert!(err.to_string().contains("U+202E"), "{err}");
        for control in ['\u{202a}', '\u{202d}', '\u{2066}', '\u{2069}'] {
            assert_eq!(
                PetName::parse(format!("Rex{control}")),
                Err(PetNameError::BidiControl(control))
            );
        }
    }

    #[test]
    fn a_stored_name_from_before_the_newer_rules_is_still_read() {
        for raw in ["\u{200b}\u{200b}", "abc\u{202e}gpj.exe"] {
            assert!(PetName::parse(raw).is_err(), "{raw:?}");
            assert_eq!(PetName::parse_stored(raw).unwrap().as_str(), raw);
        }
        assert_eq!(PetName::parse_stored(" "), Err(PetNameError::Blank));
        assert_eq!(PetName::parse_stored("a\0"), Err(PetNameError::Nul));
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
