//! The store's inventory (experimental): `getInventory` on `/v1/store/inventory`, how many live
//! pets each status has, as the Swagger Petstore answers it; its DTO, route and part of the
//! OpenAPI document ([`InventoryApi`]). Any key reads it. Like the orders, every response on
//! its path carries `X-API-Stability: experimental`.

mod dto;
mod handlers;

use actix_web::http::Method;
use petstore_domain::KeyScope;
use utoipa::OpenApi;

use crate::routing::common_responses::CommonResponses;
use crate::routing::experimental::{ExperimentalStore, STABILITY_HEADER};
use crate::routing::table::{Access, Operation, Routes};
use dto::InventoryDto;

/// getInventory.
const INVENTORY_PATH: &str = "/v1/store/inventory";

/// The inventory's operation and schema, with the responses all operations share, marked
/// experimental like the rest of the store.
#[derive(OpenApi)]
#[openapi(
    paths(handlers::get_inventory),
    components(schemas(InventoryDto)),
    modifiers(&CommonResponses, &ExperimentalStore),
)]
pub(crate) struct InventoryApi;

/// The inventory's operation: the router, the metrics' labels and which paths need a key read
/// it from here.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[Operation {
        id: "getInventory",
        method: Method::GET,
        path: INVENTORY_PATH,
        access: Access::Key(KeyScope::Read),
        handler: |route| route.to(handlers::get_inventory),
    }],
    every_response_header: Some(STABILITY_HEADER),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_lives_under_the_version_prefix() {
        assert!(INVENTORY_PATH.starts_with(&format!("{}/", crate::BASE_PATH)));
    }
}
