//! Categories: a named group a pet may name by its `categoryId`. A category is its id (a
//! [`CategoryId`], the number pets carry) and a [`CategoryName`], unique among the live
//! categories regardless of case ([`CategoryName::folded`]). Pets do not depend on categories:
//! a pet's `categoryId` is any id, named or not.

use std::fmt;

use crate::human_name::{self, HumanNameError};
use crate::{fold_case, CategoryId};

/// A validated category name: trimmed, 1 to [`CategoryName::MAX_CHARS`] characters, following
/// the rule for every human-entered name ([`crate::human_name`]). Built only through
/// [`CategoryName::parse`], so holding one proves it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CategoryName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CategoryNameError {
    #[error("must be at most {max} characters long (got {actual})")]
    TooLong { max: usize, actual: usize },
    #[error(transparent)]
    Characters(#[from] HumanNameError),
}

impl CategoryName {
    /// Longest accepted name, in characters (Unicode scalar values).
    pub const MAX_CHARS: usize = 100;

    /// A name as a client sends it, without the spaces around it: names are unique, and
    /// `" Dogs"` would otherwise be a second category that reads as `Dogs`.
    pub fn parse(raw: &str) -> Result<Self, CategoryNameError> {
        let name = raw.trim();
        if name.is_empty() {
            return Err(HumanNameError::Blank.into());
        }
        let chars = name.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(CategoryNameError::TooLong {
                max: Self::MAX_CHARS,
                actual: chars,
            });
        }
        human_name::check(name)?;
        Ok(Self(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name case-folded ([`fold_case`]): what uniqueness compares, so `Dogs` and `DOGS` are
    /// one name. Stored beside the name, so storage compares it with an index.
    pub fn folded(&self) -> String {
        fold_case(&self.0)
    }

    /// Whether `other` is the same name but for case.
    pub fn same_as(&self, other: &Self) -> bool {
        self.folded() == other.folded()
    }
}

impl fmt::Display for CategoryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl CategoryId {
    /// An id as written in a path (`/v1/categories/3`): plain decimal digits, at least 1.
    pub fn parse_text(raw: &str) -> Option<Self> {
        crate::decimal::parse_i64(raw).and_then(|value| Self::parse(value).ok())
    }
}

/// A stored category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    id: CategoryId,
    name: CategoryName,
}

impl Category {
    pub fn new(id: CategoryId, name: CategoryName) -> Self {
        Self { id, name }
    }

    pub fn id(&self) -> CategoryId {
        self.id
    }

    pub fn name(&self) -> &CategoryName {
        &self.name
    }

    /// The category under `name`, keeping its id.
    pub fn renamed(self, name: CategoryName) -> Self {
        Self { name, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(raw: &str) -> CategoryName {
        CategoryName::parse(raw).unwrap()
    }

    #[test]
    fn accepts_a_name_and_trims_the_spaces_around_it() {
        assert_eq!(name("Dogs").as_str(), "Dogs");
        assert_eq!(name("  Sea birds ").as_str(), "Sea birds");
        assert_eq!(name("Ñandúes 🐦").as_str(), "Ñandúes 🐦");
    }

    #[test]
    fn refuses_empty_and_blank_names() {
        for raw in ["", "   ", "\u{3000}"] {
            assert_eq!(
                CategoryName::parse(raw),
                Err(CategoryNameError::Characters(HumanNameError::Blank)),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn follows_the_rule_for_human_entered_names() {
        for raw in ["Do\0gs", "abc\u{202e}gpj", "\u{200b}\u{200b}", "Dogs\nCats"] {
            assert!(
                matches!(
                    CategoryName::parse(raw),
                    Err(CategoryNameError::Characters(HumanNameError::Hidden { .. }))
                ),
                "{raw:?}"
            );
        }
        let err = CategoryName::parse("abc\u{202e}gpj").unwrap_err();
        assert!(err.to_string().contains("U+202E"), "{err}");
    }

    #[test]
    fn accepts_100_characters_counted_as_chars_and_refuses_101() {
        let longest = "é".repeat(100);
        assert_eq!(name(&longest).as_str(), longest);
        assert_eq!(
            CategoryName::parse(&"a".repeat(101)),
            Err(CategoryNameError::TooLong {
                max: 100,
                actual: 101
            })
        );
        // The bound applies after trimming.
        assert!(CategoryName::parse(&format!("  {}  ", "a".repeat(100))).is_ok());
    }

    #[test]
    fn names_differing_only_in_case_fold_alike_beyond_ascii() {
        assert!(name("Dogs").same_as(&name("DOGS")));
        assert!(name("ÉCUREUILS").same_as(&name("écureuils")));
        assert!(name("ΟΔΟΣ").same_as(&name("οδος")));
        assert!(!name("Dogs").same_as(&name("Dog")));
        assert_eq!(name("ÉCUREUILS").folded(), "écureuils");
    }

    #[test]
    fn an_id_in_a_path_is_plain_digits_from_1() {
        assert_eq!(CategoryId::parse_text("7").map(CategoryId::get), Some(7));
        for raw in [
            "0",
            "-1",
            "+7",
            "7.0",
            "1e3",
            "",
            " 7",
            "9223372036854775808",
        ] {
            assert_eq!(CategoryId::parse_text(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn a_renamed_category_keeps_its_id() {
        let id = CategoryId::parse(7).unwrap();
        let category = Category::new(id, name("Dogs")).renamed(name("Hounds"));
        assert_eq!(category.id(), id);
        assert_eq!(category.name().as_str(), "Hounds");
    }
}
