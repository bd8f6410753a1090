//! The category operations' handlers and their part of the OpenAPI document
//! (`#[utoipa::path]`): every status listed is one these handlers (or `Authorized`, the body
//! reader and the storage error mapping they use) can answer.

use actix_web::http::{header, StatusCode};
use actix_web::web::Payload;
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::{CategoryError, StoredResponse};
use petstore_domain::Category;

use super::category_path;
use super::dto::{CategoryDto, CategoryPatchDto, NewCategoryDto};
use super::params::{category_id, next_page_link, parse_list};
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::idempotency::{self, json_response, Rendering};
use crate::state::{Authorized, HttpState, Read, Store};
use crate::wire::body::{
    read_limited, require_json_content_type, require_merge_patch_content_type,
};
use crate::wire::json::json_object;
use crate::wire::query;

/// A missing category is 404, a name another category has 409 `conflict` naming it.
impl From<CategoryError> for ApiError {
    fn from(err: CategoryError) -> Self {
        match err {
            CategoryError::NotFound(_) => Self::not_found(err.to_string()),
            CategoryError::NameTaken(_) => Self::new(ErrorCode::Conflict, err.to_string()),
            CategoryError::Repository(err) => err.into(),
        }
    }
}

/// One page of categories, ascending by id; `Link: rel="next"` when more follow.
#[utoipa::path(
    get,
    path = "/categories",
    operation_id = "listCategories",
    tag = "categories",
    summary = "List categories",
    description = "One page of categories in ascending `id` order, as a bare array, with \
        `Link: <...>; rel=\"next\"` (RFC 8288) when more follow; the last page has no `Link`. \
        Removed categories are not listed. Any query parameter other than `limit` and `cursor` \
        is 400.",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`; it is \
                signed and valid for this listing only."),
    ),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "A page of categories (possibly empty).",
            body = Vec<CategoryDto>,
            headers(("Link" = String, description = "Only when more categories follow: \
                `</v1/categories?limit=20&cursor=...>; rel=\"next\"`, the next page."))),
        (status = 400, description = "`invalid_parameter`: `limit` or `cursor` is invalid or \
            given twice, or the query has another parameter.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_categories(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = parse_list(req.query_string(), caller.cursors())?;
    let page = caller
        .categories()
        .list_categories(query.after, query.limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(last) = page.next_after {
        response.insert_header((header::LINK, next_page_link(&query, last, caller.cursors())));
    }
    let categories: Vec<CategoryDto> = page.categories.into_iter().map(CategoryDto::from).collect();
    Ok(response.json(categories))
}

/// The category with this id; a removed one is 404.
#[utoipa::path(
    get,
    path = "/categories/{categoryId}",
    operation_id = "getCategory",
    tag = "categories",
    summary = "Get a category",
    description = "The category with this id. A removed category, like an id no category \
        ever had, is 404.",
    params(("categoryId" = i64, Path, minimum = 1, description = "The category's `id`.")),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "The category.", body = CategoryDto),
        (status = 400, description = "`invalid_parameter`: `categoryId` is not an integer \
            from 1, or the query has a parameter.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 404, description = "`not_found`: no category has this id.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_category(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "getCategory")?;
    let category = caller.categories().get_category(category_id(&req)?).await?;
    Ok(HttpResponse::Ok().json(CategoryDto::from(category)))
}

/// Adds a category. The store's staff's: needs a `store` key.
#[utoipa::path(
    post,
    path = "/categories",
    operation_id = "createCategory",
    tag = "categories",
    summary = "Add a category",
    description = "Stores a new category and answers 201 with it, its assigned `id` and its \
        `Location`. Names are unique regardless of case: a name another category has is 409 \
        `conflict`. Checked in this order: API key (401), scope (403 unless a `store` key), \
        `Content-Type` (415), size (413), arrival of the body (408), JSON (400 \
        `malformed_json`), fields (400 `validation_failed`), the name (409). Retry safely with \
        `Idempotency-Key`.",
    request_body(content = NewCategoryDto, content_type = "application/json"),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 201, description = "The category was stored.", body = CategoryDto,
            headers(("Location" = String, description = "`/v1/categories/{id}` of the new \
                category."))),
        (status = 400, description = "`malformed_json` or `validation_failed`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 409, description = "`conflict`: a category has this name (regardless of \
            case); the message names it.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn create_category(
    caller: Authorized<Store>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "createCategory")?;
    require_json_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let creating = |plan| async {
        let name = NewCategoryDto::parse(&json_object(&body)?)?;
        Ok(caller.categories().create_category(name, plan).await?)
    };
    idempotency::write(&caller, &req, &body, Rendering::same(created), creating).await
}

/// createCategory's 201, as sent and as stored for a retry with the same `Idempotency-Key`.
fn created(category: &Category) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[(header::LOCATION, category_path(category.id()))],
        &CategoryDto::from(category.clone()),
    )
}

/// Renames a category by JSON Merge Patch. The store's staff's: needs a `store` key.
#[utoipa::path(
    patch,
    path = "/categories/{categoryId}",
    operation_id = "updateCategory",
    tag = "categories",
    summary = "Rename a category",
    description = "Changes the members a JSON Merge Patch (RFC 7396) gives: `name` renames the \
        category, keeping its `id` (its pets keep naming it); `{}` changes nothing. A name \
        another category has (regardless of case) is 409 `conflict`. Checked in this order: \
        API key (401), scope (403 unless a `store` key), `Content-Type` (415), size (413), \
        arrival of the body (408), JSON (400 `malformed_json`), fields and `categoryId` (400), \
        the category (404), the name (409). Retry safely with `Idempotency-Key`.",
    params(("categoryId" = i64, Path, minimum = 1, description = "The category's `id`.")),
    request_body(content = CategoryPatchDto, content_type = "application/json",
        description = "The members to change, a JSON Merge Patch; sent as \
            `application/merge-patch+json` it is the same. (Documented as `application/json`, \
            which every generated client can send.)"),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The category, as it is now.", body = CategoryDto),
        (status = 400, description = "`malformed_json`, `validation_failed` (`name` missing \
            its rule, `null`, or another member), or `invalid_parameter` (`categoryId`).",
            body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no category has this id.", body = ErrorBody),
        (status = 409, description = "`conflict`: another category has this name (regardless \
            of case); the message names it.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: neither \
            `application/merge-patch+json` nor `application/json`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn update_category(
    caller: Authorized<Store>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "updateCategory")?;
    require_merge_patch_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let updating = |plan| async {
        let name = CategoryPatchDto::parse(&json_object(&body)?)?;
        let id = category_id(&req)?;
        Ok(caller.categories().update_category(id, name, plan).await?)
    };
    idempotency::write(&caller, &req, &body, Rendering::same(updated), updating).await
}

/// updateCategory's 200, as sent and as stored for a retry with the same `Idempotency-Key`.
fn updated(category: &Category) -> StoredResponse {
    json_response(StatusCode::OK, &[], &CategoryDto::from(category.clone()))
}

/// Removes a category; its pets keep their `categoryId`. The store's staff's: needs a `store`
/// key.
#[utoipa::path(
    delete,
    path = "/categories/{categoryId}",
    operation_id = "deleteCategory",
    tag = "categories",
    summary = "Remove a category",
    description = "Removes the category: it is no longer listed or found (404), and its name is \
        free for a new category (which gets a new `id`). Pets naming it keep their \
        `categoryId` unchanged. A second DELETE is 404.",
    params(("categoryId" = i64, Path, minimum = 1, description = "The category's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 204, description = "The category was removed."),
        (status = 400, description = "`invalid_parameter`: `categoryId` is not an integer \
            from 1, or the query has a parameter.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no category has this id (or it was \
            removed already).", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn delete_category(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "deleteCategory")?;
    caller
        .categories()
        .remove_category(category_id(&req)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
