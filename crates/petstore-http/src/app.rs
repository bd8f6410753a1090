//! The assembled actix-web `App`: routes, fallbacks, extractor configuration, middleware.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::{guard, middleware, web, App, Route};

use crate::cors;
use crate::handlers::docs::{self, swagger_ui_config};
use crate::handlers::{fallback, get_pet, health, metrics, orders, pets};
use crate::middleware::log_and_contain_failures;
use crate::paths::{
    DOCS_PATH, HEALTHZ_PATH, METRICS_PATH, OPENAPI_3_0_PATH, OPENAPI_PATH, ORDERS_PATH, ORDER_PATH,
    PETS_PATH, PET_PATH, READYZ_PATH,
};
use crate::state::HttpState;

const GET: &[Method] = &[Method::GET, Method::HEAD];
const GET_POST: &[Method] = &[Method::GET, Method::HEAD, Method::POST];

/// A route for GET and HEAD: RFC 9110 wants HEAD wherever GET is served (load balancers check
/// health with it). actix-http sends a HEAD's status and headers without the body.
fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// The whole HTTP interface, ready for `HttpServer::new(move || app(state.clone()))`.
///
/// - `GET /healthz`, `GET /readyz`: no key. `GET /metrics` (Prometheus), when the state has an
///   exporter for this port: no key, not in the OpenAPI document.
/// - `GET /v1/openapi.json` (the OpenAPI 3.1 document), `GET /v1/openapi-3.0.json` (the same in
///   3.0.3), `GET /docs` (Swagger UI): no key.
/// - `GET /v1/pets`, `POST /v1/pets`, `GET /v1/pets/{petId}`: bearer key first.
/// - Another method on those paths: 405 with `Allow`; any other path: 404. Both without a key.
pub fn app(
    state: HttpState,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    // getPet is deprecated for clients (its OpenAPI operation says so) but served until its
    // sunset, when the use case answers 410 itself.
    #[allow(deprecated)]
    let get_pet_route = get().to(get_pet::get_pet);
    let cors =
        middleware::Condition::new(state.cors().is_enabled(), cors::middleware(state.cors()));
    let serves_metrics = state.metrics().is_some();
    let serves_orders = state.has_orders();
    App::new()
        .app_data(web::Data::new(state))
        .app_data(web::Data::from(swagger_ui_config()))
        // Routes are tried in order: the API's first, so its requests are not matched against
        // the documentation's pattern on the way.
        // Resources are named for the metrics' `operation` label (`middleware.rs`).
        .service(
            web::resource(PETS_PATH)
                .name("pets")
                .route(get().to(pets::list_pets))
                .route(web::post().to(pets::create_pet))
                .default_service(fallback::method_not_allowed(GET_POST)),
        )
        .service(
            web::resource(PET_PATH)
                .name("pet")
                .route(get_pet_route)
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(HEALTHZ_PATH)
                .name("healthz")
                .route(get().to(health::healthz))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(READYZ_PATH)
                .name("readyz")
                .route(get().to(health::readyz))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(OPENAPI_PATH)
                .name("openapi")
                .route(get().to(docs::openapi_json))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(OPENAPI_3_0_PATH)
                .name("openapi")
                .route(get().to(docs::openapi_3_0_json))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(DOCS_PATH)
                .name("docs")
                .route(get().to(docs::redirect_to_index))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .service(
            web::resource(format!("{DOCS_PATH}/{{file:.*}}"))
                .name("docs_file")
                .route(get().to(docs::swagger_ui))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .configure(|config| {
            if !serves_orders {
                return;
            }
            const POST: &[Method] = &[Method::POST];
            config
                .service(
                    web::resource(ORDERS_PATH)
                        .name("orders")
                        .route(get().to(orders::list_orders))
                        .route(web::post().to(orders::place_order))
                        .default_service(fallback::method_not_allowed(GET_POST)),
                )
                .service(
                    web::resource(ORDER_PATH)
                        .name("order")
                        .route(get().to(orders::get_order))
                        .default_service(fallback::method_not_allowed(GET)),
                );
            let order_action = |action: &str, name: &str, route: Route| {
                web::resource(format!("{ORDER_PATH}/{action}"))
                    .name(name)
                    .route(route)
                    .default_service(fallback::method_not_allowed(POST))
            };
            config
                .service(order_action(
                    "approve",
                    "approveOrder",
                    web::post().to(orders::approve_order),
                ))
                .service(order_action(
                    "deliver",
                    "deliverOrder",
                    web::post().to(orders::deliver_order),
                ))
                .service(order_action(
                    "cancel",
                    "cancelOrder",
                    web::post().to(orders::cancel_order),
                ));
        })
        .configure(|config| {
            if serves_metrics {
                config.service(
                    web::resource(METRICS_PATH)
                        .name("metrics")
                        .route(get().to(metrics::metrics))
                        .default_service(fallback::method_not_allowed(GET)),
                );
            }
        })
        .default_service(web::to(fallback::not_found))
        .wrap(cors)
        // Also adds the headers every response carries (`nosniff`, `no-referrer`, the request
        // id): one middleware instead of a `DefaultHeaders` layer of its own.
        .wrap(middleware::from_fn(log_and_contain_failures))
}

/// `GET /metrics` alone, for an address of its own (`PETSTORE_METRICS_BIND`); `state` must
/// have an exporter.
pub fn metrics_app(
    state: HttpState,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .app_data(web::Data::new(state))
        .service(
            web::resource(METRICS_PATH)
                .route(get().to(metrics::metrics))
                .default_service(fallback::method_not_allowed(GET)),
        )
        .default_service(web::to(fallback::not_found))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod docs_tests;
