//! The order operations' handlers and their part of the OpenAPI document (`#[utoipa::path]`).

use actix_web::http::{header, StatusCode};
use actix_web::web::Payload;
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::StoredResponse;
use petstore_domain::{Order, OrderAction};

use super::dto::{NewOrderDto, OrderDto, OrderStatusDto};
use super::params::{next_page_link, order_id, parse_list};
use crate::error::{ApiError, ErrorBody};
use crate::idempotency::{self, json_response, Rendering};
use crate::routing::paths::order_path;
use crate::state::{Authorized, HttpState, Read, Scope, Store, Write};
use crate::wire::body::{read_limited, require_json_content_type};
use crate::wire::json::json_object;
use crate::wire::query;

/// Places an order for an available pet: the pet becomes `pending` and the order `placed`,
/// together, and the order is the key's own. An order for a pet that is not available is 409
/// `conflict`; a key that already has as many open (`placed`) orders as a key may (10 unless
/// configured otherwise) gets 409 `too_many_open_orders`. Needs a `write` or `store` key.
#[utoipa::path(
    post,
    path = "/store/orders",
    operation_id = "placeOrder",
    tag = "store",
    summary = "Place an order (experimental)",
    description = "Places an order for an `available` pet: the pet becomes `pending` and the order `placed`, in one transaction, and the order belongs to the key that placed it. Checked in this order: API key (401), scope (403 for a `read` key), `Content-Type` (415), size (413), arrival of the body (408), JSON (400), the pet (404), its status (409 `conflict`), the key's open orders (409 `too_many_open_orders`). Retry safely with `Idempotency-Key`.",
    request_body(content = NewOrderDto, content_type = "application/json"),
    security(("bearerAuth" = ["write"])),
    responses(
        (status = 201, description = "The order was placed; its pet is now `pending`.",
            body = OrderDto, headers(("Location" = String, description = "The new order."))),
        (status = 400, description = "`malformed_json` or `validation_failed`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no pet has `petId`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the pet is not `available`; or \
            `too_many_open_orders`: this key already has as many open (`placed`) orders as a key \
            may, and one must be approved or cancelled first.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn place_order(
    caller: Authorized<Write>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "placeOrder")?;
    require_json_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let placing = |plan| async {
        let new = NewOrderDto::parse(&json_object(&body)?)?;
        Ok(caller.orders().place(caller.caller(), new, plan).await?)
    };
    idempotency::write(&caller, &req, &body, Rendering::same(placed), placing).await
}

/// placeOrder's 201, as sent and as stored for a retry with the same `Idempotency-Key`.
fn placed(order: &Order) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[(header::LOCATION, order_path(order.id()))],
        &OrderDto::from(order.clone()),
    )
}

/// The operation id of `action`'s route, for messages.
fn action_operation(action: OrderAction) -> &'static str {
    match action {
        OrderAction::Approve => "approveOrder",
        OrderAction::Deliver => "deliverOrder",
        OrderAction::Cancel => "cancelOrder",
    }
}

/// An order moved by an action: 200 with the order.
fn moved(order: &Order) -> StoredResponse {
    json_response(StatusCode::OK, &[], &OrderDto::from(order.clone()))
}

/// One page of orders, ascending by id; `Link: rel="next"` when more follow. A `read` or
/// `write` key lists the orders it placed; a `store` key every order.
#[utoipa::path(
    get,
    path = "/store/orders",
    operation_id = "listOrders",
    tag = "store",
    summary = "List orders (experimental)",
    description = "One page of orders, ascending by id, with `Link: rel=\"next\"` when more follow: a `read` or `write` key sees the orders it placed, a `store` key every order. Filters `status` and `petId`; any other query parameter is 400.",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("status" = Option<OrderStatusDto>, Query, description = "Only orders with this status."),
        ("petId" = Option<i64>, Query, description = "Only orders for this pet."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`; it is \
                signed and bound to the filters it was issued with."),
    ),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "A page of orders: the key's own, or every order for a \
            `store` key.", body = Vec<OrderDto>,
            headers(("Link" = String, description = "Only when more orders match: \
                `</v1/store/orders?limit=20&cursor=...>; rel=\"next\"`, the next page."))),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_orders(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = parse_list(req.query_string(), caller.cursors())?;
    let page = caller.orders().list(caller.caller(), query).await?;
    let mut response = HttpResponse::Ok();
    if let Some(next) = page.next_after {
        response.insert_header((header::LINK, next_page_link(&query, next, caller.cursors())));
    }
    let orders: Vec<OrderDto> = page.orders.into_iter().map(OrderDto::from).collect();
    Ok(response.json(orders))
}

/// The order with this id, if the key placed it (any order for a `store` key); another key's
/// order is 404, as a missing one, so that ids tell nothing of others' orders.
#[utoipa::path(
    get,
    path = "/store/orders/{orderId}",
    operation_id = "getOrder",
    tag = "store",
    summary = "Get an order (experimental)",
    description = "The order with this id, if the key placed it (any order for a `store` key). Another key's order is 404, exactly as an id no order has, so ids tell nothing of others' orders.",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = ["read"])),
    responses(
        (status = 200, description = "The order.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 404, description = "`not_found`: no order has this id, or it is another \
            key's (only a `store` key sees every order).", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_order(
    caller: Authorized<Read>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "getOrder")?;
    let order = caller
        .orders()
        .get(caller.caller(), order_id(&req)?)
        .await?;
    Ok(HttpResponse::Ok().json(OrderDto::from(order)))
}

/// Moves the order in the path by `action`. The body, if any, is not read: an action takes
/// none, so the fingerprint of a keyed request is its method and path.
async fn act<S: Scope>(
    caller: Authorized<S>,
    req: HttpRequest,
    action: OrderAction,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), action_operation(action))?;
    let acting = |plan| async {
        let id = order_id(&req)?;
        Ok(caller
            .orders()
            .act(caller.caller(), id, action, plan)
            .await?)
    };
    idempotency::write(&caller, &req, b"", Rendering::same(moved), acting).await
}

/// `placed -> approved`; the pet stays `pending`. The staff's: needs a `store` key.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/approve",
    operation_id = "approveOrder",
    tag = "store",
    summary = "Approve an order (experimental)",
    description = "Moves a `placed` order to `approved`; its pet stays `pending`. The store's staff's: needs a `store` key (403 otherwise, before the order is looked up). A move the life cycle forbids is 409 `conflict`.",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The approved order.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no order has this id.", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is not `placed`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn approve_order(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    act(caller, req, OrderAction::Approve).await
}

/// `approved -> delivered`; the pet becomes `sold` and the order gets its `shipDate`. The
/// staff's: needs a `store` key.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/deliver",
    operation_id = "deliverOrder",
    tag = "store",
    summary = "Deliver an order (experimental)",
    description = "Moves an `approved` order to `delivered`: its pet becomes `sold` and the order gets its `shipDate`, in one transaction. Needs a `store` key (403 otherwise). A move the life cycle forbids is 409 `conflict`.",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The delivered order; its pet is `sold`.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no order has this id.", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is not `approved`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn deliver_order(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    act(caller, req, OrderAction::Deliver).await
}

/// `placed` or `approved` -> `cancelled`; the pet is `available` again. A `write` key cancels
/// the orders it placed (another key's is 404); a `store` key any order.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/cancel",
    operation_id = "cancelOrder",
    tag = "store",
    summary = "Cancel an order (experimental)",
    description = "Moves a `placed` or `approved` order to `cancelled`; its pet is `available` again. A `write` key cancels the orders it placed (another key's is 404); a `store` key any order. A move the life cycle forbids (a delivered order) is 409 `conflict`.",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = ["write"])),
    responses(
        (status = 200, description = "The cancelled order; its pet is `available`.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no order has this id, or it is another \
            key's (only a `store` key cancels any order).", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is delivered or cancelled.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn cancel_order(
    caller: Authorized<Write>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    act(caller, req, OrderAction::Cancel).await
}
