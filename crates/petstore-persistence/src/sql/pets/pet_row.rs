//! `PetRow`: a row of `pets` as stored, checked against the domain's rules on the way out.

use diesel::prelude::*;
use petstore_application::RepositoryError;
use petstore_domain::{
    CategoryId, Currency, EventType, NewPet, Pet, PetDescription, PetDetails, PetId, PetName,
    PetStatus, PetVersion, PhotoUrls, Price, Tags,
};

use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::engine::outbox::{payload, NewEvent};
use crate::sql::schema::pets;

/// A row of `pets` (a live pet's: removed ones are never read as pets), before it is checked
/// against the domain's rules.
// Serde: an event's payload is the pet's row as JSON (`engine/outbox.rs`).
#[derive(Debug, Clone, Queryable, QueryableByName, serde::Serialize, serde::Deserialize)]
#[diesel(table_name = pets)]
pub(crate) struct PetRow {
    pub(crate) id: i64,
    name: String,
    category_id: i64,
    status: String,
    version: i64,
    price_minor: Option<i64>,
    price_currency: Option<String>,
    description: Option<String>,
    photo_urls: Option<String>,
    tags: Option<String>,
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
        pets::price_minor,
        pets::price_currency,
        pets::description,
        pets::photo_urls,
        pets::tags,
    ) = (
        pets::id,
        pets::name,
        pets::category_id,
        pets::status,
        pets::version,
        pets::price_minor,
        pets::price_currency,
        pets::description,
        pets::photo_urls,
        pets::tags,
    );

    /// The same columns, in `RETURNING`'s words.
    pub(crate) const RETURNING: &'static str = "RETURNING id, name, category_id, status, \
        version, price_minor, price_currency, description, photo_urls, tags";

    /// Whether this row stores exactly what `new_pet` asked for, its details being `details`
    /// (`DetailColumns::of` them, made once per pet by the caller).
    pub(crate) fn holds(&self, new_pet: &NewPet, details: &DetailColumns<'_>) -> bool {
        self.name == new_pet.name().as_str()
            && self.category_id == new_pet.category_id().get()
            && self.status == new_pet.status().as_str()
            && self.price_minor == details.price_minor
            && self.price_currency.as_deref() == details.price_currency
            && self.description.as_deref() == details.description
            && self.photo_urls == details.photo_urls
            && self.tags == details.tags
    }

    /// The pet this row stores, the row just inserted for `new_pet` (which it
    /// [`holds`](Self::holds)): `new_pet`, checked already, with the row's id, rather than the
    /// row checked again.
    pub(crate) fn into_created(self, new_pet: &NewPet) -> Result<Pet, RepositoryError> {
        if self.version == PetVersion::first().get() {
            Ok(new_pet.clone().into_pet(PetId::new(self.id)))
        } else {
            self.into_pet()
        }
    }

    /// A stored row that breaks a domain rule means the data was changed behind the service's
    /// back: reported as unexpected (with the id, for the logs) rather than served.
    /// The row that stores `pet`.
    pub(crate) fn of(pet: &Pet) -> Self {
        let details = DetailColumns::of(pet.details());
        Self {
            id: pet.id().get(),
            name: pet.name().as_str().to_owned(),
            category_id: pet.category_id().get(),
            status: pet.status().as_str().to_owned(),
            version: pet.version().get(),
            price_minor: details.price_minor,
            price_currency: details.price_currency.map(str::to_owned),
            description: details.description.map(str::to_owned),
            photo_urls: details.photo_urls,
            tags: details.tags,
        }
    }

    /// The event `event_type` of `pet`, its payload the pet's row.
    pub(crate) fn event(event_type: EventType, pet: &Pet) -> QueryResult<NewEvent> {
        Ok(NewEvent {
            event_type,
            order_audience: None,
            data: payload(&Self::of(pet))?,
        })
    }

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
        )
        .with_details(PetDetails {
            price: match (self.price_minor, self.price_currency) {
                (Some(minor), Some(code)) => Some(
                    Currency::parse(&code)
                        .map_err(|e| e.to_string())
                        .and_then(|currency| {
                            Price::from_minor_units(minor, currency).map_err(|e| e.to_string())
                        })
                        .map_err(|e| corrupt("price", e))?,
                ),
                _ => None,
            },
            description: self
                .description
                .map(PetDescription::parse)
                .transpose()
                .map_err(|e| corrupt("description", e.to_string()))?,
            photo_urls: PhotoUrls::parse_stored(&lines(self.photo_urls.as_deref()))
                .map_err(|e| corrupt("photo URLs", e.to_string()))?,
            tags: Tags::parse(&lines(self.tags.as_deref()))
                .map_err(|e| corrupt("tags", e.to_string()))?,
        }))
    }
}

/// A list column's items: one per line (no item holds a line break), none when absent.
fn lines(column: Option<&str>) -> Vec<&str> {
    column.map_or_else(Vec::new, |text| text.split('\n').collect())
}

/// A list as its column keeps it: `None` when empty.
fn joined<'a>(items: impl Iterator<Item = &'a str>) -> Option<String> {
    let text = items.collect::<Vec<_>>().join("\n");
    (!text.is_empty()).then_some(text)
}

/// A pet's details as the columns of its row keep them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DetailColumns<'a> {
    pub(crate) price_minor: Option<i64>,
    pub(crate) price_currency: Option<&'static str>,
    pub(crate) description: Option<&'a str>,
    pub(crate) photo_urls: Option<String>,
    pub(crate) tags: Option<String>,
}

impl<'a> DetailColumns<'a> {
    pub(crate) fn of(details: &'a PetDetails) -> Self {
        Self {
            price_minor: details.price.map(|price| price.minor_units()),
            price_currency: details.price.map(|price| price.currency().code()),
            description: details.description.as_ref().map(PetDescription::as_str),
            photo_urls: joined(details.photo_urls.as_slice().iter().map(|url| url.as_str())),
            tags: joined(details.tags.as_slice().iter().map(|tag| tag.as_str())),
        }
    }
}
