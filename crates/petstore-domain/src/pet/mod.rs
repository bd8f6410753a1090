//! Pets: `NewPet` (what a client asks the store to add), `Pet` (what the store keeps), the
//! values they are made of, each checked where it is made, what a listing may ask for, how a
//! stored pet changes (`PetChange`) or goes (removal), and its version.

mod category_id;
mod change;
mod currency;
mod description;
mod details;
mod id;
mod list_items;
mod listing;
mod name;
mod name_search;
mod patch;
mod photo_url;
mod price;
mod removal;
mod status;
mod tag;
mod version;

pub use category_id::{CategoryId, CategoryIdError};
pub use change::{PetChange, PetChangeError, PetChangeFields, PetChangeInvalid, PetField};
pub use currency::{Currency, CurrencyError};
pub use description::{PetDescription, PetDescriptionError};
pub use details::PetDetails;
pub use id::{PetId, PetIdError};
pub use list_items::{ItemError, ListError};
pub use listing::{NamePosition, PetIds, PetIdsError, PetListQuery, PetSearch};
pub use name::{PetName, PetNameError};
pub use name_search::{fold_case, NamePrefix, NamePrefixError};
pub use patch::Patch;
pub use photo_url::{PhotoUrl, PhotoUrlError, PhotoUrls, PhotoUrlsError};
pub use price::{Price, PriceAmountError, PriceError};
pub use removal::PetRemovalError;
pub use status::{PetStatus, PetStatusError, StatusTransitionError};
pub use tag::{Tag, TagError, Tags, TagsError};
pub use version::{PetVersion, PetVersionError};

/// A pet that is about to be added. Its status is already decided: the default applies here,
/// so every adapter stores the same thing for an omitted status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPet {
    name: PetName,
    category_id: CategoryId,
    status: PetStatus,
    details: PetDetails,
}

impl NewPet {
    pub fn new(name: PetName, category_id: CategoryId, status: Option<PetStatus>) -> Self {
        Self {
            name,
            category_id,
            status: status.unwrap_or_default(),
            details: PetDetails::default(),
        }
    }

    /// The pet with its optional details (price, description, photos, tags).
    #[must_use]
    pub fn with_details(mut self, details: PetDetails) -> Self {
        self.details = details;
        self
    }

    pub fn details(&self) -> &PetDetails {
        &self.details
    }

    pub fn name(&self) -> &PetName {
        &self.name
    }

    pub const fn category_id(&self) -> CategoryId {
        self.category_id
    }

    pub const fn status(&self) -> PetStatus {
        self.status
    }

    /// The stored pet this becomes once the store has assigned `id`: its first version.
    pub fn into_pet(self, id: PetId) -> Pet {
        Pet {
            id,
            name: self.name,
            category_id: self.category_id,
            status: self.status,
            version: PetVersion::first(),
            details: self.details,
        }
    }
}

/// A pet as the store keeps it, with its version. Its status changes only along the life cycle
/// ([`change_status`](Self::change_status)); a client's change goes through
/// [`apply_change`](Self::apply_change), and it goes by [`remove`](Self::remove). Each of them
/// that changes the pet moves its version on, and nothing else does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pet {
    id: PetId,
    name: PetName,
    category_id: CategoryId,
    status: PetStatus,
    version: PetVersion,
    details: PetDetails,
}

impl Pet {
    /// A pet as storage kept it. For adapters reading back what they stored; everything else
    /// gets its pets from [`NewPet::into_pet`].
    pub fn restore(
        id: PetId,
        name: PetName,
        category_id: CategoryId,
        status: PetStatus,
        version: PetVersion,
    ) -> Self {
        Self {
            id,
            name,
            category_id,
            status,
            version,
            details: PetDetails::default(),
        }
    }

    /// A pet as storage kept it, with its details (see [`restore`](Self::restore)).
    #[must_use]
    pub fn with_details(mut self, details: PetDetails) -> Self {
        self.details = details;
        self
    }

    pub fn details(&self) -> &PetDetails {
        &self.details
    }

    /// Which state of the pet this is.
    pub const fn version(&self) -> PetVersion {
        self.version
    }

    pub const fn id(&self) -> PetId {
        self.id
    }

    pub fn name(&self) -> &PetName {
        &self.name
    }

    pub const fn category_id(&self) -> CategoryId {
        self.category_id
    }

    pub const fn status(&self) -> PetStatus {
        self.status
    }

    /// The pet's parts, for an adapter that keeps them apart (a DTO, a row).
    pub fn into_parts(self) -> (PetId, PetName, CategoryId, PetStatus, PetDetails) {
        (
            self.id,
            self.name,
            self.category_id,
            self.status,
            self.details,
        )
    }

    /// Moves the pet along its life cycle, refusing any move the life cycle does not allow.
    pub fn change_status(&mut self, next: PetStatus) -> Result<(), StatusTransitionError> {
        self.status = self.status.transition_to(next)?;
        self.version = self.version.next();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_pet(status: Option<PetStatus>) -> NewPet {
        NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(3).unwrap(),
            status,
        )
    }

    #[test]
    fn omitted_status_defaults_to_available() {
        assert_eq!(new_pet(None).status, PetStatus::Available);
    }

    #[test]
    fn given_status_is_kept() {
        assert_eq!(new_pet(Some(PetStatus::Sold)).status, PetStatus::Sold);
    }

    #[test]
    fn into_pet_keeps_every_field_and_takes_the_id() {
        let pet = new_pet(Some(PetStatus::Pending)).into_pet(PetId::new(42));
        assert_eq!(pet.id, PetId::new(42));
        assert_eq!(pet.name.as_str(), "Rex");
        assert_eq!(pet.category_id.get(), 3);
        assert_eq!(pet.status, PetStatus::Pending);
    }

    #[test]
    fn change_status_follows_the_life_cycle_and_leaves_the_pet_alone_on_refusal() {
        let mut pet = new_pet(None).into_pet(PetId::new(1));
        pet.change_status(PetStatus::Pending).unwrap();
        pet.change_status(PetStatus::Sold).unwrap();
        let err = pet.change_status(PetStatus::Available).unwrap_err();
        assert_eq!(err.from, PetStatus::Sold);
        assert_eq!(pet.status, PetStatus::Sold);
    }

    #[test]
    fn every_move_of_the_status_moves_the_version_and_a_refusal_does_not() {
        let mut pet = new_pet(None).into_pet(PetId::new(1));
        assert_eq!(pet.version(), PetVersion::first());
        pet.change_status(PetStatus::Pending).unwrap();
        assert_eq!(pet.version(), PetVersion::first().next());
        pet.change_status(PetStatus::Sold).unwrap();
        let sold = pet.version();
        pet.change_status(PetStatus::Pending).unwrap_err();
        assert_eq!(pet.version(), sold);
    }
}
