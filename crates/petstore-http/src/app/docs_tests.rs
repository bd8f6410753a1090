//! Tests of the published contract in the assembled `app()`: the document and Swagger UI need no
//! key, work without any external resource, and every documented operation is a real route.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use actix_web::body::to_bytes;
use actix_web::http::StatusCode;
use actix_web::test::{self, TestRequest};
use petstore_application::{MockClock, MockPetRepository, PetService};
use serde_json::Value;

use super::app;
use crate::openapi::{document_json, ApiServers, BASE_PATH};
use crate::state::HttpState;

struct Reply {
    status: StatusCode,
    content_type: String,
    location: Option<String>,
    allow: Option<String>,
    body: String,
}

async fn get(req: TestRequest) -> Reply {
    let service = PetService::new(
        Arc::new(MockPetRepository::new()),
        Arc::new(MockClock::new()),
    );
    let state = HttpState::new(service, b"test secret, thirty-two bytes...");
    let app = test::init_service(app(state)).await;
    let response = match test::try_call_service(&app, req.to_request()).await {
        Ok(response) => response.into_parts().1.map_into_boxed_body(),
        Err(err) => err.error_response(),
    };
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let (status, content_type) = (
        response.status(),
        header("content-type").unwrap_or_default(),
    );
    let (location, allow) = (header("location"), header("allow"));
    let body = to_bytes(response.into_body()).await.unwrap();
    Reply {
        status,
        content_type,
        location,
        allow,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

#[actix_web::test]
async fn every_documented_operation_is_a_route_under_the_server_url() {
    let doc: Value = serde_json::from_str(&document_json(&ApiServers::default())).unwrap();
    assert_eq!(doc["servers"][0]["url"], BASE_PATH);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            // What a client joining the server URL and the path sends. Without a key a real
            // route answers 401; an unknown one would be 404 or 405.
            let uri = format!("{BASE_PATH}{}", path.replace("{petId}", "1"));
            let req = TestRequest::default()
                .method(method.to_uppercase().parse().unwrap())
                .uri(&uri);
            let reply = get(req).await;
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {uri}");
        }
    }
}

#[actix_web::test]
async fn the_document_is_served_without_a_key() {
    let reply = get(TestRequest::get().uri("/v1/openapi.json")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.content_type, "application/json");
    assert_eq!(reply.body, document_json(&ApiServers::default()));
}

#[actix_web::test]
async fn docs_redirects_to_swagger_ui_which_needs_nothing_external() {
    let reply = get(TestRequest::get().uri("/docs")).await;
    assert_eq!(reply.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(reply.location.as_deref(), Some("/docs/"));

    let index = get(TestRequest::get().uri("/docs/")).await;
    assert_eq!(index.status, StatusCode::OK);
    assert!(
        index.content_type.starts_with("text/html"),
        "{}",
        index.content_type
    );
    assert!(!index.body.contains("http://") && !index.body.contains("https://"));
    assert!(!index.body.contains("//fonts."), "{}", index.body);

    // Every file the page loads is served here.
    let assets: Vec<&str> = index
        .body
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
            assert!(!reply.body.contains("@import"), "{uri}");
            assert!(!reply.body.contains("url(http"), "{uri}");
        }
    }

    let init = get(TestRequest::get().uri("/docs/swagger-initializer.js")).await;
    assert!(
        init.body.contains("\"url\": \"/v1/openapi.json\""),
        "{}",
        init.body
    );
    // Otherwise Swagger UI shows a badge loaded from validator.swagger.io.
    assert!(
        init.body.contains("\"validatorUrl\": \"none\""),
        "{}",
        init.body
    );
}

#[actix_web::test]
async fn other_files_and_methods_answer_json_errors() {
    let reply = get(TestRequest::get().uri("/docs/nope.js")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(reply.content_type, "application/json");
    for uri in ["/v1/openapi.json", "/docs", "/docs/"] {
        let reply = get(TestRequest::post().uri(uri)).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
        assert_eq!(reply.content_type, "application/json", "{uri}");
        assert_eq!(reply.allow.as_deref(), Some("GET"), "{uri}");
    }
}
