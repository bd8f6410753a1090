//! Every path the service answers, written once: the route tables (each resource's `ROUTES`,
//! the service's own), the `Location`, `Link` and redirect headers, and error messages use
//! these. The OpenAPI document's paths are relative to [`BASE_PATH`] (its servers end in it);
//! `app/docs_tests.rs` checks that each one, so prefixed, is routed.

/// Where to start (as is [`BASE_PATH`] itself): links to the documentation and the document.
pub const ROOT_PATH: &str = "/";
/// The version prefix of every API path (spec, section 9).
pub const BASE_PATH: &str = "/v1";
/// listPets and createPet.
pub const PETS_PATH: &str = "/v1/pets";
/// getPet, with its `petId` parameter as the router and the OpenAPI document write it.
pub const PET_PATH: &str = "/v1/pets/{petId}";
/// The OpenAPI document (3.1).
pub const OPENAPI_PATH: &str = "/v1/openapi.json";
/// The same document in OpenAPI 3.0.3, for tools that read only 3.0.
pub const OPENAPI_3_0_PATH: &str = "/v1/openapi-3.0.json";
/// Swagger UI (outside the API's version prefix: it is for people, not clients).
pub const DOCS_PATH: &str = "/docs";
/// Swagger UI's files, `index.html` for `/docs/`.
pub const DOCS_FILE_PATH: &str = "/docs/{file:.*}";
/// Liveness and readiness, outside the API's version prefix (no key needed).
pub const HEALTHZ_PATH: &str = "/healthz";
pub const READYZ_PATH: &str = "/readyz";
/// Prometheus metrics (no key; on the API's port unless given an address of their own).
pub const METRICS_PATH: &str = "/metrics";

/// The store's orders (experimental).
pub const ORDERS_PATH: &str = "/v1/store/orders";
/// One order.
pub const ORDER_PATH: &str = "/v1/store/orders/{orderId}";
/// The moves of one order.
pub const APPROVE_ORDER_PATH: &str = "/v1/store/orders/{orderId}/approve";
pub const DELIVER_ORDER_PATH: &str = "/v1/store/orders/{orderId}/deliver";
pub const CANCEL_ORDER_PATH: &str = "/v1/store/orders/{orderId}/cancel";

/// The path of one order, as `Location` gives it.
pub fn order_path(id: impl std::fmt::Display) -> String {
    format!("{ORDERS_PATH}/{id}")
}

/// The path of one pet, as `Location` gives it.
pub fn pet_path(id: impl std::fmt::Display) -> String {
    format!("{PETS_PATH}/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_paths_live_under_the_version_prefix() {
        for path in [PETS_PATH, PET_PATH, OPENAPI_PATH, OPENAPI_3_0_PATH] {
            assert!(path.starts_with(&format!("{BASE_PATH}/")), "{path}");
        }
        assert_eq!(PET_PATH, pet_path("{petId}"));
        assert_eq!(ORDER_PATH, order_path("{orderId}"));
        for (path, action) in [
            (APPROVE_ORDER_PATH, "approve"),
            (DELIVER_ORDER_PATH, "deliver"),
            (CANCEL_ORDER_PATH, "cancel"),
        ] {
            assert_eq!(path, format!("{ORDER_PATH}/{action}"));
        }
        assert_eq!(DOCS_FILE_PATH, format!("{DOCS_PATH}/{{file:.*}}"));
    }
}
