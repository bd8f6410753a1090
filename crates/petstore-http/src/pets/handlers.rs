//! `listPets` (`GET /v1/pets`) and `createPet` (`POST /v1/pets`).
//!
//! The `#[utoipa::path]` attributes are these operations' part of the OpenAPI document: every
//! status listed there is one these handlers (or `Authorized` and the storage error mapping
//! they use) can return.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::web::Payload;
use actix_web::{HttpRequest, HttpResponse};

use petstore_application::StoredResponse;
use petstore_domain::Pet;

use super::dto::{NewPetDto, PetDto, PetsDto};
use super::json_body::{PetJson, PetsJson};
use super::params::{next_page_link, parse_list_request, ListPetsParams, ListRequest};
use super::versions::{page_etag, pet_etag};
use crate::error::{ApiError, ErrorBody};
use crate::idempotency::{self, json_response, json_sent, Rendering};
use crate::routing::paths::pet_path;
use crate::state::{Authorized, HttpState, Read, Write};
use crate::wire::body::{read_limited, require_json_content_type};
use crate::wire::conditional;
use crate::wire::query;

/// One page of pets, ascending by id (by name for a search by name), as a bare array. When
/// more pets follow, a `Link: <...>; rel="next"` header points at the next page.
#[utoipa::path(
    get,
    path = "/pets",
    operation_id = "listPets",
    tag = "pets",
    summary = "List pets",
    description = "One page of pets in ascending `id` order (a search by `name` without `tag`: \
        in name order), as a bare array. When more pets match, the response carries \
        `Link: <...>; rel=\"next\"` (RFC 8288) with the URL of the next page (keeping `limit` \
        and `status`, adding `cursor`); the last page has no `Link`. Following `next` links \
        visits every matching pet exactly once, even while pets are being added (in name \
        order: every pet whose name does not change meanwhile). Each page carries a strong \
        `ETag` that changes with any pet on it; sending it back in `If-None-Match` answers 304 \
        without a body while the page is unchanged.",
    params(ListPetsParams,
        ("If-None-Match" = Option<String>, Header, nullable = false, description = "`ETag`s of pages already \
            held (`\"L1-5f1c0a9e3b2d4c71\"`, either form of a gzipped one, weak ones too), or \
            `*`. When one names this page as it is now, the answer is 304 without a body. A \
            malformed value is ignored.")),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "A page of pets (possibly empty).", body = PetsDto,
            headers(
                ("Link" = String, description = "Only when more pets match: \
                    `</v1/pets?limit=20&status=sold&cursor=...>; rel=\"next\"`, the next page."),
                ("ETag" = String, description = "Strong tag of this page's uncompressed \
                    bytes (`\"5f1c0a9e3b2d4c71\"`); a gzip-encoded page carries it with `-gz` \
                    inside the quotes (`\"5f1c0a9e3b2d4c71-gz\"`)."),
                ("Cache-Control" = String, description = "`private, no-cache`: a browser may \
                    keep the page but revalidates it with `If-None-Match` before each use; a \
                    shared cache does not keep it."))),
        (status = 304, description = "`If-None-Match` names the page as it is now: no body; \
            the headers a 200 would carry.",
            headers(
                ("ETag" = String, description = "The page's tag, as a 200 would carry it."),
                ("Link" = String, description = "As on a 200: the next page, when more pets \
                    match."),
                ("Cache-Control" = String, description = "`private, no-cache`, as on a 200."))),
        (status = 400, description = "`invalid_parameter`: `limit`, `status`, `cursor` or `id` \
            is invalid or given twice (`id`: more than 100 times), or the query has a parameter \
            listPets does not take.", body = ErrorBody),
        (status = 401, description = "`unauthorized`: the API key is missing, invalid, expired, \
            revoked or unknown to the key registry (all answered alike).",
            body = ErrorBody, headers(("WWW-Authenticate" = String,
                description = "`Bearer realm=\"petstore\"`, plus `error=\"invalid_token\"` when \
                    a key was sent but refused."))),
        (status = 500, description = "`internal_error`: an unexpected failure; details are \
            only logged.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`: storage is unreachable or busy; \
            retry later.", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait before retrying."))),
    ),
)]
pub(crate) async fn list_pets(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let ListRequest { query, ids } = parse_list_request(req.query_string(), caller.cursors())?;
    let page = match &ids {
        None => caller.pets().list_pets(query.clone()).await?,
        Some(ids) => caller.pets().list_pets_by_id(query.clone(), ids).await?,
    };

    let mut response = HttpResponse::Ok();
    if let Some(next_after) = page.next_after {
        response.insert_header((
            header::LINK,
            next_page_link(
                &query,
                ids.as_ref(),
                next_after,
                page.next_after_name.as_deref(),
                caller.cursors(),
            ),
        ));
    }
    let etag = page_etag(&page.pets);
    let pets = PetsDto(page.pets.into_iter().map(PetDto::from).collect());
    conditional::json_or_not_modified(&req, &etag, response, &PetsJson(&pets))
}

/// Checks in this order: key (401), `Content-Type` (415), size (413), JSON (400
/// `malformed_json`), fields (400 `validation_failed`). The 201 is only sent once the
/// repository has stored the pet.
#[utoipa::path(
    post,
    path = "/pets",
    operation_id = "createPet",
    tag = "pets",
    summary = "Add a pet",
    description = "Stores a new pet and answers 201 with it, its assigned `id` and its \
        `Location`. Checked in this order: API key (401), `Content-Type` (415), size (413), \
        arrival of the whole body within the body deadline (408, 10 s by default), JSON syntax (400 `malformed_json`), fields (400 `validation_failed`, naming every \
        offending field). The 201 is sent only once the pet is stored.",
    request_body(content = NewPetDto, content_type = "application/json",
        description = "The new pet. `status` omitted or `null` means `available`."),
    security(("bearerAuth" = ["write"])),
    responses(
        (status = 201, description = "The pet was stored.", body = PetDto,
            headers(("Location" = String, description = "`/v1/pets/{id}` of the new pet."),
                ("ETag" = String, description = "The new pet's entity tag, for `If-Match` on \
                    a later change."))),
        (status = 400, description = "`malformed_json`: the body is empty, not JSON or not an \
            object; `validation_failed`: a field is missing, unknown, given twice or invalid.",
            body = ErrorBody),
        (status = 401, description = "`unauthorized`: the API key is missing, invalid, expired, \
            revoked or unknown to the key registry (all answered alike).",
            body = ErrorBody, headers(("WWW-Authenticate" = String,
                description = "`Bearer realm=\"petstore\"`, plus `error=\"invalid_token\"` when \
                    a key was sent but refused."))),
        (status = 403, description = "`forbidden`: the API key is valid but read-only; \
            creating needs a `write` key.", body = ErrorBody,
            headers(("WWW-Authenticate" = String, description = "`Bearer realm=\"petstore\", \
                error=\"insufficient_scope\", scope=\"write\"`"))),
        (status = 408, description = "`request_timeout`: the body did not arrive within the \
            body deadline; the connection is closed.", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is over 64 KiB.",
            body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: the body is not declared as \
            `application/json` (a `charset=utf-8` parameter is fine).", body = ErrorBody),
        (status = 500, description = "`internal_error`: an unexpected failure; details are \
            only logged.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`: storage is unreachable or busy; \
            retry later.", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait before retrying."))),
    ),
)]
pub(crate) async fn create_pet(
    caller: Authorized<Write>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "createPet")?;
    require_json_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let creating = |plan| async {
        let new_pet = NewPetDto::from_json(&body)?.try_into_domain()?;
        Ok(caller.pets().create_pet(new_pet, plan).await?)
    };
    let rendering = Rendering::same(created).sent_directly(created_unrecorded);
    idempotency::write(&caller, &req, &body, rendering, creating).await
}

/// createPet's 201, as sent and as stored for a retry with the same `Idempotency-Key`.
fn created(pet: &Pet) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &created_headers(pet),
        &PetJson(&PetDto::from(pet.clone())),
    )
}

/// [`created`] as sent to a request without a key, which is not recorded.
fn created_unrecorded(pet: Pet) -> HttpResponse {
    let headers = created_headers(&pet);
    json_sent(StatusCode::CREATED, headers, &PetJson(&PetDto::from(pet)))
}

/// The 201's `Location` and `ETag`.
fn created_headers(pet: &Pet) -> [(header::HeaderName, String); 2] {
    [
        (header::LOCATION, pet_path(pet.id())),
        (header::ETAG, pet_etag(pet).to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use petstore_domain::{
        CategoryId, NewPet, PetDescription, PetDetails, PetId, PetName, PhotoUrls, Tags,
    };

    use super::*;
    use crate::idempotency::stored;
    use crate::idempotency::tests::sorted;

    #[test]
    fn a_create_without_a_key_is_sent_the_201_a_keyed_one_records() {
        let details = PetDetails {
            description: Some(PetDescription::parse("A \"friendly\" dog\n").unwrap()),
            photo_urls: PhotoUrls::parse(&["https://example.com/rex.jpg"]).unwrap(),
            tags: Tags::parse(&["dog", "Good  Boy"]).unwrap(),
            ..PetDetails::default()
        };
        let pet = NewPet::new(
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(3).unwrap(),
            None,
        )
        .with_details(details)
        .into_pet(PetId::new(42));
        let recorded = created(&pet);
        assert_eq!(recorded.status, 201);
        assert_eq!(sorted(stored(created_unrecorded(pet))), sorted(recorded));
    }
}
