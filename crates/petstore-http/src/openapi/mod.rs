//! The OpenAPI 3.1 document of the API, generated from the code: each resource's part (its
//! handlers' `#[utoipa::path]` attributes, its DTOs' `ToSchema` derives, its own modifiers:
//! `pets::PetsApi`, `orders::OrdersApi`, each with the `CommonResponses`) merged under the
//! document's info, tags and security scheme. Served at `GET /v1/openapi.json`;
//! `docs/openapi.json` is a copy a test keeps equal to it.

mod info;
mod modifiers;
pub mod v3_0;

use utoipa::OpenApi;

use crate::categories::CategoriesApi;
use crate::error::ErrorBody;
use crate::events::EventsApi;
use crate::inventory::InventoryApi;
use crate::orders::OrdersApi;
use crate::pets::PetsApi;
use crate::routing::servers::ApiServers;
use crate::webhooks::WebhooksApi;
use info::DESCRIPTION;
use modifiers::BearerAuth;

pub use info::{API_TITLE, API_VERSION};
pub use modifiers::BEARER_AUTH;

#[derive(OpenApi)]
#[openapi(
    info(
        title = API_TITLE,
        version = API_VERSION,
        description = DESCRIPTION,
        license(name = "MIT", identifier = "MIT"),
    ),
    components(schemas(ErrorBody)),
    tags(
        (name = "pets", description = "The animals of the store."),
        (name = "store", description = "Orders for pets and the count of pets by status. \
            **Experimental**: the operations carry `x-stability: experimental` and every \
            response `X-API-Stability: experimental`; they may change within v1."),
        (name = "categories", description = "Named groups of pets: a pet's `categoryId` may \
            name one."),
        (name = "events", description = "What changed, in the order it was committed: one \
            event per change of a pet, an order or a category."),
        (name = "webhooks", description = "Endpoints the store posts its events to, signed \
            per Standard Webhooks 1.0, retried on a schedule; and each delivery's attempts. \
            The store's staff's: every operation needs a `store` key."),
    ),
    modifiers(&BearerAuth),
)]
struct ApiDoc;

/// The document, with `servers` from configuration.
pub fn document(servers: &ApiServers) -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi()
        .merge_from(PetsApi::openapi())
        .merge_from(OrdersApi::openapi())
        .merge_from(InventoryApi::openapi())
        .merge_from(CategoriesApi::openapi())
        .merge_from(EventsApi::openapi())
        .merge_from(WebhooksApi::openapi());
    document.webhooks = Some(crate::webhooks::posted_section());
    document.servers = Some(servers.to_openapi());
    document
}

/// The document as pretty-printed JSON with a final newline: what `GET /v1/openapi.json` serves
/// and `petstore openapi` prints. Every map in it is ordered (utoipa keeps paths, schemas,
/// responses and headers in `BTreeMap`s), so the same code and servers give the same bytes.
pub fn document_json(servers: &ApiServers) -> String {
    let mut json = serde_json::to_string_pretty(&document(servers))
        .expect("an OpenAPI document always serializes");
    json.push('\n');
    json
}

/// The document in OpenAPI 3.0.3 (see [`v3_0`]), as pretty-printed JSON with a final newline.
pub fn document_json_3_0(servers: &ApiServers) -> String {
    let document =
        serde_json::to_value(document(servers)).expect("an OpenAPI document always serializes");
    let mut json = serde_json::to_string_pretty(&v3_0::downgrade(document))
        .expect("JSON values always serialize");
    json.push('\n');
    json
}

#[cfg(test)]
mod tests;
