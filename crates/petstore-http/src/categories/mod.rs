//! The categories resource: `listCategories` and `createCategory` on `/v1/categories`,
//! `getCategory`, `updateCategory` (a JSON Merge Patch that renames) and `deleteCategory` on
//! `/v1/categories/{categoryId}`; their DTOs, parameters, routes and part of the OpenAPI
//! document ([`CategoriesApi`]). Any key reads them; changing them is the store's staff's (a
//! `store` key). Pets only name a category by its id: nothing here touches a pet.

mod dto;
mod handlers;
mod params;

use actix_web::http::Method;
use petstore_domain::KeyScope;
use utoipa::OpenApi;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::CommonResponses;
use crate::routing::table::{Access, Operation, Routes};
use dto::{CategoryDto, CategoryPatchDto, NewCategoryDto};

/// listCategories and createCategory.
const CATEGORIES_PATH: &str = "/v1/categories";
/// One category, with its `categoryId` parameter as the router and the document write it.
const CATEGORY_PATH: &str = "/v1/categories/{categoryId}";

/// The path of one category, as `Location` gives it.
fn category_path(id: impl std::fmt::Display) -> String {
    format!("{CATEGORIES_PATH}/{id}")
}

/// The categories' operations and schemas, with the responses all operations share.
#[derive(OpenApi)]
#[openapi(
    paths(
        handlers::list_categories,
        handlers::create_category,
        handlers::get_category,
        handlers::update_category,
        handlers::delete_category,
    ),
    components(schemas(CategoryDto, NewCategoryDto, CategoryPatchDto)),
    modifiers(&IdempotentPosts, &CommonResponses),
)]
pub(crate) struct CategoriesApi;

/// The categories' operations: the router, the metrics' labels and which paths need a key read
/// them from here.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[
        Operation {
            id: "listCategories",
            method: Method::GET,
            path: CATEGORIES_PATH,
            access: Access::Key(KeyScope::Read),
            handler: |route| route.to(handlers::list_categories),
        },
        Operation {
            id: "createCategory",
            method: Method::POST,
            path: CATEGORIES_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(handlers::create_category),
        },
        Operation {
            id: "getCategory",
            method: Method::GET,
            path: CATEGORY_PATH,
            access: Access::Key(KeyScope::Read),
            handler: |route| route.to(handlers::get_category),
        },
        Operation {
            id: "updateCategory",
            method: Method::PATCH,
            path: CATEGORY_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(handlers::update_category),
        },
        Operation {
            id: "deleteCategory",
            method: Method::DELETE,
            path: CATEGORY_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(handlers::delete_category),
        },
    ],
    every_response_header: None,
};

/// A category as an event's `data` (`crate::events`): as the category's own operations answer it.
pub(crate) fn event_payload(
    category: petstore_domain::Category,
) -> Box<serde_json::value::RawValue> {
    // A DTO of strings and numbers always serializes.
    serde_json::value::to_raw_value(&CategoryDto::from(category)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_live_under_the_version_prefix_and_agree() {
        assert!(CATEGORIES_PATH.starts_with(&format!("{}/", crate::BASE_PATH)));
        assert_eq!(CATEGORY_PATH, category_path("{categoryId}"));
    }
}
