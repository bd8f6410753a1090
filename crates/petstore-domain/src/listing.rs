//! What a client may ask of the pet listing: how many pets per page, which status, and where
//! the previous page ended.

use crate::{PetId, PetStatus};

/// How many pets one listing page may hold: 1 to 100, 20 when not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PetLimit(u8);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an integer from {min} to {max}", min = PetLimit::MIN, max = PetLimit::MAX)]
pub struct PetLimitError;

impl PetLimit {
    pub const MIN: u8 = 1;
    pub const MAX: u8 = 100;
    pub const DEFAULT: PetLimit = PetLimit(20);

    pub fn parse(value: i64) -> Result<Self, PetLimitError> {
        u8::try_from(value)
            .ok()
            .filter(|v| (Self::MIN..=Self::MAX).contains(v))
            .map(Self)
            .ok_or(PetLimitError)
    }

    /// A limit as written in a query string: plain decimal digits, within the range.
    pub fn parse_text(raw: &str) -> Result<Self, PetLimitError> {
        crate::decimal::parse_i64(raw).map_or(Err(PetLimitError), Self::parse)
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

impl Default for PetLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One page of the listing: pets with an id greater than `after` (all pets when `None`), with
/// `status` when given, in ascending id order, at most `limit` of them.
///
/// Keyset paging on the id (rather than offsets) keeps pages stable while pets are being added:
/// a pet never appears twice and none is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PetListQuery {
    pub limit: PetLimit,
    pub status: Option<PetStatus>,
    pub after: Option<PetId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_limit_is_20() {
        assert_eq!(PetLimit::default().get(), 20);
        assert_eq!(PetListQuery::default().limit.get(), 20);
    }

    #[test]
    fn accepts_the_bounds() {
        assert_eq!(PetLimit::parse(1).unwrap().get(), 1);
        assert_eq!(PetLimit::parse(100).unwrap().get(), 100);
    }

    #[test]
    fn rejects_out_of_range_values() {
        for value in [0, -1, 101, 256, 257, i64::MAX, i64::MIN] {
            assert_eq!(PetLimit::parse(value), Err(PetLimitError), "{value}");
        }
    }

    #[test]
    fn error_message_gives_the_range() {
        assert_eq!(
            PetLimitError.to_string(),
            "must be an integer from 1 to 100"
        );
    }
}

/// The ids of a lookup by id (`listPets?id=3&id=7`): 1 to 100, each once, in ascending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetIds(Vec<PetId>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("takes 1 to {max} ids (got {actual})", max = PetIds::MAX)]
pub struct PetIdsError {
    pub actual: usize,
}

impl PetIds {
    pub const MAX: usize = 100;

    /// `ids` sorted with repeats removed; at most [`Self::MAX`] of them before that.
    pub fn new(mut ids: Vec<PetId>) -> Result<Self, PetIdsError> {
        if ids.is_empty() || ids.len() > Self::MAX {
            return Err(PetIdsError { actual: ids.len() });
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(Self(ids))
    }

    pub fn as_slice(&self) -> &[PetId] {
        &self.0
    }
}

#[cfg(test)]
mod pet_ids_tests {
    use super::*;

    #[test]
    fn ids_are_sorted_deduplicated_and_bounded() {
        let ids = PetIds::new([7, 3, 7, 1].map(PetId::new).to_vec()).unwrap();
        assert_eq!(ids.as_slice(), [1, 3, 7].map(PetId::new));
        assert_eq!(PetIds::new(vec![]), Err(PetIdsError { actual: 0 }));
        let many: Vec<PetId> = (1..=101).map(PetId::new).collect();
        assert_eq!(PetIds::new(many), Err(PetIdsError { actual: 101 }));
        assert!(PetIds::new((1..=100).map(PetId::new).collect()).is_ok());
    }
}
