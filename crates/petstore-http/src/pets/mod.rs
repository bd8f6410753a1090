//! The pets resource: `listPets` and `createPet` on `/v1/pets`, and the deprecated `getPet` on
//! `/v1/pets/{petId}`; their DTOs, parameters and part of the OpenAPI document ([`PetsApi`]).

mod dto;
mod errors;
mod fields;
mod get_pet;
mod handlers;
mod params;

use actix_web::web::{self, ServiceConfig};
use utoipa::OpenApi;

#[cfg(test)]
pub(crate) use dto::NEW_PET_FIELDS;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::CommonResponses;
use crate::routing::paths::{PETS_PATH, PET_PATH};
use crate::routing::{get, resource, GET, GET_POST};
use dto::{NewPetDto, PetDto, PetStatusDto, PetsDto};
use get_pet::GetPetDeprecation;

/// The pets' operations and schemas, with the responses all operations share and getPet's
/// deprecation.
#[derive(OpenApi)]
#[openapi(
    paths(handlers::list_pets, handlers::create_pet, get_pet::get_pet),
    components(schemas(PetDto, NewPetDto, PetStatusDto, PetsDto)),
    modifiers(&IdempotentPosts, &CommonResponses, &GetPetDeprecation),
)]
pub(crate) struct PetsApi;

pub(crate) fn routes(config: &mut ServiceConfig) {
    // getPet is deprecated for clients (its OpenAPI operation says so) but served until its
    // sunset, when the use case answers 410 itself.
    #[allow(deprecated)]
    let get_pet_route = get().to(get_pet::get_pet);
    config
        .service(
            resource(PETS_PATH, "pets", GET_POST)
                .route(get().to(handlers::list_pets))
                .route(web::post().to(handlers::create_pet)),
        )
        .service(resource(PET_PATH, "pet", GET).route(get_pet_route));
}
