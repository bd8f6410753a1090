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

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::DefaultHeaders;
use actix_web::web::{self, ServiceConfig};
use actix_web::Route;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::{every_operation, CommonResponses};
use crate::routing::paths::{ORDERS_PATH, ORDER_PATH};
use crate::routing::{get, resource, GET, GET_POST, POST};
use dto::{NewOrderDto, OrderDto, OrderStatusDto};

/// Says on every order response that the resource may still change.
const STABILITY: HeaderName = HeaderName::from_static("x-api-stability");

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

pub(crate) fn routes(config: &mut ServiceConfig) {
    // On every response of these resources, the key's refusals and the 405s included.
    let experimental =
        || DefaultHeaders::new().add((STABILITY, HeaderValue::from_static("experimental")));
    let action = |action: &str, name: &str, route: Route| {
        resource(format!("{ORDER_PATH}/{action}"), name, POST)
            .route(route)
            .wrap(experimental())
    };
    config
        .service(
            resource(ORDERS_PATH, "orders", GET_POST)
                .route(get().to(handlers::list_orders))
                .route(web::post().to(handlers::place_order))
                .wrap(experimental()),
        )
        .service(
            resource(ORDER_PATH, "order", GET)
                .route(get().to(handlers::get_order))
                .wrap(experimental()),
        )
        .service(action(
            "approve",
            "approveOrder",
            web::post().to(handlers::approve_order),
        ))
        .service(action(
            "deliver",
            "deliverOrder",
            web::post().to(handlers::deliver_order),
        ))
        .service(action(
            "cancel",
            "cancelOrder",
            web::post().to(handlers::cancel_order),
        ));
}

/// Marks the store's operations experimental: `x-stability: experimental` on each, and the
/// `X-API-Stability` header on each of their responses.
struct ExperimentalStore;

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
                        utoipa::openapi::extensions::ExtensionsBuilder::new()
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
