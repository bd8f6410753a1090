//! The store's orders (experimental): `placeOrder` and `listOrders` on `/v1/store/orders`,
//! `getOrder` on `/v1/store/orders/{orderId}`, and the moves `approveOrder`, `deliverOrder`,
//! `cancelOrder` under it; their DTOs, parameters and part of the OpenAPI document
//! ([`OrdersApi`]). An order is its key's: a `read` key lists and gets its own, a `write` key
//! also places orders and cancels its own, and a `store` key (the staff) sees and cancels every
//! order and alone approves and delivers. Every response on these paths carries
//! `X-API-Stability: experimental`.

mod dto;
mod errors;
mod handlers;
mod params;

use actix_web::http::Method;
use petstore_domain::KeyScope;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::CommonResponses;
use crate::routing::experimental::{ExperimentalStore, STABILITY_HEADER};
use crate::routing::paths::{
    APPROVE_ORDER_PATH, CANCEL_ORDER_PATH, DELIVER_ORDER_PATH, ORDERS_PATH, ORDER_PATH,
};
use crate::routing::table::{Access, Operation, Routes};
use dto::{NewOrderDto, OrderDto, OrderStatusDto};

/// The orders' operations and schemas, with the responses all operations share, marked
/// experimental.
#[derive(utoipa::OpenApi)]
#[openapi(
    paths(
        handlers::place_order,
        handlers::list_orders,
        handlers::get_order,
        handlers::approve_order,
        handlers::deliver_order,
        handlers::cancel_order,
    ),
    components(schemas(OrderDto, NewOrderDto, OrderStatusDto)),
    modifiers(&IdempotentPosts, &CommonResponses, &ExperimentalStore),
)]
pub(crate) struct OrdersApi;

/// The orders' operations: the router, the metrics' labels and which paths need a key read them
/// from here. Every response on their paths says the resource is experimental, the key's
/// refusals and the 405s included.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[
        Operation {
            id: "listOrders",
            method: Method::GET,
            path: ORDERS_PATH,
            access: Access::Key(KeyScope::Read),
            handler: |route| route.to(handlers::list_orders),
        },
        Operation {
            id: "placeOrder",
            method: Method::POST,
            path: ORDERS_PATH,
            access: Access::Key(KeyScope::Write),
            handler: |route| route.to(handlers::place_order),
        },
        Operation {
            id: "getOrder",
            method: Method::GET,
            path: ORDER_PATH,
            access: Access::Key(KeyScope::Read),
            handler: |route| route.to(handlers::get_order),
        },
        Operation {
            id: "approveOrder",
            method: Method::POST,
            path: APPROVE_ORDER_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(handlers::approve_order),
        },
        Operation {
            id: "deliverOrder",
            method: Method::POST,
            path: DELIVER_ORDER_PATH,
            access: Access::Key(KeyScope::Store),
            handler: |route| route.to(handlers::deliver_order),
        },
        Operation {
            id: "cancelOrder",
            method: Method::POST,
            path: CANCEL_ORDER_PATH,
            access: Access::Key(KeyScope::Write),
            handler: |route| route.to(handlers::cancel_order),
        },
    ],
    every_response_header: Some(STABILITY_HEADER),
};

/// A order as an event's `data` (`crate::events`): as the order's own operations answer it.
pub(crate) fn event_payload(order: petstore_domain::Order) -> Box<serde_json::value::RawValue> {
    // A DTO of strings and numbers always serializes.
    serde_json::value::to_raw_value(&OrderDto::from(order)).unwrap_or_default()
}
