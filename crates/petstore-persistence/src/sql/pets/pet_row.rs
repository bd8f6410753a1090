//! `PetRow`: a row of `pets` as stored, checked against the domain's rules on the way out.

use diesel::prelude::*;
use petstore_application::RepositoryError;
use petstore_domain::{CategoryId, NewPet, Pet, PetId, PetName, PetStatus, PetVersion};

use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::schema::pets;

/// A row of `pets` (a live pet's: removed ones are never read as pets), before it is checked
/// against the domain's rules.
#[derive(Debug, Clone, Queryable, QueryableByName)]
#[diesel(table_name = pets)]
pub(crate) struct PetRow {
    pub(crate) id: i64,
    name: String,
    category_id: i64,
    status: String,
    version: i64,
}

impl PetRow {
    /// Spelled out rather than `as_select()`: the multi-backend `RETURNING` clause needs an
    /// expression every inner backend can render, which a plain column tuple is.
    pub(crate) const COLUMNS: (
        pets::id,
        pets::name,
        pets::category_id,
        pets::status,
        pets::version,
    ) = (
        pets::id,
        pets::name,
        pets::category_id,
        pets::status,
        pets::version,
    );

    /// Whether this row stores exactly what `new_pet` asked for.
    pub(crate) fn holds(&self, new_pet: &NewPet) -> bool {
        self.name == new_pet.name().as_str()
            && self.category_id == new_pet.category_id().get()
            && self.status == new_pet.status().as_str()
    }

    /// A stored row that breaks a domain rule means the data was changed behind the service's
    /// back: reported as unexpected (with the id, for the logs) rather than served.
    pub(crate) fn into_pet(self) -> Result<Pet, RepositoryError> {
        let id = self.id;
        let corrupt = |field: &str, reason: String| {
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "stored pet {id} has an invalid {field}: {reason}"
            ))))
        };
        Ok(Pet::restore(
            PetId::new(id),
            PetName::parse_stored(self.name).map_err(|e| corrupt("name", e.to_string()))?,
            CategoryId::parse(self.category_id)
                .map_err(|e| corrupt("category id", e.to_string()))?,
            PetStatus::parse(&self.status).map_err(|e| corrupt("status", e.to_string()))?,
            PetVersion::parse(self.version).map_err(|e| corrupt("version", e.to_string()))?,
        ))
    }
}
