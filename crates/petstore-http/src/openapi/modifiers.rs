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
                "An API key issued with `petstore keys issue --name NAME \
                 [--scope read|write|store]`, sent as `Authorization: Bearer <key>`. Keys are \
                 HS256 JWTs signed by the service and recorded in its key registry; they expire \
                 (90 days by default) and can be revoked. Each operation's security requirement \
                 names the scope it needs, and each scope may do all the ones before it: `read` \
                 lists and gets pets and the key's own orders; `write` also creates pets, places \
                 orders and cancels its own; `store` (the store's staff) also sees and cancels \
                 every order and approves and delivers them. A key whose scope falls short gets \
                 403 `forbidden`.",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(BEARER_AUTH, SecurityScheme::Http(scheme));
    }
}
