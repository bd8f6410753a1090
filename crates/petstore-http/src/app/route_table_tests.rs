//! Tests of the route table against what it feeds: the OpenAPI document names the same keyed
//! operations, each request is labelled with the operation it reached, and the paths a key
//! answers for are the resources' own.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_web::http::Method;
use actix_web::test::{self, TestRequest};
use petstore_application::{
    MockClock, MockOrderRepository, MockPetRepository, OrderService, PetService,
};
use petstore_domain::KeyScope;
use serde_json::Value;

use super::{api_routes, app};
use crate::openapi::document_json;
use crate::routing::paths::BASE_PATH;
use crate::routing::servers::ApiServers;
use crate::routing::table::{matched, Access, KeyedPaths, Operation};
use crate::security::auth::test_directory;
use crate::state::HttpState;

/// A state with the pets alone (nothing here reaches storage); shared with `docs_tests.rs`.
pub(super) fn state() -> HttpState {
    let service = PetService::new(
        Arc::new(MockPetRepository::new()),
        Arc::new(MockClock::new()),
    );
    HttpState::new(
        service,
        test_directory(KeyScope::Write),
        b"test secret, thirty-two bytes...",
        &[],
    )
}

/// Every operation of the API's port, served or not.
fn every_operation() -> Vec<&'static Operation> {
    api_routes(&state())
        .into_iter()
        .flat_map(|(routes, _)| routes.operations)
        .collect()
}

#[test]
fn the_document_names_the_keyed_operations_of_the_table_and_no_other() {
    let doc: Value = serde_json::from_str(&document_json(&ApiServers::default())).unwrap();
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            documented.insert((
                method.to_uppercase(),
                format!("{BASE_PATH}{path}"),
                operation["operationId"].as_str().unwrap().to_owned(),
                operation["security"][0]["bearerAuth"][0]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ));
        }
    }
    let keyed: BTreeSet<_> = every_operation()
        .into_iter()
        .filter_map(|operation| match operation.access {
            Access::Key(scope) => Some((
                operation.method.to_string(),
                operation.path.to_owned(),
                operation.id.to_owned(),
                scope.as_str().to_owned(),
            )),
            Access::Open => None,
        })
        .collect();
    assert_eq!(keyed, documented);
}

#[actix_web::test]
async fn each_request_is_labelled_with_the_operation_and_route_it_reached() {
    let orders = OrderService::new(
        Arc::new(MockOrderRepository::new()),
        Arc::new(MockClock::new()),
    );
    let app = test::init_service(app(state().with_orders(orders))).await;
    for (method, uri, expected) in [
        (Method::GET, "/v1/pets", Some(("listPets", "/v1/pets"))),
        (Method::HEAD, "/v1/pets", Some(("listPets", "/v1/pets"))),
        (Method::POST, "/v1/pets", Some(("createPet", "/v1/pets"))),
        (
            Method::GET,
            "/v1/pets/7",
            Some(("getPet", "/v1/pets/{petId}")),
        ),
        (Method::GET, "/healthz", Some(("healthz", "/healthz"))),
        (Method::HEAD, "/healthz", Some(("healthz", "/healthz"))),
        (
            Method::GET,
            "/v1/openapi-3.0.json",
            Some(("openapi", "/v1/openapi-3.0.json")),
        ),
        (Method::GET, "/docs", Some(("docs", "/docs"))),
        (
            Method::GET,
            "/docs/index.css",
            Some(("docs", "/docs/{file:.*}")),
        ),
        (Method::GET, "/", Some(("root", "/"))),
        (Method::GET, "/v1", Some(("root", "/v1"))),
        (
            Method::POST,
            "/v1/store/orders",
            Some(("placeOrder", "/v1/store/orders")),
        ),
        (
            Method::HEAD,
            "/v1/store/orders/3",
            Some(("getOrder", "/v1/store/orders/{orderId}")),
        ),
        (
            Method::POST,
            "/v1/store/orders/3/cancel",
            Some(("cancelOrder", "/v1/store/orders/{orderId}/cancel")),
        ),
        // Served only with an exporter: no route here.
        (Method::GET, "/metrics", None),
        (Method::GET, "/v1/nope", None),
    ] {
        let req = TestRequest::default().method(method.clone()).uri(uri);
        let response = test::call_service(&app, req.to_request()).await;
        let reached = matched(response.request()).map(|operation| (operation.id, operation.path));
        assert_eq!(reached, expected, "{method} {uri}");
    }
}

#[test]
fn only_the_pets_and_orders_need_a_key() {
    let keyed = KeyedPaths::of(api_routes(&state()).map(|(routes, _)| routes));
    for path in [
        "/v1/pets",
        "/v1/pets/7",
        "/v1/pets/7/x",
        "/v1/store/orders",
        "/v1/store/orders/3/approve",
    ] {
        assert!(keyed.contain(path), "{path}");
    }
    for path in [
        "/",
        "/v1",
        "/healthz",
        "/readyz",
        "/metrics",
        "/v1/openapi.json",
        "/docs",
        "/docs/index.css",
        "/v1/petsx",
        "/nope",
    ] {
        assert!(!keyed.contain(path), "{path}");
    }
}
