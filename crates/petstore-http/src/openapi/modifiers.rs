//! Parts of the document that come from runtime values rather than attributes: the bearer
//! security scheme, and getPet's deprecation (its dates come from the application's
//! `deprecation` module, the same values the handler sends in its headers).

use petstore_application::deprecation::{get_pet_sunset, GET_PET_DEPRECATED_AT_UNIX};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
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
             410 `gone`. Use `GET /pets` (listPets) with the `status` filter instead."
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
            ("Link", format!("The replacement: `{}`.", successor_link())),
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
