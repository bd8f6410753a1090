//! What the whole document says beyond its resources' operations: the bearer security scheme.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::Modify;

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
