//! `Patch<T>`: what a change does to one field of a pet, in the three states a JSON Merge Patch
//! (RFC 7396) can say: leave it alone, set it, or clear it.

/// What a change does to one field. Whether [`Clear`](Self::Clear) is allowed depends on the
/// field: a field every pet has (its name, say) can be set but not cleared, and
/// [`PetChange::new`](crate::PetChange::new) refuses a change that clears one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Patch<T> {
    /// Leave the field as it is (the field was not mentioned).
    #[default]
    Keep,
    /// Give the field this value.
    Set(T),
    /// Remove the field's value.
    Clear,
}

impl<T> Patch<T> {
    pub const fn is_keep(&self) -> bool {
        matches!(self, Self::Keep)
    }

    pub const fn as_ref(&self) -> Patch<&T> {
        match self {
            Self::Keep => Patch::Keep,
            Self::Set(value) => Patch::Set(value),
            Self::Clear => Patch::Clear,
        }
    }

    /// The same change with the value turned into another type (a parsed one, say).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Self::Keep => Patch::Keep,
            Self::Set(value) => Patch::Set(f(value)),
            Self::Clear => Patch::Clear,
        }
    }

    /// The same change with the value parsed, or the parse's error.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Self::Keep => Patch::Keep,
            Self::Set(value) => Patch::Set(f(value)?),
            Self::Clear => Patch::Clear,
        })
    }

    /// The value this change gives the field, if it sets one.
    pub fn set_value(self) -> Option<T> {
        match self {
            Self::Set(value) => Some(value),
            Self::Keep | Self::Clear => None,
        }
    }
}

/// The usual shape of a field read from a merge patch: `None` when it was absent,
/// `Some(None)` when it was given as null, `Some(Some(value))` when it was given a value.
impl<T> From<Option<Option<T>>> for Patch<T> {
    fn from(field: Option<Option<T>>) -> Self {
        match field {
            None => Self::Keep,
            Some(None) => Self::Clear,
            Some(Some(value)) => Self::Set(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_null_and_value_become_keep_clear_and_set() {
        assert_eq!(Patch::<i64>::from(None), Patch::Keep);
        assert_eq!(Patch::<i64>::from(Some(None)), Patch::Clear);
        assert_eq!(Patch::from(Some(Some(4))), Patch::Set(4));
        assert_eq!(Patch::<i64>::default(), Patch::Keep);
    }

    #[test]
    fn only_keep_is_keep() {
        assert!(Patch::<i64>::Keep.is_keep());
        assert!(!Patch::Set(1).is_keep());
        assert!(!Patch::<i64>::Clear.is_keep());
    }

    #[test]
    fn map_and_try_map_change_only_the_value() {
        assert_eq!(Patch::Set(2).map(|n| n * 10), Patch::Set(20));
        assert_eq!(Patch::<i64>::Keep.map(|n| n * 10), Patch::Keep);
        assert_eq!(Patch::<i64>::Clear.map(|n| n * 10), Patch::Clear);

        let parse = |raw: &str| raw.parse::<i64>().map_err(|_| "not a number");
        assert_eq!(Patch::Set("7").try_map(parse), Ok(Patch::Set(7)));
        assert_eq!(Patch::Set("x").try_map(parse), Err("not a number"));
        assert_eq!(Patch::<&str>::Clear.try_map(parse), Ok(Patch::Clear));
        assert_eq!(Patch::<&str>::Keep.try_map(parse), Ok(Patch::Keep));
    }

    #[test]
    fn set_value_is_the_value_of_a_set_only() {
        assert_eq!(Patch::Set("Rex").set_value(), Some("Rex"));
        assert_eq!(Patch::<&str>::Keep.set_value(), None);
        assert_eq!(Patch::<&str>::Clear.set_value(), None);
        assert_eq!(
            Patch::Set(String::from("Rex")).as_ref(),
            Patch::Set(&"Rex".to_owned())
        );
    }
}
