//! The webhook resources' query and path parameters: `limit`, `cursor` (and `status` for
//! deliveries) of the listings, `endpointId` and `deliveryId`; and each listing's next `Link`.
//! Every bad value is a 400 `invalid_parameter` naming the parameter.

use actix_web::HttpRequest;
use petstore_domain::{DeliveryId, DeliveryStatus, EndpointId, PageLimit};

use super::{deliveries_path, ENDPOINTS_PATH};
use crate::error::ApiError;
use crate::wire::cursor::CursorCodec;
use crate::wire::query::{self, LIMIT};

const CURSOR: &str = "cursor";
const STATUS: &str = "status";

/// The cursor scope of the endpoint listing: a byte no other listing uses.
const ENDPOINTS_SCOPE: u8 = 0xFC;
/// The cursor scope of a delivery listing, followed by its endpoint and status: a cursor is
/// for the listing that issued it only.
const DELIVERIES_SCOPE: u8 = 0xFB;

/// What a listing asks for: a page size, and where the page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EndpointListQuery {
    pub(crate) limit: PageLimit,
    pub(crate) after: Option<EndpointId>,
}

/// What a delivery listing asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeliveryListQuery {
    pub(crate) endpoint: EndpointId,
    pub(crate) limit: PageLimit,
    pub(crate) status: Option<DeliveryStatus>,
    pub(crate) before: Option<DeliveryId>,
}

fn bad_cursor() -> ApiError {
    ApiError::invalid_parameter(
        "query parameter `cursor` is not a cursor this service issued for this listing; follow \
         the `Link: rel=\"next\"` header of the previous page",
    )
}

/// Reads `limit`, `cursor` and the `extra` parameter names a listing takes, each at most once.
fn read_pairs<const N: usize>(
    query_string: &str,
    operation: &str,
    names: [&str; N],
) -> Result<[Option<String>; N], ApiError> {
    let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
    for (name, value) in query::pairs(query_string)? {
        let Some(at) = names.iter().position(|known| *known == name) else {
            let list = names.map(|known| format!("`{known}`")).join(", ");
            return Err(ApiError::invalid_parameter(format!(
                "unknown query parameter `{name}`; {operation} takes {list}"
            )));
        };
        query::set_once(&mut values[at], &name, value)?;
    }
    Ok(values)
}

pub(crate) fn parse_endpoint_list(
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<EndpointListQuery, ApiError> {
    let [limit, cursor] = read_pairs(query_string, "listWebhookEndpoints", [LIMIT, CURSOR])?;
    let limit = query::page_limit(limit.as_deref())?;
    let after = cursor
        .map(|raw| {
            cursors
                .decode_scoped(&raw, &[ENDPOINTS_SCOPE])
                .and_then(|after| EndpointId::parse(after).ok())
                .ok_or_else(bad_cursor)
        })
        .transpose()?;
    Ok(EndpointListQuery { limit, after })
}

pub(crate) fn endpoint_list_link(
    query: &EndpointListQuery,
    last: EndpointId,
    cursors: &CursorCodec,
) -> String {
    query::next_link(
        ENDPOINTS_PATH,
        [
            (LIMIT, query.limit.get().to_string()),
            (
                CURSOR,
                cursors.encode_scoped(last.get(), &[ENDPOINTS_SCOPE]),
            ),
        ],
    )
}

/// The scope of a delivery listing's cursor: its endpoint and status filter.
fn deliveries_scope(endpoint: EndpointId, status: Option<DeliveryStatus>) -> [u8; 10] {
    let mut scope = [0; 10];
    scope[0] = DELIVERIES_SCOPE;
    scope[1..9].copy_from_slice(&endpoint.get().to_be_bytes());
    scope[9] = match status {
        None => 0,
        Some(DeliveryStatus::Pending) => 1,
        Some(DeliveryStatus::Succeeded) => 2,
        Some(DeliveryStatus::Failed) => 3,
    };
    scope
}

pub(crate) fn parse_delivery_list(
    endpoint: EndpointId,
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<DeliveryListQuery, ApiError> {
    let [limit, cursor, status] = read_pairs(
        query_string,
        "listWebhookDeliveries",
        [LIMIT, CURSOR, STATUS],
    )?;
    let limit = query::page_limit(limit.as_deref())?;
    let status = status
        .map(|raw| {
            DeliveryStatus::parse(&raw).ok_or_else(|| {
                ApiError::invalid_parameter(format!(
                    "query parameter `status` must be `pending`, `succeeded` or `failed` (got \
                     `{raw}`)"
                ))
            })
        })
        .transpose()?;
    let before = cursor
        .map(|raw| {
            cursors
                .decode_scoped(&raw, &deliveries_scope(endpoint, status))
                .and_then(|before| DeliveryId::parse(before).ok())
                .ok_or_else(bad_cursor)
        })
        .transpose()?;
    Ok(DeliveryListQuery {
        endpoint,
        limit,
        status,
        before,
    })
}

pub(crate) fn delivery_list_link(
    query: &DeliveryListQuery,
    last: DeliveryId,
    cursors: &CursorCodec,
) -> String {
    let mut pairs = vec![(LIMIT, query.limit.get().to_string())];
    if let Some(status) = query.status {
        pairs.push((STATUS, status.as_str().to_owned()));
    }
    pairs.push((
        CURSOR,
        cursors.encode_scoped(last.get(), &deliveries_scope(query.endpoint, query.status)),
    ));
    query::next_link(&deliveries_path(query.endpoint), pairs)
}

/// A path parameter that is an id from 1.
fn path_id(req: &HttpRequest, name: &str) -> Result<i64, ApiError> {
    let raw = req.match_info().get(name).unwrap_or_default();
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id >= 1 && raw.bytes().all(|byte| byte.is_ascii_digit()))
        .ok_or_else(|| {
            ApiError::invalid_parameter(format!(
                "path parameter `{name}` must be an integer from 1 to {} written as digits \
                 (got `{raw}`)",
                i64::MAX
            ))
        })
}

pub(crate) fn endpoint_id(req: &HttpRequest) -> Result<EndpointId, ApiError> {
    let id = path_id(req, "endpointId")?;
    EndpointId::parse(id).map_err(|error| ApiError::invalid_parameter(error.to_string()))
}

pub(crate) fn delivery_id(req: &HttpRequest) -> Result<DeliveryId, ApiError> {
    let id = path_id(req, "deliveryId")?;
    DeliveryId::parse(id).map_err(|error| ApiError::invalid_parameter(error.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    fn cursors() -> CursorCodec {
        CursorCodec::new(b"a secret for the webhook listing tests")
    }

    fn endpoint(id: i64) -> EndpointId {
        EndpointId::parse(id).unwrap()
    }

    #[test]
    fn bad_and_unknown_parameters_are_refused_naming_them() {
        for (query_string, naming) in [
            ("limit=0", "`limit`"),
            ("limit=1&limit=2", "at most once"),
            ("name=x", "unknown query parameter `name`"),
            ("cursor=abc", "`cursor`"),
        ] {
            let error = parse_endpoint_list(query_string, &cursors()).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidParameter);
            assert!(error.message().contains(naming), "{}", error.message());
        }
        let error = parse_delivery_list(endpoint(1), "status=done", &cursors()).unwrap_err();
        assert!(error.message().contains("`status`"), "{}", error.message());
    }

    #[test]
    fn a_delivery_cursor_is_for_its_endpoint_and_status_only() {
        let first = parse_delivery_list(endpoint(4), "limit=2&status=failed", &cursors()).unwrap();
        let link = delivery_list_link(&first, DeliveryId::parse(9).unwrap(), &cursors());
        let target = link
            .strip_prefix("</v1/webhook-endpoints/4/deliveries?")
            .and_then(|rest| rest.strip_suffix(">; rel=\"next\""))
            .unwrap();
        let next = parse_delivery_list(endpoint(4), target, &cursors()).unwrap();
        assert_eq!(next.before, DeliveryId::parse(9).ok());
        assert_eq!(next.status, Some(DeliveryStatus::Failed));
        assert!(parse_delivery_list(endpoint(5), target, &cursors()).is_err());
        let other_status = target.replace("status=failed", "status=pending");
        assert!(parse_delivery_list(endpoint(4), &other_status, &cursors()).is_err());

        let endpoints = parse_endpoint_list("limit=3", &cursors()).unwrap();
        let link = endpoint_list_link(&endpoints, endpoint(3), &cursors());
        assert!(
            link.starts_with("</v1/webhook-endpoints?limit=3&cursor="),
            "{link}"
        );
    }
}
