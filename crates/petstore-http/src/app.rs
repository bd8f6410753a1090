//! The assembled actix-web `App`: each resource's routes, the service's own endpoints, the
//! fallbacks and the middleware around them all.

use std::rc::Rc;
use std::sync::LazyLock;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{middleware, web, App};

use crate::routing::not_found;
use crate::routing::servers::ApiServers;
use crate::routing::table::{KeyedPaths, Routes};
use crate::security::cors::{answer_cross_origin, CrossOrigin, CrossOriginContract};
use crate::server::refusal::AnswerRefused;
use crate::service::{self, swagger_ui_files};
use crate::state::HttpState;
use crate::wire::compression::compress_when_asked;
use crate::{categories, events, inventory, orders, pets, webhooks};
use request_middleware::log_and_contain_failures;

mod client_limit;
mod request_middleware;

/// What cross-origin requests may carry and their scripts read: the served document's methods and
/// headers (servers change neither).
pub(crate) static CROSS_ORIGIN_CONTRACT: LazyLock<CrossOriginContract> = LazyLock::new(|| {
    let document = serde_json::to_value(crate::openapi::document(&ApiServers::default()))
        .expect("an OpenAPI document always serializes");
    CrossOriginContract::of(&document)
});

/// The whole HTTP interface, ready for [`serve`](crate::serve)`(listener, settings, move || app(state.clone()))`.
///
/// - `GET /healthz`, `GET /readyz`: no key. `GET /metrics` (Prometheus), when the state has an
///   exporter for this port: no key, not in the OpenAPI document.
/// - `GET /v1/openapi.json` (the OpenAPI 3.1 document), `GET /v1/openapi-3.0.json` (the same in
///   3.0.3), `GET /docs` (Swagger UI), and `GET /` and `GET /v1` pointing to them: no key.
/// - The pets (`/v1/pets`, `/v1/pets/{petId}`) and, when the state has them, the orders
///   (`/v1/store/orders...`), the inventory (`/v1/store/inventory`), the categories
///   (`/v1/categories...`) and the event feed (`/v1/events`): bearer key first
///   (`state::Authorized`).
/// - Bodies of 1 KiB or more go out gzip-encoded to clients that accept it (`wire::compression`).
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
    // The document is read only when CORS is on (once per process, when the first worker's
    // app is built); off, the middleware is never called.
    let cross_origin = state
        .cors()
        .is_enabled()
        .then(|| CrossOrigin::new(state.cors(), &CROSS_ORIGIN_CONTRACT));
    let cors = middleware::Condition::new(
        cross_origin.is_some(),
        middleware::from_fn(move |req, next| answer_cross_origin(cross_origin.clone(), req, next)),
    );
    let routes = api_routes(&state);
    let keyed = Rc::new(KeyedPaths::of(routes.iter().map(|(routes, _)| *routes)));
    App::new()
        .app_data(web::Data::new(state))
        .app_data(web::Data::from(swagger_ui_files()))
        .app_data(web::Data::new(PAYLOADS))
        .configure(|config| {
            for (routes, served) in routes {
                if served {
                    routes.register(config);
                }
            }
        })
        .default_service(web::to(not_found))
        .wrap(middleware::from_fn(move |req, next| {
            client_limit::limit_by_client(Rc::clone(&keyed), req, next)
        }))
        .wrap(cors)
        .wrap(AnswerRefused)
        // Also adds the headers every response carries (`nosniff`, `no-referrer`, the request
        // id) and compresses large bodies for the clients that ask (`wire::compression`): one
        // middleware instead of layers of their own, each of which costs a boxed future.
        .wrap(middleware::from_fn(log_and_contain_failures))
}

/// How each resource is written in an event's `data`: as its own operations answer it.
pub(crate) const PAYLOADS: events::Payloads = events::Payloads {
    pet: pets::event_payload,
    order: orders::event_payload,
    category: categories::event_payload,
};

/// The bodies webhooks post (the application's `EventBody` port): each event as the feed
/// answers it.
pub fn webhook_bodies() -> std::sync::Arc<dyn petstore_application::EventBody> {
    std::sync::Arc::new(events::JsonEventBodies { payloads: PAYLOADS })
}

/// Every resource the API's port may serve, in the order the router tries them (the API's first,
/// so its requests are not matched against the documentation's pattern on the way), each with
/// whether `state` serves it. Which paths need a key is read from all of them, served or not.
fn api_routes(state: &HttpState) -> [(&'static Routes, bool); 10] {
    [
        (&pets::ROUTES, true),
        (&orders::ROUTES, state.has_orders()),
        (&inventory::ROUTES, state.has_inventory()),
        (&categories::ROUTES, state.has_categories()),
        (&events::ROUTES, state.has_events()),
        (&webhooks::ROUTES, state.has_webhooks()),
        (&service::HEALTH, true),
        (&service::CONTRACT, true),
        (&service::METRICS, state.metrics().is_some()),
        (&service::root::ROUTES, true),
    ]
}

/// `GET /metrics`, `GET /healthz` and `GET /readyz`, for an address of its own
/// (`PETSTORE_METRICS_BIND`): probes there are answered even when the API's connections are all
/// taken. `state` must have an exporter.
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
        .configure(|config| service::METRICS.register(config))
        .configure(|config| service::HEALTH.register(config))
        .default_service(web::to(not_found))
        .wrap(AnswerRefused)
        // Prometheus asks for gzip.
        .wrap(middleware::from_fn(compress_when_asked))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod docs_tests;

#[cfg(test)]
mod route_table_tests;
