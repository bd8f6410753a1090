//! The orders' query and path parameters: `limit`, `status`, `petId` and `cursor` of
//! `listOrders`, `orderId` of the others; and the `Link` to a listing's next page. Every bad
//! value is a 400 `invalid_parameter` naming the parameter, as for the pets.

use actix_web::web::Query;
use actix_web::HttpRequest;
use petstore_application::OrderFilter;
use petstore_domain::{OrderId, OrderStatus, PetId};

use crate::cursor::CursorCodec;
use crate::error::ApiError;
use crate::paths::ORDERS_PATH;

/// Largest page of orders, and the default.
const MAX_LIMIT: usize = 100;
const DEFAULT_LIMIT: usize = 20;

/// What a `listOrders` query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListRequest {
    pub(crate) filter: OrderFilter,
    /// From the cursor: the last order of the previous page.
    pub(crate) after: Option<OrderId>,
    pub(crate) limit: usize,
}

/// The cursor scope of an order listing: a byte no pet status uses, then the filters.
fn scope(filter: OrderFilter) -> Vec<u8> {
    let mut scope = vec![0xFF];
    scope.push(filter.status.map_or(0, |status| {
        OrderStatus::ALL
            .iter()
            .position(|known| *known == status)
            .map_or(0, |at| u8::try_from(at + 1).unwrap_or(0))
    }));
    if let Some(pet_id) = filter.pet_id {
        scope.extend_from_slice(&pet_id.get().to_be_bytes());
    }
    scope
}

/// Reads a `listOrders` query string; an unknown parameter is refused, as for listPets.
pub(crate) fn parse_list(query: &str, cursors: &CursorCodec) -> Result<ListRequest, ApiError> {
    let pairs = Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|_| ApiError::invalid_parameter("the query string is not valid"))?
        .into_inner();
    let mut filter = OrderFilter::default();
    let (mut limit, mut cursor) = (DEFAULT_LIMIT, None);
    for (name, value) in pairs {
        let bad =
            |rule: &str| ApiError::invalid_parameter(format!("query parameter `{name}` {rule}"));
        match name.as_str() {
            "limit" => {
                limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|limit| (1..=MAX_LIMIT).contains(limit))
                    .ok_or_else(|| bad("must be an integer from 1 to 100"))?;
            }
            "status" => {
                filter.status =
                    Some(OrderStatus::parse(&value).map_err(|err| bad(&err.to_string()))?);
            }
            "petId" => {
                filter.pet_id = Some(PetId::parse(&value).map_err(|err| bad(&err.to_string()))?);
            }
            "cursor" => cursor = Some(value),
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listOrders takes `limit`, `status`, \
                     `petId` and `cursor`"
                )))
            }
        }
    }
    let after = cursor
        .map(|raw| {
            cursors
                .decode_scoped(&raw, &scope(filter))
                .map(OrderId::new)
                .ok_or_else(|| {
                    ApiError::invalid_parameter(
                        "query parameter `cursor` is not a cursor this service issued for this \
                         listing; follow the `Link: rel=\"next\"` header of the previous page",
                    )
                })
        })
        .transpose()?;
    Ok(ListRequest {
        filter,
        after,
        limit,
    })
}

/// `Link: <...>; rel="next"` to the page after `last`, keeping the limit and filters.
pub(crate) fn next_page_link(
    filter: OrderFilter,
    last: OrderId,
    limit: usize,
    cursors: &CursorCodec,
) -> String {
    let mut target = format!("{ORDERS_PATH}?limit={limit}");
    if let Some(status) = filter.status {
        target.push_str(&format!("&status={status}"));
    }
    if let Some(pet_id) = filter.pet_id {
        target.push_str(&format!("&petId={pet_id}"));
    }
    let cursor = cursors.encode_scoped(last.get(), &scope(filter));
    target.push_str(&format!("&cursor={cursor}"));
    format!("<{target}>; rel=\"next\"")
}

/// The `orderId` path parameter.
pub(crate) fn order_id(req: &HttpRequest) -> Result<OrderId, ApiError> {
    let raw = req.match_info().get("orderId").unwrap_or_default();
    OrderId::parse(raw).ok_or_else(|| {
        ApiError::invalid_parameter(format!(
            "path parameter `orderId` must be an int64 integer written as digits (got `{raw}`)"
        ))
    })
}
