//! Why a list of validated values (a pet's photo URLs, its tags) is refused: too many of them,
//! or which ones break their own rule, each by its position so a message can name it
//! (`photoUrls[2]`).

use std::error::Error;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListError<E> {
    /// More values than the list may hold (counted after any normalisation that merges them).
    TooMany { max: usize, actual: usize },
    /// Every value that breaks its rule, in order; never empty.
    Items(Vec<ItemError<E>>),
}

/// One refused value of a list: its 0-based position and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemError<E> {
    pub index: usize,
    pub error: E,
}

impl<E> ListError<E> {
    /// `Items` of the errors `results` hold, each with its position; `None` when there are none.
    pub(crate) fn from_items<T>(
        results: impl IntoIterator<Item = Result<T, E>>,
    ) -> Result<Vec<T>, Self> {
        let mut values = Vec::new();
        let mut errors = Vec::new();
        for (index, result) in results.into_iter().enumerate() {
            match result {
                Ok(value) => values.push(value),
                Err(error) => errors.push(ItemError { index, error }),
            }
        }
        if errors.is_empty() {
            Ok(values)
        } else {
            Err(Self::Items(errors))
        }
    }
}

impl<E: fmt::Display> fmt::Display for ItemError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.index, self.error)
    }
}

impl<E: fmt::Display> fmt::Display for ListError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooMany { max, actual } => {
                write!(f, "must hold at most {max} items (got {actual})")
            }
            Self::Items(errors) => {
                for (n, error) in errors.iter().enumerate() {
                    if n > 0 {
                        f.write_str("; ")?;
                    }
                    error.fmt(f)?;
                }
                Ok(())
            }
        }
    }
}

impl<E: Error> Error for ListError<E> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_every_refused_item_with_its_position() {
        let results: Vec<Result<u8, &str>> = vec![Ok(1), Err("is bad"), Ok(3), Err("is worse")];
        let err = ListError::from_items(results).unwrap_err();
        assert_eq!(err.to_string(), "[1] is bad; [3] is worse");
        let ListError::Items(errors) = err else {
            panic!("expected item errors");
        };
        assert_eq!(
            errors[0],
            ItemError {
                index: 1,
                error: "is bad"
            }
        );
    }

    #[test]
    fn keeps_the_values_when_none_is_refused() {
        let results: Vec<Result<u8, &str>> = vec![Ok(1), Ok(2)];
        assert_eq!(ListError::from_items(results), Ok(vec![1, 2]));
    }

    #[test]
    fn too_many_states_the_bound() {
        let err: ListError<&str> = ListError::TooMany {
            max: 10,
            actual: 11,
        };
        assert_eq!(err.to_string(), "must hold at most 10 items (got 11)");
    }
}
