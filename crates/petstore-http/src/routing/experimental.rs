//! What marks the store's operations (tag `store`) experimental: `X-API-Stability:
//! experimental` on every response on their paths (the route tables' `every_response_header`),
//! and `x-stability: experimental` on each operation with the header on each of its responses
//! in the document ([`ExperimentalStore`]). `openapi/tests.rs` checks every `store` operation.

use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

use super::common_responses::every_operation;

/// The header every response on an experimental path carries, and its value.
pub(crate) const STABILITY_HEADER: (&str, &str) = ("x-api-stability", "experimental");

/// Marks every operation of a resource's part of the document experimental. Listed after
/// `CommonResponses`, so their responses carry the header too.
pub(crate) struct ExperimentalStore;

impl Modify for ExperimentalStore {
    fn modify(&self, openapi: &mut OpenApi) {
        let header = HeaderBuilder::new()
            .description(Some("`experimental`: this operation may change within v1."))
            .build();
        for item in openapi.paths.paths.values_mut() {
            for operation in every_operation(item) {
                operation
                    .extensions
                    .get_or_insert_with(Default::default)
                    .merge(
                        ExtensionsBuilder::new()
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
