//! Parts of the document that come from runtime values rather than attributes: the bearer
//! security scheme, and getPet's deprecation (its dates come from the application's
//! `deprecation` module, the same values the handler sends in its headers).

use petstore_application::deprecation::{get_pet_sunset, GET_PET_DEPRECATED_AT_UNIX};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref};
use utoipa::openapi::{Deprecated, OpenApi, RefOr};
use utoipa::Modify;

use crate::handlers::get_pet::successor_link;

/// The name operations use in their `security` requirement.
pub const BEARER_AUTH: &str = "bearerAuth";

/// `bearerAuth`: HTTP bearer with an API key (a JWT the service issued) as the token.
pub(super) struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("JWT")
            .description(Some(
                "An API key issued with `petstore keys issue --name NAME [--scope read|write]`, \
                 sent as `Authorization: Bearer <key>`. Keys are HS256 JWTs signed by the \
                 service and recorded in its key registry; they expire (90 days by default) \
                 and can be revoked. A `read` key may list and get pets; creating needs a \
                 `write` key (403 otherwise).",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(BEARER_AUTH, SecurityScheme::Http(scheme));
    }
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
                    successor_link(Some(petstore_domain::PetId::new(3)))
                        .replace("id=3", "id={petId}"),
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

/// What every operation may answer beyond its own statuses: 429 when per-key rate limits are on,
/// the rate-limit headers on every response to a key, and `X-Request-Id` on every response.
pub(super) struct OperabilityHeaders;

impl Modify for OperabilityHeaders {
    fn modify(&self, openapi: &mut OpenApi) {
        let string_header =
            |description: &str| HeaderBuilder::new().description(Some(description)).build();
        let request_id = string_header(
            "The request's id: the client's `X-Request-Id` when it sent a sane one (1 to 128 \
             printable ASCII characters), else a UUIDv7. Every log line of the request carries it.",
        );
        let policy = string_header(
            "Only when per-key rate limits are on (IETF httpapi rate-limit headers draft): \
             `\"per-key\";q=BURST;w=SECONDS`, the bucket of this key and how long it takes to refill.",
        );
        let state = string_header(
            "Only when per-key rate limits are on: `\"per-key\";r=REMAINING;t=SECONDS`, requests \
             left now and seconds until the next is allowed.",
        );
        for item in openapi.paths.paths.values_mut() {
            for operation in [item.get.as_mut(), item.post.as_mut()]
                .into_iter()
                .flatten()
            {
                let too_many = ResponseBuilder::new()
                    .description(
                        "`rate_limited`: this API key has used up its rate limit (per instance); \
                         retry after `Retry-After` seconds.",
                    )
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Error")))
                            .build(),
                    )
                    .header(
                        "Retry-After",
                        HeaderBuilder::new()
                            .description(Some("Seconds until the key may call again."))
                            .build(),
                    )
                    .build();
                operation
                    .responses
                    .responses
                    .insert("429".to_owned(), too_many.into());
                for (status, response) in operation.responses.responses.iter_mut() {
                    let RefOr::T(response) = response else {
                        continue;
                    };
                    response
                        .headers
                        .insert("X-Request-Id".to_owned(), request_id.clone().into());
                    if status.starts_with('2') || status == "429" {
                        response
                            .headers
                            .insert("RateLimit-Policy".to_owned(), policy.clone().into());
                        response
                            .headers
                            .insert("RateLimit".to_owned(), state.clone().into());
                    }
                }
            }
        }
    }
}

/// Marks the store's operations experimental: `x-stability: experimental` on each, and the
/// `X-API-Stability` header on each of their responses.
pub(super) struct ExperimentalStore;

impl Modify for ExperimentalStore {
    fn modify(&self, openapi: &mut OpenApi) {
        let header = HeaderBuilder::new()
            .description(Some("`experimental`: this operation may change within v1."))
            .build();
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !path.starts_with("/store/") {
                continue;
            }
            for operation in [item.get.as_mut(), item.post.as_mut()]
                .into_iter()
                .flatten()
            {
                operation
                    .extensions
                    .get_or_insert_with(Default::default)
                    .merge(
                        utoipa::openapi::extensions::ExtensionsBuilder::new()
                            .add("x-stability", "experimental")
                            .build(),
                    );
                for response in operation.responses.responses.values_mut() {
                    if let RefOr::T(response) = response {
                        response
                            .headers
                            .insert("X-API-Stability".to_owned(), header.clone().into());
                    }
                }
            }
        }
    }
}
