//! `Tag` and `Tags`: short labels a shop files its pets under (`"puppy"`, `"house trained"`)
//! and a listing filters by, normalised so that one label is stored one way.

use std::fmt;

use super::list_items::ListError;
use super::name_search::fold_case_into;
use crate::human_name::{self, HumanNameError};

/// A tag in its normalised form: spaces around it trimmed, each run of spaces inside it made
/// one U+0020, and folded to lowercase with [`fold_case`](super::name_search::fold_case) (as
/// name search folds), so `" House Trained "` and `"house  trained"` are one tag,
/// `"house trained"`. Written with the characters
/// of a human-entered name ([`crate::human_name`]), and without commas, so a comma-separated
/// list of tags is never ambiguous. At most [`MAX_CHARS`](Self::MAX_CHARS) characters once
/// normalised. The same parse normalises a tag a listing filters by, so the filter meets the
/// stored form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tag(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
    #[error("must not contain a comma (U+002C, character {at})")]
    Comma { at: usize },
    #[error(transparent)]
    Characters(#[from] HumanNameError),
}

impl Tag {
    /// Longest tag, in Unicode scalar values of its normalised form: a label, not a sentence.
    pub const MAX_CHARS: usize = 32;

    pub fn parse(raw: &str) -> Result<Self, TagError> {
        if raw.is_empty() {
            return Err(TagError::Empty);
        }
        human_name::check(raw)?;
        if let Some(at) = raw.chars().position(|c| c == ',') {
            return Err(TagError::Comma { at: at + 1 });
        }
        // The name rule leaves only spaces (Zs) among the whitespace. Folding is per character,
        // so folding each word gives the fold of the words joined.
        let mut normalised = String::with_capacity(raw.len());
        for word in raw.split_whitespace() {
            if !normalised.is_empty() {
                normalised.push(' ');
            }
            fold_case_into(&mut normalised, word);
        }
        let chars = normalised.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(TagError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        Ok(Self(normalised))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A pet's tags, normalised, each once, in the order first given; at most
/// [`MAX`](Self::MAX). May be empty (no tags).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Tags(Vec<Tag>);

pub type TagsError = ListError<TagError>;

impl Tags {
    pub const MAX: usize = 10;

    /// Reports every tag that breaks the rule, by position; then drops repeats (after
    /// normalisation, keeping the first) and refuses more than [`MAX`](Self::MAX) left.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Self, TagsError> {
        let parsed = ListError::from_items(raw.iter().map(|tag| Tag::parse(tag.as_ref())))?;
        let mut tags: Vec<Tag> = Vec::with_capacity(parsed.len());
        for tag in parsed {
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        if tags.len() > Self::MAX {
            return Err(ListError::TooMany {
                max: Self::MAX,
                actual: tags.len(),
            });
        }
        Ok(Self(tags))
    }

    pub fn as_slice(&self) -> &[Tag] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_inner(self) -> Vec<Tag> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HiddenKind, ItemError};

    fn tag(raw: &str) -> String {
        Tag::parse(raw).unwrap().into_inner()
    }

    #[test]
    fn trims_collapses_spaces_and_lowercases() {
        assert_eq!(tag("Puppy"), "puppy");
        assert_eq!(tag("  House   Trained "), "house trained");
        assert_eq!(tag("House\u{a0}\u{3000}Trained"), "house trained");
        assert_eq!(tag("ÉLÈVE"), "élève");
        assert_eq!(tag("ΟΔΟΣ"), "οδοσ");
        assert_eq!(tag("🐕‍🦺 Service"), "🐕‍🦺 service");
    }

    #[test]
    fn refuses_empty_blank_and_hidden_characters() {
        assert_eq!(Tag::parse(""), Err(TagError::Empty));
        assert_eq!(
            Tag::parse("   "),
            Err(TagError::Characters(HumanNameError::Blank))
        );
        for (raw, at, kind) in [
            ("a\tb", 2, HiddenKind::Control),
            ("dog\n", 4, HiddenKind::Control),
            ("\u{200b}dog", 1, HiddenKind::Invisible),
            ("go\u{202e}d", 3, HiddenKind::BidiControl),
        ] {
            assert!(
                matches!(
                    Tag::parse(raw),
                    Err(TagError::Characters(HumanNameError::Hidden { at: a, kind: k, .. }))
                        if a == at && k == kind
                ),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn a_stored_tag_parses_to_itself() {
        for raw in ["  House   Trained ", "İSTANBUL", "ΟΔΟΣ", "🐕‍🦺 Service"] {
            let stored = tag(raw);
            assert_eq!(tag(&stored), stored, "{raw:?}");
        }
    }

    #[test]
    fn refuses_commas() {
        assert_eq!(Tag::parse("cats, dogs"), Err(TagError::Comma { at: 5 }));
    }

    #[test]
    fn bounds_the_normalised_length() {
        assert_eq!(tag(&format!("  {}  ", "é".repeat(32))), "é".repeat(32));
        assert_eq!(
            Tag::parse(&"a".repeat(33)),
            Err(TagError::TooLong {
                max: 32,
                actual: 33
            })
        );
        // Lowercasing U+0130 gives two characters: the bound is on what is stored.
        assert_eq!(
            Tag::parse(&"İ".repeat(17)),
            Err(TagError::TooLong {
                max: 32,
                actual: 34
            })
        );
    }

    #[test]
    fn drops_repeats_after_normalising_keeping_the_first_order() {
        let tags = Tags::parse(&["Puppy", "calm", " PUPPY ", "Calm", "small"]).unwrap();
        let tags: Vec<&str> = tags.as_slice().iter().map(Tag::as_str).collect();
        assert_eq!(tags, ["puppy", "calm", "small"]);
        assert!(Tags::parse::<&str>(&[]).unwrap().is_empty());
    }

    #[test]
    fn counts_at_most_ten_distinct_tags() {
        let ten: Vec<String> = (0..10).map(|n| format!("tag {n}")).collect();
        let mut with_repeats = ten.clone();
        with_repeats.push("TAG 3".to_owned());
        assert_eq!(Tags::parse(&with_repeats).unwrap().as_slice().len(), 10);
        let eleven: Vec<String> = (0..11).map(|n| format!("tag {n}")).collect();
        assert_eq!(
            Tags::parse(&eleven),
            Err(ListError::TooMany {
                max: 10,
                actual: 11
            })
        );
    }

    #[test]
    fn reports_every_bad_tag_by_position() {
        assert_eq!(
            Tags::parse(&["ok", "", "a,b"]),
            Err(ListError::Items(vec![
                ItemError {
                    index: 1,
                    error: TagError::Empty
                },
                ItemError {
                    index: 2,
                    error: TagError::Comma { at: 2 }
                },
            ]))
        );
    }
}
