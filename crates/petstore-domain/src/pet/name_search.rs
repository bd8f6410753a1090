//! Searching pets by name: the one case fold applied both to the stored `name_folded` column
//! and to the `?name=` prefix a listing filters by, so the two can never disagree.

use std::fmt;

use super::PetName;
use crate::human_name::{self, HumanNameError};

/// `text` with every character replaced by its Unicode lowercase, and final sigma (`ς`) by
/// sigma (`σ`). The stored column and the query are both folded with this, in Rust, rather than
/// by the database: SQLite's `NOCASE` and `lower()` fold ASCII letters only (`"ÉMILE"` would
/// not find `"émile"`), and PostgreSQL's `lower()` follows the database's locale, so each
/// backend would fold differently.
///
/// Each character is folded on its own, never by context, so that folding a prefix gives a
/// prefix of the folded name: `fold_case(a + b) == fold_case(a) + fold_case(b)`. That is why
/// final sigma is mapped to sigma (as Unicode case folding does): `str::to_lowercase` writes `Σ`
/// as `ς` at the end of a word, so the query `"ΟΔΟΣ"` would fold to `"οδος"` and miss
/// `"Οδοσσέας"`. Lowercase, not full case folding: `"STRASSE"` does not find `"straße"`.
pub fn fold_case(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    fold_case_into(&mut folded, text);
    folded
}

/// [`fold_case`] of `text`, added to the end of `folded`.
pub(crate) fn fold_case_into(folded: &mut String, text: &str) {
    for c in text.chars() {
        if c == 'ς' {
            folded.push('σ');
        } else {
            folded.extend(c.to_lowercase());
        }
    }
}

/// The case-insensitive prefix a listing's `?name=` filters by, already folded with
/// [`fold_case`]: a pet matches when its folded name starts with it. Bounded like a pet name and
/// following the same character rule (a prefix no valid name can start with is a client
/// mistake, not an empty page). Not trimmed: names are stored as given, spaces included.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamePrefix(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamePrefixError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
    #[error(transparent)]
    Characters(#[from] HumanNameError),
}

impl NamePrefix {
    /// Longest accepted prefix, in characters: a pet name's bound.
    pub const MAX_CHARS: usize = PetName::MAX_CHARS;

    pub fn parse(raw: &str) -> Result<Self, NamePrefixError> {
        if raw.is_empty() {
            return Err(NamePrefixError::Empty);
        }
        let chars = raw.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(NamePrefixError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        human_name::check(raw)?;
        Ok(Self(fold_case(raw)))
    }

    /// The folded prefix, to compare with a stored folded name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether a pet called `name` matches, for backends that filter in memory.
    pub fn matches(&self, name: &PetName) -> bool {
        fold_case(name.as_str()).starts_with(&self.0)
    }
}

impl fmt::Display for NamePrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(raw: &str) -> PetName {
        PetName::parse(raw).unwrap()
    }

    #[test]
    fn folds_beyond_ascii_which_sqlite_nocase_does_not() {
        assert_eq!(fold_case("ÉMILE"), "émile");
        assert_eq!(fold_case("ÑANDÚ"), "ñandú");
        assert_eq!(fold_case("ДРУЖОК"), "дружок");
        assert_eq!(fold_case("Rex 🐕"), "rex 🐕");
    }

    #[test]
    fn folding_a_prefix_gives_a_prefix_of_the_folded_name() {
        for (whole, at) in [
            ("ΟΔΟΣΣΕΑΣ", 4),
            ("ΟΔΟΣ ΑΛΦΑ", 4),
            ("İstanbul", 1),
            ("Straße", 4),
        ] {
            let split = whole.char_indices().nth(at).unwrap().0;
            let (head, tail) = whole.split_at(split);
            assert_eq!(
                fold_case(whole),
                fold_case(head) + &fold_case(tail),
                "{whole:?} at {at}"
            );
        }
    }

    #[test]
    fn folding_twice_changes_nothing() {
        for text in ["ÉMILE", "İstanbul", "ΟΔΟΣ", "Straße", "ǅemal"] {
            let once = fold_case(text);
            assert_eq!(fold_case(&once), once, "{text:?}");
        }
    }

    #[test]
    fn final_sigma_and_sigma_fold_alike() {
        assert_eq!(fold_case("ΟΔΟΣ"), fold_case("οδοσ"));
        assert_eq!(fold_case("οδος"), "οδοσ");
    }

    #[test]
    fn a_prefix_matches_any_casing_of_the_name() {
        let prefix = NamePrefix::parse("ÉM").unwrap();
        assert_eq!(prefix.as_str(), "ém");
        assert!(prefix.matches(&name("Émile")));
        assert!(prefix.matches(&name("émile")));
        assert!(!prefix.matches(&name("Emile")));
        assert!(NamePrefix::parse("ΟΔΟΣ")
            .unwrap()
            .matches(&name("Οδοσσέας")));
    }

    #[test]
    fn a_prefix_is_not_trimmed() {
        let prefix = NamePrefix::parse("Rex ").unwrap();
        assert!(prefix.matches(&name("Rex Junior")));
        assert!(!prefix.matches(&name("Rexy")));
    }

    #[test]
    fn refuses_empty_blank_hidden_and_overlong_prefixes() {
        assert_eq!(NamePrefix::parse(""), Err(NamePrefixError::Empty));
        assert_eq!(
            NamePrefix::parse("  "),
            Err(NamePrefixError::Characters(HumanNameError::Blank))
        );
        assert!(matches!(
            NamePrefix::parse("Re\u{202e}x"),
            Err(NamePrefixError::Characters(HumanNameError::Hidden {
                at: 3,
                ..
            }))
        ));
        assert!(NamePrefix::parse(&"é".repeat(255)).is_ok());
        assert_eq!(
            NamePrefix::parse(&"é".repeat(256)),
            Err(NamePrefixError::TooLong {
                max: 255,
                actual: 256
            })
        );
    }
}
