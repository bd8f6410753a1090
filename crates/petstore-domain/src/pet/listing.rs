//! What a client may ask of the pet listing: how many pets per page, which pets (a status, a
//! category, a tag, the start of a name), and where the previous page ended.

use crate::{fold_case, CategoryId, NamePrefix, PageLimit, Pet, PetId, PetStatus, Tag};

/// One page of the listing: pets after `after` (from the first when `None`), with `status` when
/// given and matching `search`, at most `limit` of them. In ascending id order, except a search
/// by name without a tag, which is in name order ([`PetSearch::in_name_order`]): then `after`
/// is the last pet's id and `after_name` its folded name.
///
/// Keyset paging (rather than offsets) keeps pages stable while pets are being added: a pet
/// never appears twice and none is skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PetListQuery {
    pub limit: PageLimit,
    pub status: Option<PetStatus>,
    pub search: PetSearch,
    pub after: Option<PetId>,
    pub after_name: Option<String>,
}

/// Where a page in name order ended: the last pet's folded name ([`fold_case`]) and id. The
/// next page starts with the first pet after it in (folded name, id) order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamePosition {
    pub folded_name: String,
    pub id: PetId,
}

impl NamePosition {
    /// Where `pet` stands in name order.
    pub fn of(pet: &Pet) -> Self {
        Self {
            folded_name: fold_case(pet.name().as_str()),
            id: pet.id(),
        }
    }
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

    /// Whether the listing is in name order (folded name, then id) rather than id order: a
    /// search by name without a tag. Each order is the one its index is in, so a page reads
    /// only its own pets however many match.
    pub fn in_name_order(&self) -> bool {
        self.name.is_some() && self.tag.is_none()
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

    #[test]
    fn only_a_search_by_name_without_a_tag_is_in_name_order() {
        let name = Some(NamePrefix::parse("re").unwrap());
        let tag = Some(Tag::parse("dog").unwrap());
        let category_id = Some(CategoryId::parse(1).unwrap());
        let search = |category_id, tag, name| PetSearch {
            category_id,
            tag,
            name,
        };
        assert!(search(None, None, name.clone()).in_name_order());
        assert!(search(category_id, None, name.clone()).in_name_order());
        assert!(!search(None, tag.clone(), name).in_name_order());
        assert!(!search(category_id, tag, None).in_name_order());
        assert!(!PetSearch::default().in_name_order());
    }

    #[test]
    fn name_order_is_the_folded_name_then_the_id() {
        let pet = |id, name| {
            crate::NewPet::new(
                crate::PetName::parse(name).unwrap(),
                CategoryId::parse(1).unwrap(),
                None,
            )
            .into_pet(PetId::new(id))
        };
        let rex = NamePosition::of(&pet(9, "REX"));
        assert_eq!(rex.folded_name, "rex");
        assert!(
            NamePosition::of(&pet(2, "Rex")) < rex,
            "the same name: by id"
        );
        assert!(
            rex < NamePosition::of(&pet(1, "rexa")),
            "a longer name after it"
        );
        assert!(
            NamePosition::of(&pet(10, "Ré")) > rex,
            "by code point: é after x"
        );
    }
}
