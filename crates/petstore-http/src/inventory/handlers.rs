//! The inventory's handler and its part of the OpenAPI document (`#[utoipa::path]`).

use actix_web::{HttpRequest, HttpResponse};

use super::dto::InventoryDto;
use crate::error::{ApiError, ErrorBody};
use crate::state::{Authorized, Read};
use crate::wire::query;

/// How many live pets each status has, counted at most a second ago.
#[utoipa::path(
    get,
    path = "/store/inventory",
    operation_id = "getInventory",
    tag = "store",
    summary = "Count pets by status (experimental)",
    description = "A map of each pet status to the number of pets in it, every status present \
        (0 included); removed pets are never counted. Each instance counts at most once a \
        second: the counts are those of at most 1 s ago (while one request counts again, the \
        others meanwhile get the count before it), so a pet just created or moved by an order \
        may take up to a second to show. Any query parameter is 400.",
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "The number of pets in each status.", body = InventoryDto),
        (status = 400, description = "`invalid_parameter`: the query has a parameter.",
            body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_inventory(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "getInventory")?;
    let inventory = caller.inventory().inventory().await?;
    Ok(HttpResponse::Ok().json(InventoryDto::from(inventory)))
}
