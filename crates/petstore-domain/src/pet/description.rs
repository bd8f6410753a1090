//! `PetDescription`: free text about a pet, up to 2,000 characters, in lines.

use std::fmt;

use crate::human_name::{self, HumanNameError};

/// A validated description. Each line follows the rule for human-entered text
/// ([`crate::human_name`]: visible characters and spaces, no invisible or control characters);
/// lines are separated by `\n` or `\r\n`, and may be empty. At least one character in the whole
/// text is visible. Stored exactly as given (line endings and spaces included).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PetDescription(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PetDescriptionError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
    /// The first character refused, its position counted in the whole text. A lone `\r` is a
    /// control character: only `\n` and `\r\n` break lines.
    #[error(transparent)]
    Characters(#[from] HumanNameError),
}

impl PetDescription {
    /// Longest accepted description, in Unicode scalar values (`\r\n` counts two). Enough for a
    /// few paragraphs; a shop's longer texts belong on its own pages.
    pub const MAX_CHARS: usize = 2_000;

    pub fn parse(raw: impl Into<String>) -> Result<Self, PetDescriptionError> {
        let raw = raw.into();
        if raw.is_empty() {
            return Err(PetDescriptionError::Empty);
        }
        let chars = raw.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(PetDescriptionError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        check_lines(&raw)?;
        Ok(Self(raw))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// Checks each line with the human-entered text rule; a blank line is fine as long as some
/// line is not.
fn check_lines(text: &str) -> Result<(), HumanNameError> {
    let mut visible = false;
    // Characters before the current line, to report positions in the whole text.
    let mut offset = 0;
    for segment in text.split_inclusive('\n') {
        let line = segment
            .strip_suffix('\n')
            .map_or(segment, |line| line.strip_suffix('\r').unwrap_or(line));
        match human_name::check(line) {
            Ok(()) => visible = true,
            Err(HumanNameError::Blank) => {}
            Err(HumanNameError::Hidden { found, at, kind }) => {
                return Err(HumanNameError::Hidden {
                    found,
                    at: offset + at,
                    kind,
                })
            }
            Err(HumanNameError::LoneMark { found, at }) => {
                return Err(HumanNameError::LoneMark {
                    found,
                    at: offset + at,
                })
            }
        }
        offset += segment.chars().count();
    }
    if visible {
        Ok(())
    } else {
        Err(HumanNameError::Blank)
    }
}

impl fmt::Display for PetDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HiddenKind;

    fn hidden_at(raw: &str) -> Option<(usize, HiddenKind)> {
        match PetDescription::parse(raw) {
            Err(PetDescriptionError::Characters(HumanNameError::Hidden { at, kind, .. })) => {
                Some((at, kind))
            }
            _ => None,
        }
    }

    #[test]
    fn keeps_lines_blank_lines_and_spaces_as_given() {
        for raw in [
            "A calm dog.",
            "Line one\nline two",
            "Windows\r\nline endings\r\n",
            "\n\nParagraph one.\n\n  Paragraph two 🐕‍🦺\n",
        ] {
            assert_eq!(PetDescription::parse(raw).unwrap().as_str(), raw);
        }
    }

    #[test]
    fn refuses_empty_and_blank_text() {
        assert_eq!(PetDescription::parse(""), Err(PetDescriptionError::Empty));
        for raw in [" ", "\n", "  \r\n \n"] {
            assert_eq!(
                PetDescription::parse(raw),
                Err(PetDescriptionError::Characters(HumanNameError::Blank)),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn refuses_other_controls_and_invisible_characters_at_their_place_in_the_text() {
        assert_eq!(hidden_at("ab\rcd"), Some((3, HiddenKind::Control)));
        assert_eq!(hidden_at("ab\ncd\r"), Some((6, HiddenKind::Control)));
        assert_eq!(hidden_at("ab\tcd"), Some((3, HiddenKind::Control)));
        assert_eq!(
            hidden_at("ab\n\u{202e}cd"),
            Some((4, HiddenKind::BidiControl))
        );
        assert_eq!(
            hidden_at("ab\r\nc\u{2028}"),
            Some((6, HiddenKind::Separator))
        );
        assert_eq!(hidden_at("ok\n\u{200b}"), Some((4, HiddenKind::Invisible)));
        assert_eq!(hidden_at("ok\u{85}"), Some((3, HiddenKind::Control)));
    }

    #[test]
    fn a_mark_cannot_hang_on_the_line_before() {
        assert_eq!(
            PetDescription::parse("e\n\u{301}"),
            Err(PetDescriptionError::Characters(HumanNameError::LoneMark {
                found: '\u{301}',
                at: 3
            }))
        );
    }

    #[test]
    fn accepts_2000_characters_and_refuses_2001() {
        let longest = "é".repeat(1_999) + "\n";
        assert!(PetDescription::parse(longest).is_ok());
        assert_eq!(
            PetDescription::parse("a".repeat(2_001)),
            Err(PetDescriptionError::TooLong {
                max: 2_000,
                actual: 2_001
            })
        );
    }
}
