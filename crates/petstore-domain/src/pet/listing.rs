//! What a client may ask of the pet listing: how many pets per page, which pets (a status, a
//! category, a tag, the start of a name), and where the previous page ended.

use crate::{CategoryId, NamePrefix, PageLimit, Pet, PetId, PetStatus, Tag};

/// One page of the listing: pets with an id greater than `after` (all pets when `None`), with
/// `status` when given and matching `search`, in ascending id order, at most `limit` of them.
///
/// Keyset paging on the id (rather than offsets) keeps pages stable while pets are being added:
/// a pet never appears twice and none is skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PetListQuery {
    pub limit: PageLimit,
    pub status: Option<PetStatus>,
    pub search: PetSearch,
    pub after: Option<PetId>,
}

/// The search filters of a listing, each optional and all of them together (and with the
/// status): a category, a tag the pet has, the case-insensitive start of its name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct PetSearch {
    pub category_id: Option<CategoryId>,
    pub tag: Option<Tag>,
    pub name: Option<NamePrefix>,
}

impl PetSearch {
    /// Whether no filter is given: every pet matches.
    pub fn is_empty(&self) -> bool {
        self.category_id.is_none() && self.tag.is_none() && self.name.is_none()
    }

    /// Whether `pet` matches every filter given.
    pub fn matches(&self, pet: &Pet) -> bool {
        self.category_id.is_none_or(|id| pet.category_id() == id)
            && self
                .tag
                .as_ref()
                .is_none_or(|tag| pet.details().tags.as_slice().contains(tag))
            && self
                .name
                .as_ref()
                .is_none_or(|name| name.matches(pet.name()))
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
mod tests {
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
