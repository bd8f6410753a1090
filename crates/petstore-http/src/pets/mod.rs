//! The pets resource: `listPets` and `createPet` on `/v1/pets`; the deprecated `getPet`,
//! `updatePet` and `deletePet` on `/v1/pets/{petId}`; their DTOs, parameters, entity tags and
//! part of the OpenAPI document ([`PetsApi`]).

mod changes;
mod details;
mod dto;
mod errors;
mod fields;
mod get_pet;
mod handlers;
mod json_body;
mod links;
mod params;
mod patch_dto;
mod versions;

use actix_web::http::Method;
use petstore_domain::KeyScope;
use utoipa::OpenApi;

#[cfg(test)]
pub(crate) use details::DETAIL_FIELDS;
#[cfg(test)]
pub(crate) use dto::NEW_PET_FIELDS;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::CommonResponses;
use crate::routing::paths::{PETS_PATH, PET_PATH};
use crate::routing::table::{Access, Operation, Routes};
use details::PriceDto;
use dto::{NewPetDto, PetDto, PetStatusDto, PetsDto};
use get_pet::GetPetDeprecation;
use links::CreatedPetLinks;
use patch_dto::PetPatchDto;

/// The pets' operations and schemas, with the responses all operations share and getPet's
/// deprecation.
#[derive(OpenApi)]
#[openapi(
    paths(
        handlers::list_pets,
        handlers::create_pet,
        get_pet::get_pet,
        changes::update_pet,
        changes::delete_pet
    ),
    components(schemas(PetDto, NewPetDto, PetPatchDto, PetStatusDto, PetsDto, PriceDto)),
    modifiers(&IdempotentPosts, &CommonResponses, &GetPetDeprecation, &CreatedPetLinks),
)]
pub(crate) struct PetsApi;

/// The pets' operations: the router, the metrics' labels and which paths need a key read them
/// from here.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[
        Operation {
            id: "listPets",
            method: Method::GET,
            path: PETS_PATH,
            access: Access::Key(KeyScope::Read),
            handler: |route| route.to(handlers::list_pets),
        },
        Operation {
            id: "createPet",
            method: Method::POST,
            path: PETS_PATH,
            access: Access::Key(KeyScope::Write),
            handler: |route| route.to(handlers::create_pet),
        },
        // Deprecated for clients (its OpenAPI operation says so) but served until its sunset,
        // when the use case answers 410 itself.
        Operation {
            id: "getPet",
            method: Method::GET,
            path: PET_PATH,
            access: Access::Key(KeyScope::Read),
            #[allow(deprecated)]
            handler: |route| route.to(get_pet::get_pet),
        },
        Operation {
            id: "updatePet",
            method: Method::PATCH,
            path: PET_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(changes::update_pet),
        },
        Operation {
            id: "deletePet",
            method: Method::DELETE,
            path: PET_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(changes::delete_pet),
        },
    ],
    every_response_header: None,
};

/// A pet as an event's `data` (`crate::events`): as the pet's own operations answer it.
pub(crate) fn event_payload(pet: petstore_domain::Pet) -> Box<serde_json::value::RawValue> {
    // A DTO of strings and numbers always serializes.
    serde_json::value::to_raw_value(&PetDto::from(pet)).unwrap_or_default()
}
