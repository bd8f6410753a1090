//! `listPets` (`GET /v1/pets`) and `createPet` (`POST /v1/pets`).

use actix_web::http::header;
use actix_web::web::{Data, Payload};
use actix_web::{HttpRequest, HttpResponse};

use super::authorize;
use crate::body::{read_limited, require_json_content_type};
use crate::dto::{NewPetDto, PetDto};
use crate::error::ApiError;
use crate::params::{next_page_link, parse_list_query};
use crate::state::HttpState;

/// One page of pets, ascending by id, as a bare array. When more pets follow, a
/// `Link: <...>; rel="next"` header points at the next page.
pub(crate) async fn list_pets(
    state: Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    authorize(&req, &state)?;
    let query = parse_list_query(req.query_string())?;
    let page = state.service().list_pets(query).await?;

    let mut response = HttpResponse::Ok();
    if let Some(next_after) = page.next_after {
        response.insert_header((header::LINK, next_page_link(&query, next_after)));
    }
    let pets: Vec<PetDto> = page.pets.into_iter().map(PetDto::from).collect();
    Ok(response.json(pets))
}

/// Checks in this order: key (401), `Content-Type` (415), size (413), JSON (400
/// `malformed_json`), fields (400 `validation_failed`). The 201 is only sent once the
/// repository has stored the pet.
pub(crate) async fn create_pet(
    state: Data<HttpState>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    authorize(&req, &state)?;
    require_json_content_type(&req)?;
    let body = read_limited(&req, payload, state.json_limit()).await?;
    let new_pet = NewPetDto::from_json(&body)?.try_into_domain()?;
    let pet = state.service().create_pet(new_pet).await?;

    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/pets/{}", pet.id)))
        .json(PetDto::from(pet)))
}
