//! `getPet` (`GET /v1/pets/{petId}`), deprecated and removed at its sunset.
//!
//! Every response of this operation, errors included, carries the deprecation headers: a client
//! that only ever sees 404s should learn about the sunset too.

use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use petstore_application::deprecation::{get_pet_sunset, GET_PET_DEPRECATED_AT_UNIX};
use petstore_domain::{Pet, PetId};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::{Deprecated, OpenApi, RefOr};
use utoipa::Modify;

use super::dto::PetDto;
use super::json_body::PetJson;
use super::params::parse_pet_id;
use super::versions::pet_etag;
use crate::error::{ApiError, ErrorBody};
use crate::routing::paths::PETS_PATH;
use crate::state::{Authorized, Read};
use crate::wire::conditional::json_or_not_modified;
use crate::wire::query;

/// RFC 9745 `Deprecation` header.
pub(crate) const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
/// RFC 8594 `Sunset` header.
pub(crate) const SUNSET: HeaderName = HeaderName::from_static("sunset");
/// Where to go instead, as a `Link`: the same pet through listPets (`/v1/pets?id=3`), or the
/// listing itself when the request named no valid id.
fn successor_link(pet_id: Option<PetId>) -> String {
    const REL: &str = "; rel=\"successor-version\"";
    // Pieces pushed rather than `format!`ted: this runs for every getPet.
    let mut link = String::with_capacity(PETS_PATH.len() + REL.len() + 26);
    link.push('<');
    link.push_str(PETS_PATH);
    if let Some(id) = pet_id {
        link.push_str("?id=");
        link.push_str(itoa::Buffer::new().format(id.get()));
    }
    link.push('>');
    link.push_str(REL);
    link
}

/// Deprecated for clients (the OpenAPI operation says so, with the sunset and the replacement),
/// but served until the sunset; `pets::routes` registers it with the lint allowed.
#[deprecated(note = "getPet is removed at its sunset; use listPets with `id`")]
#[utoipa::path(
    get,
    path = "/pets/{petId}",
    operation_id = "getPet",
    tag = "pets",
    summary = "Get a pet (deprecated)",
    description = "The pet with this `id`. Every response of this operation carries the \
        `Deprecation`, `Sunset` and `Link: rel=\"successor-version\"` headers.",
    params(("petId" = i64, Path, description = "The pet's `id`."),
        ("If-None-Match" = Option<String>, Header, nullable = false,
            description = "Entity tags the client holds \
            (or `*`): if the pet's is one of them, 304 without a body.")),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "The pet.", body = PetDto,
            headers(("ETag" = String, description = "The pet's entity tag: it changes with \
                every change of the pet."))),
        (status = 304, description = "Not modified: the pet is still the one `If-None-Match` \
            names. No body.", headers(("ETag" = String, description = "The pet's entity tag."))),
        (status = 400, description = "`invalid_parameter`: `petId` is not an int64 integer.",
            body = ErrorBody),
        (status = 401, description = "`unauthorized`: the API key is missing, invalid, expired, \
            revoked or unknown to the key registry (all answered alike).",
            body = ErrorBody, headers(("WWW-Authenticate" = String,
                description = "`Bearer realm=\"petstore\"`, plus `error=\"invalid_token\"` when \
                    a key was sent but refused."))),
        (status = 404, description = "`not_found`: no pet has this `id`.", body = ErrorBody),
        (status = 410, description = "`gone`: the operation was removed at its sunset.",
            body = ErrorBody),
        (status = 500, description = "`internal_error`: an unexpected failure; details are \
            only logged.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`: storage is unreachable or busy; \
            retry later.", body = ErrorBody,
            headers(("Retry-After" = u32, description = "Seconds to wait before retrying."))),
    ),
)]
// The key's refusal is taken as a value rather than answered by actix, so that it carries the
// deprecation headers too.
pub(crate) async fn get_pet(
    caller: Result<Authorized<Read>, ApiError>,
    req: HttpRequest,
) -> HttpResponse {
    let pet_id = query::none_taken(req.query_string(), "getPet")
        .and_then(|()| parse_pet_id(req.match_info().get("petId").unwrap_or_default()));
    let link = successor_link(pet_id.as_ref().ok().copied());
    let mut response = match find_pet(caller, pet_id).await {
        Ok(pet) => {
            let etag = pet_etag(&pet);
            json_or_not_modified(
                &req,
                &etag,
                HttpResponse::Ok(),
                &PetJson(&PetDto::from(pet)),
            )
            .unwrap_or_else(|err| err.error_response())
        }
        Err(err) => err.error_response(),
    };
    for (name, value) in deprecation_headers() {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    if let Ok(link) = HeaderValue::try_from(link) {
        response.headers_mut().insert(header::LINK, link);
    }
    response
}

/// `Deprecation: @<unix seconds>`, `Sunset: <HTTP date>`: the same on every response, so
/// formatted once.
fn deprecation_headers() -> &'static [(HeaderName, HeaderValue); 2] {
    static HEADERS: LazyLock<[(HeaderName, HeaderValue); 2]> = LazyLock::new(|| {
        let header_value = |text: String| {
            HeaderValue::try_from(text).expect("digits and an HTTP date are valid header values")
        };
        [
            (
                DEPRECATION,
                header_value(format!("@{GET_PET_DEPRECATED_AT_UNIX}")),
            ),
            (
                SUNSET,
                header_value(httpdate::fmt_http_date(get_pet_sunset())),
            ),
        ]
    });
    &HEADERS
}

/// The key first, then the id (parsed by the handler, which also needs it for the `Link`).
async fn find_pet(
    caller: Result<Authorized<Read>, ApiError>,
    pet_id: Result<PetId, ApiError>,
) -> Result<Pet, ApiError> {
    let caller = caller?;
    Ok(caller.pets().get_pet(pet_id?).await?)
}

/// Marks getPet deprecated, says in its description when it goes and what replaces it, and
/// lists the headers every one of its responses carries.
pub(super) struct GetPetDeprecation;

impl Modify for GetPetDeprecation {
    fn modify(&self, openapi: &mut OpenApi) {
        let sunset = httpdate::fmt_http_date(get_pet_sunset());
        let Some(operation) = openapi
            .paths
            .paths
            .get_mut("/pets/{petId}")
            .and_then(|item| item.get.as_mut())
        else {
            return;
        };
        operation.deprecated = Some(Deprecated::True);
        let notice = format!(
            "**Deprecated.** Removed on {sunset} (the `Sunset` header): from then on it answers \
             410 `gone`. Use `GET /pets?id={{petId}}` (listPets by id) instead: the same pet, \
             with the other listings' paging and filters."
        );
        operation.description = Some(match operation.description.take() {
            Some(text) => format!("{notice}\n\n{text}"),
            None => notice,
        });

        let headers = [
            (
                "Deprecation",
                format!(
                    "RFC 9745: `@{GET_PET_DEPRECATED_AT_UNIX}`, the moment getPet was deprecated \
                     (Unix seconds)."
                ),
            ),
            (
                "Sunset",
                format!("RFC 8594: `{sunset}`, when getPet is removed."),
            ),
            (
                "Link",
                format!(
                    "The replacement, for this pet: `{}` (`{}` when `petId` is invalid).",
                    successor_link(Some(PetId::new(3))).replace("id=3", "id={petId}"),
                    successor_link(None)
                ),
            ),
        ];
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                for (name, description) in &headers {
                    let header = HeaderBuilder::new().description(Some(description)).build();
                    response.headers.insert((*name).to_owned(), header.into());
                }
            }
        }
    }
}
