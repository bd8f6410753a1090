//! Tests of the published contract in the assembled `app()`: the document and Swagger UI need no
//! key, work without any external resource, and every documented operation is a real route.

#![allow(clippy::unwrap_used)]

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use petstore_application::{MockClock, MockPetRepository};
use petstore_domain::KeyScope;
use serde_json::Value;

use super::tests::{bearer, send_untouched as get, send_with_keys};
use super::{api_routes, route_table_tests};
use crate::openapi::document_json;
use crate::routing::paths::BASE_PATH;
use crate::routing::servers::ApiServers;
use crate::routing::table::Routes;
use crate::security::auth::test_directory;

#[actix_web::test]
async fn every_documented_operation_is_a_route_under_the_server_url_that_refuses_a_missing_key() {
    let doc: Value = serde_json::from_str(&document_json(&ApiServers::default())).unwrap();
    assert_eq!(doc["servers"][0]["url"], BASE_PATH);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            // What a client joining the server URL and the path sends. Without a key a real
            // route answers 401; an unknown one would be 404 or 405.
            let uri = format!("{BASE_PATH}{}", with_ids(path));
            let req = TestRequest::default()
                .method(method.to_uppercase().parse().unwrap())
                .uri(&uri);
            let reply = get(req).await;
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {uri}");
            // A resource's header on every response (the orders' stability), refusals included.
            let template = format!("{BASE_PATH}{path}");
            match routes_of(&template).every_response_header {
                Some((name, value)) => {
                    assert_eq!(reply.header(name), Some(value), "{method} {uri}");
                }
                None => assert_eq!(reply.header("x-api-stability"), None, "{method} {uri}"),
            }
        }
    }
}

/// Every documented operation that changes something (all are POSTs) refuses a key whose scope
/// falls short of the one its security requirement names with 403 naming it, before it reads
/// the request or touches storage (the mocks panic on any call).
#[actix_web::test]
async fn every_documented_post_refuses_a_key_below_its_documented_scope() {
    let doc: Value = serde_json::from_str(&document_json(&ApiServers::default())).unwrap();
    let mut refusals = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(post) = item.get("post") else {
            continue;
        };
        let needed: KeyScope = post["security"][0]["bearerAuth"][0]
            .as_str()
            .and_then(|scope| scope.parse().ok())
            .unwrap_or_else(|| panic!("POST {path} names no scope"));
        let uri = format!("{BASE_PATH}{}", with_ids(path));
        for scope in KeyScope::ALL
            .into_iter()
            .filter(|scope| !scope.allows(needed))
        {
            let req = TestRequest::post()
                .uri(&uri)
                .insert_header(bearer())
                .insert_header(("content-type", "application/json"))
                .set_payload("{}");
            let reply = send_with_keys(
                MockPetRepository::new(),
                MockClock::new(),
                test_directory(scope),
                req,
            )
            .await;
            let message = reply.assert_error(StatusCode::FORBIDDEN, "forbidden");
            assert!(
                message.contains(&format!("`{needed}`")),
                "POST {uri}: {message}"
            );
            refusals.push(format!("{scope} {path}"));
        }
    }
    // The document was read: createPet needs more than `read`, approveOrder more than `write`.
    for refusal in ["read /pets", "write /store/orders/{orderId}/approve"] {
        assert!(refusals.iter().any(|done| done == refusal), "{refusals:?}");
    }
}

/// `path` with `1` for each of its parameters (`/pets/{petId}` -> `/pets/1`).
fn with_ids(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "1"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The route table a path template (with `/v1`) is in.
fn routes_of(template: &str) -> &'static Routes {
    api_routes(&route_table_tests::state())
        .into_iter()
        .map(|(routes, _)| routes)
        .find(|routes| routes.operations.iter().any(|op| op.path == template))
        .unwrap_or_else(|| panic!("{template} is in no route table"))
}

#[actix_web::test]
async fn the_document_is_served_without_a_key() {
    let reply = get(TestRequest::get().uri("/v1/openapi.json")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.header("content-type").unwrap_or_default(),
        "application/json"
    );
    assert_eq!(reply.text(), document_json(&ApiServers::default()));
}

#[actix_web::test]
async fn docs_redirects_to_swagger_ui_which_needs_nothing_external() {
    let reply = get(TestRequest::get().uri("/docs")).await;
    assert_eq!(reply.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(reply.header("location"), Some("/docs/"));

    let index = get(TestRequest::get().uri("/docs/")).await;
    assert_eq!(index.status, StatusCode::OK);
    assert!(
        index
            .header("content-type")
            .unwrap_or_default()
            .starts_with("text/html"),
        "{}",
        index.header("content-type").unwrap_or_default()
    );
    assert!(!index.text().contains("http://") && !index.text().contains("https://"));
    assert!(!index.text().contains("//fonts."), "{}", index.text());

    // Every file the page loads is served here.
    let page = index.text();
    let assets: Vec<&str> = page
        .split(['"', '\''])
        .filter(|part| {
            [".js", ".css", ".png"]
                .iter()
                .any(|ext| part.ends_with(ext))
        })
        .collect();
    assert!(assets.len() >= 5, "{assets:?}");
    for asset in assets {
        let uri = format!("/docs/{}", asset.trim_start_matches("./"));
        let reply = get(TestRequest::get().uri(&uri)).await;
        assert_eq!(reply.status, StatusCode::OK, "{uri}");
        if uri.ends_with(".css") {
            assert!(!reply.text().contains("@import"), "{uri}");
            assert!(!reply.text().contains("url(http"), "{uri}");
        }
    }

    let init = get(TestRequest::get().uri("/docs/swagger-initializer.js")).await;
    assert!(
        init.text().contains("\"url\": \"/v1/openapi.json\""),
        "{}",
        init.text()
    );
    // Otherwise Swagger UI shows a badge loaded from validator.swagger.io.
    assert!(
        init.text().contains("\"validatorUrl\": \"none\""),
        "{}",
        init.text()
    );
}

#[actix_web::test]
async fn other_files_and_methods_answer_json_errors() {
    let reply = get(TestRequest::get().uri("/docs/nope.js")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(
        reply.header("content-type").unwrap_or_default(),
        "application/json"
    );
    for uri in ["/v1/openapi.json", "/docs", "/docs/"] {
        let reply = get(TestRequest::post().uri(uri)).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
        assert_eq!(
            reply.header("content-type").unwrap_or_default(),
            "application/json",
            "{uri}"
        );
        assert_eq!(reply.header("allow"), Some("GET, HEAD"), "{uri}");
    }
}
