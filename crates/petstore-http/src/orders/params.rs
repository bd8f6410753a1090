//! The orders' query and path parameters: `limit`, `status`, `petId` and `cursor` of
//! `listOrders`, `orderId` of the others; and the `Link` to a listing's next page. Every bad
//! value is a 400 `invalid_parameter` naming the parameter, as for the pets.

use actix_web::HttpRequest;
use petstore_domain::{OrderFilter, OrderId, OrderListQuery, OrderStatus, PetId};

use crate::error::ApiError;
use crate::routing::paths::ORDERS_PATH;
use crate::wire::cursor::CursorCodec;
use crate::wire::query::{self, LIMIT};

const STATUS: &str = "status";
const PET_ID: &str = "petId";
const CURSOR: &str = "cursor";

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

/// Reads a `listOrders` query string: `limit`, `status`, `petId` and `cursor`, each at most once;
/// any other parameter is refused, naming it, as for listPets.
pub(crate) fn parse_list(
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<OrderListQuery, ApiError> {
    let (mut limit, mut status, mut pet_id, mut cursor) = (None, None, None, None);
    for (name, value) in query::pairs(query_string)? {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            STATUS => &mut status,
            PET_ID => &mut pet_id,
            CURSOR => &mut cursor,
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listOrders takes `limit`, `status`, \
                     `petId` and `cursor`"
                )))
            }
        };
        query::set_once(slot, &name, value)?;
    }
    let bad = |name: &str, rule: &dyn std::fmt::Display| {
        ApiError::invalid_parameter(format!("query parameter `{name}` {rule}"))
    };
    let limit = query::page_limit(limit.as_deref())?;
    let filter = OrderFilter {
        status: status
            .map(|raw| OrderStatus::parse(&raw).map_err(|err| bad(STATUS, &err)))
            .transpose()?,
        pet_id: pet_id
            .map(|raw| PetId::parse(&raw).map_err(|err| bad(PET_ID, &err)))
            .transpose()?,
    };
    // A cursor is valid only for the filters it was issued with.
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
    Ok(OrderListQuery {
        filter,
        after,
        limit,
    })
}

/// `Link: <...>; rel="next"` to the page after `query`'s, which ended at `last`, keeping its
/// limit and filters.
pub(crate) fn next_page_link(
    query: &OrderListQuery,
    last: OrderId,
    cursors: &CursorCodec,
) -> String {
    let filter = query.filter;
    let status = filter.status.map(|status| (STATUS, status.to_string()));
    let pet_id = filter.pet_id.map(|pet_id| (PET_ID, pet_id.to_string()));
    let cursor = (CURSOR, cursors.encode_scoped(last.get(), &scope(filter)));
    query::next_link(
        ORDERS_PATH,
        std::iter::once((LIMIT, query.limit.get().to_string()))
            .chain(status)
            .chain(pet_id)
            .chain(std::iter::once(cursor)),
    )
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    fn cursors() -> CursorCodec {
        CursorCodec::new(b"a secret for the order listing tests")
    }

    fn refused(query_string: &str, naming: &str) {
        let err = parse_list(query_string, &cursors()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter, "{query_string}");
        assert!(
            err.message().contains(naming),
            "{query_string}: {}",
            err.message()
        );
    }

    #[test]
    fn bad_duplicate_and_unknown_parameters_are_refused_naming_them() {
        refused("limit=0", "`limit`");
        refused("limit=101", "`limit`");
        refused("limit=5&limit=6", "`limit` must be given at most once");
        refused(
            "status=placed&status=approved",
            "`status` must be given at most once",
        );
        refused("status=shipped", "`status`");
        refused("petId=x", "`petId`");
        refused("pet_id=3", "unknown query parameter `pet_id`");
        refused("cursor=abc", "`cursor`");
    }

    #[test]
    fn the_next_link_carries_a_cursor_valid_for_the_same_filters_only() {
        let first = parse_list("limit=2&status=placed&petId=7", &cursors()).unwrap();
        assert_eq!(first.after, None);
        let link = next_page_link(&first, OrderId::new(41), &cursors());
        let target = link
            .strip_prefix("</v1/store/orders?")
            .and_then(|rest| rest.strip_suffix(">; rel=\"next\""))
            .unwrap();
        assert!(
            target.starts_with("limit=2&status=placed&petId=7&cursor="),
            "{link}"
        );
        let next = parse_list(target, &cursors()).unwrap();
        assert_eq!(next.after, Some(OrderId::new(41)));
        assert_eq!(next.filter, first.filter);

        let cursor = target.rsplit_once("cursor=").unwrap().1;
        refused(
            &format!("limit=2&status=placed&cursor={cursor}"),
            "`cursor`",
        );
    }
}
