//! Tests of the assembled `app()` over mocked ports: what a client sees for each operation,
//! each failure of storage, the sunset, and the order of checks (auth first).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix_web::body::to_bytes;
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, StatusCode};
use actix_web::test::{self, TestRequest};
use actix_web::web::Bytes;
use petstore_application::deprecation::get_pet_sunset;
use petstore_application::{
    CategoryService, EventService, InventoryService, KeyChanges, KeyDirectory,
    MockCategoryRepository, MockClock, MockEventFeed, MockInventoryRepository, MockKeyRegistry,
    MockOrderRepository, MockPetRepository, OrderService, PetService, RepositoryError, Written,
    DEFAULT_EVENT_RETENTION,
};
use petstore_domain::{CategoryId, KeyScope, NewPet, Pet, PetId, PetName, PetStatus};
use serde_json::{json, Value};

use super::app;
use crate::security::auth::test_directory;
use crate::state::HttpState;

const SECRET: &[u8] = b"test secret, thirty-two bytes...";

/// A response read whole; shared with `docs_tests.rs`.
pub(super) struct Reply {
    pub(super) status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().unwrap())
    }

    /// Asserts the `Error` body: JSON, exactly the three fields, `status` = HTTP status.
    #[track_caller]
    pub(super) fn assert_error(&self, status: StatusCode, code: &str) -> String {
        assert_eq!(
            self.status,
            status,
            "{}",
            String::from_utf8_lossy(&self.body)
        );
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json();
        let object = body.as_object().unwrap();
        assert_eq!(object.len(), 3, "{body}");
        assert_eq!(body["code"], code, "{body}");
        assert_eq!(body["status"], status.as_u16(), "{body}");
        body["message"].as_str().unwrap().to_owned()
    }
}

fn key() -> String {
    crate::security::auth::test_key(SECRET, "tests")
}

pub(super) fn bearer() -> (header::HeaderName, String) {
    (header::AUTHORIZATION, format!("Bearer {}", key()))
}

fn clock_at(now: SystemTime) -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now);
    clock
}

fn before_sunset() -> MockClock {
    clock_at(get_pet_sunset() - Duration::from_secs(1))
}

fn pet(id: i64, name: &str, status: PetStatus) -> Pet {
    NewPet::new(
        PetName::parse(name).unwrap(),
        CategoryId::parse(3).unwrap(),
        Some(status),
    )
    .into_pet(PetId::new(id))
}

/// Sends `req` to an app over `repository` (which panics on any call it was not told to
/// expect, so a test also proves which calls did not happen) and `clock`.
async fn send(repository: MockPetRepository, clock: MockClock, req: TestRequest) -> Reply {
    send_with_keys(repository, clock, test_directory(KeyScope::Write), req).await
}

pub(super) async fn send_with_keys(
    repository: MockPetRepository,
    clock: MockClock,
    key_directory: KeyDirectory,
    req: TestRequest,
) -> Reply {
    let service = PetService::new(Arc::new(repository), Arc::new(clock));
    // Orders are routed like in production; no test here expects a call to their repository.
    let orders = OrderService::new(
        Arc::new(MockOrderRepository::new()),
        Arc::new(MockClock::new()),
    );
    let categories = CategoryService::new(
        Arc::new(MockCategoryRepository::new()),
        Arc::new(MockClock::new()),
    );
    let inventory = InventoryService::new(
        Arc::new(MockInventoryRepository::new()),
        Arc::new(MockClock::new()),
    );
    let events = EventService::new(
        Arc::new(MockEventFeed::new()),
        Arc::new(MockClock::new()),
        DEFAULT_EVENT_RETENTION,
    );
    let webhooks = petstore_application::WebhookService::new(
        Arc::new(petstore_application::webhooks::MockWebhookRepository::new()),
        Arc::new(petstore_application::webhooks::MockSecretVault::new()),
        crate::app::webhook_bodies(),
        Arc::new(MockClock::new()),
    );
    let state = HttpState::new(service, key_directory, SECRET, &[])
        .with_orders(orders)
        .with_inventory(inventory)
        .with_categories(categories)
        .with_events(events)
        .with_webhooks(webhooks, petstore_domain::AddressPolicy::default());
    let app = test::init_service(app(state)).await;
    // An `Err` is what the server would render with `error_response`; do the same.
    let response = match test::try_call_service(&app, req.to_request()).await {
        Ok(response) => response.into_parts().1.map_into_boxed_body(),
        Err(err) => err.error_response(),
    };
    let status = response.status();
    let headers = response.headers().clone();
    let body = to_bytes(response.into_body()).await.unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

pub(super) async fn send_untouched(req: TestRequest) -> Reply {
    send(MockPetRepository::new(), MockClock::new(), req).await
}

fn unavailable() -> RepositoryError {
    RepositoryError::Unavailable(Box::new(std::io::Error::other("pool timed out")))
}

// --- auth comes first ---------------------------------------------------------------------

#[actix_web::test]
async fn unauthenticated_requests_get_401_before_body_query_or_lookup() {
    let requests = [
        TestRequest::post()
            .uri("/v1/pets")
            .insert_header(("content-type", "application/json"))
            .set_payload("{not json"),
        TestRequest::post()
            .uri("/v1/pets")
            .insert_header(("content-type", "text/plain"))
            .set_payload("x"),
        TestRequest::get().uri("/v1/pets?limit=abc"),
        TestRequest::get().uri("/v1/pets"),
        TestRequest::get().uri("/v1/pets/999"),
        TestRequest::get().uri("/v1/pets/not-a-number"),
        TestRequest::post()
            .uri("/v1/store/orders")
            .insert_header(("content-type", "application/json"))
            .set_payload("{not json"),
        TestRequest::get().uri("/v1/store/orders?limit=abc&bogus=1"),
        TestRequest::get().uri("/v1/store/orders/abc"),
        TestRequest::post().uri("/v1/store/orders/abc/approve"),
        TestRequest::post().uri("/v1/store/orders/1/cancel"),
    ];
    for req in requests {
        let reply = send_untouched(req).await;
        reply.assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
        assert_eq!(
            reply.header("www-authenticate"),
            Some(r#"Bearer realm="petstore""#)
        );
    }
}

#[actix_web::test]
async fn a_bad_key_gets_invalid_token_even_after_the_sunset() {
    let req = TestRequest::get()
        .uri("/v1/pets/1")
        .insert_header((header::AUTHORIZATION, "Bearer nope.nope.nope"));
    let reply = send(MockPetRepository::new(), MockClock::new(), req).await;
    let message = reply.assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
    assert_eq!(message, "invalid or expired API key");
    assert_eq!(
        reply.header("www-authenticate"),
        Some(r#"Bearer realm="petstore", error="invalid_token""#)
    );
}

#[actix_web::test]
async fn a_key_signed_with_another_secret_is_refused() {
    let foreign = crate::security::auth::test_key(b"some other secret of enough bytes", "x");
    let req = TestRequest::get()
        .uri("/v1/pets")
        .insert_header((header::AUTHORIZATION, format!("Bearer {foreign}")));
    send_untouched(req)
        .await
        .assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
}

// --- createPet ------------------------------------------------------------------------------

fn create(body: &str) -> TestRequest {
    TestRequest::post()
        .uri("/v1/pets")
        .insert_header(bearer())
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_owned())
}

fn storing_as(id: i64) -> MockPetRepository {
    let mut repository = MockPetRepository::new();
    repository
        .expect_create()
        .times(1)
        .returning(move |new_pet, _| Ok(Written::Done(new_pet.into_pet(PetId::new(id)), None)));
    repository
}

#[actix_web::test]
async fn create_answers_201_with_the_pet_and_its_location() {
    let reply = send(
        storing_as(7),
        MockClock::new(),
        create(r#"{"name": "Rex", "categoryId": 3}"#),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    assert_eq!(reply.header("location"), Some("/v1/pets/7"));
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(
        reply.json(),
        json!({"id": 7, "name": "Rex", "categoryId": 3, "status": "available"})
    );
}

#[actix_web::test]
async fn create_accepts_a_utf8_charset_and_a_body_of_exactly_the_limit() {
    let mut body = r#"{"name": "Rex", "categoryId": 3, "status": "sold"}"#.to_owned();
    body.push_str(&" ".repeat(HttpState::JSON_LIMIT - body.len()));
    let req = create(&body).insert_header(("content-type", "application/json; charset=UTF-8"));
    let reply = send(storing_as(1), MockClock::new(), req).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    assert_eq!(reply.json()["status"], "sold");
}

#[actix_web::test]
async fn create_refuses_other_content_types_with_415() {
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/merge-patch+json"),
        Some("application/json; charset=latin1"),
        Some("application/json; charset=utf-8; charset=latin1"),
        None,
    ] {
        let mut req = TestRequest::post()
            .uri("/v1/pets")
            .insert_header(bearer())
            .set_payload(r#"{"name": "Rex", "categoryId": 3}"#);
        if let Some(content_type) = content_type {
            req = req.insert_header(("content-type", content_type));
        }
        send_untouched(req)
            .await
            .assert_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    }
}

#[actix_web::test]
async fn create_refuses_a_body_over_64_kib_with_413() {
    let body = format!(
        r#"{{"name": "Rex", "categoryId": 3, "pad": "{}"}}"#,
        "x".repeat(HttpState::JSON_LIMIT)
    );
    send_untouched(create(&body))
        .await
        .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
}

#[actix_web::test]
async fn create_tells_malformed_json_from_invalid_fields() {
    let message = send_untouched(create(r#"{"name": "Rex", "#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "malformed_json");
    assert!(message.contains("not valid JSON"), "{message}");

    send_untouched(create(r#"[{"name": "Rex", "categoryId": 3}]"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "malformed_json");

    let message = send_untouched(create(r#"{"id": 1, "name": "Rex", "categoryId": 3}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "validation_failed");
    assert!(message.contains("`id`"), "{message}");

    let message = send_untouched(create(r#"{"name": "Rex", "categoryId": "3"}"#))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "validation_failed");
    assert!(message.contains("`categoryId`"), "{message}");
}

#[actix_web::test]
async fn unexpected_storage_failure_is_a_500_that_hides_its_cause() {
    let mut repository = MockPetRepository::new();
    repository.expect_create().returning(|_, _| {
        Err(RepositoryError::Unexpected(Box::new(
            std::io::Error::other(
                "UNIQUE constraint failed: pets.id in /var/lib/petstore/petstore.db",
            ),
        )))
    });
    let reply = send(
        repository,
        MockClock::new(),
        create(r#"{"name": "Rex", "categoryId": 3}"#),
    )
    .await;
    let message = reply.assert_error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    assert_eq!(message, "internal error");
    let text = String::from_utf8_lossy(&reply.body);
    assert!(
        !text.contains("UNIQUE") && !text.contains("/var/lib"),
        "{text}"
    );
}

#[actix_web::test]
async fn a_panic_below_the_handler_is_a_json_500_without_the_panic_text() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_create()
        .returning(|_, _| panic!("secret panic text"));
    let reply = send(
        repository,
        MockClock::new(),
        create(r#"{"name": "Rex", "categoryId": 3}"#),
    )
    .await;
    reply.assert_error(StatusCode::INTERNAL_SERVER_ERROR, "internal_error");
    assert!(!String::from_utf8_lossy(&reply.body).contains("secret"));
}

// --- listPets -------------------------------------------------------------------------------

#[actix_web::test]
async fn list_returns_a_bare_array_and_a_link_to_the_next_page() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .withf(|status, _, after, max| {
            *status == Some(PetStatus::Pending) && after.is_none() && *max == 3
        })
        .returning(|_, _, _, _| {
            Ok(vec![
                pet(1, "Rex", PetStatus::Pending),
                pet(2, "Max", PetStatus::Pending),
                pet(5, "Bo", PetStatus::Pending),
            ])
        });
    let req = TestRequest::get()
        .uri("/v1/pets?limit=2&status=pending")
        .insert_header(bearer());
    let reply = send(repository, MockClock::new(), req).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.json(),
        json!([
            {"id": 1, "name": "Rex", "categoryId": 3, "status": "pending"},
            {"id": 2, "name": "Max", "categoryId": 3, "status": "pending"},
        ])
    );
    let link = reply.header("link").unwrap().to_owned();
    assert!(
        link.starts_with("</v1/pets?limit=2&status=pending&cursor=")
            && link.ends_with(">; rel=\"next\""),
        "{link}"
    );

    // Following the link asks storage for the pets after the last one shown.
    let target = link
        .trim_start_matches('<')
        .split('>')
        .next()
        .unwrap()
        .to_owned();
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .withf(|_, _, after, max| *after == Some(PetId::new(2)) && *max == 3)
        .returning(|_, _, _, _| Ok(vec![pet(5, "Bo", PetStatus::Pending)]));
    let reply = send(
        repository,
        MockClock::new(),
        TestRequest::get().uri(&target).insert_header(bearer()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json().as_array().unwrap().len(), 1);
    assert_eq!(reply.header("link"), None);
}

#[actix_web::test]
async fn list_uses_a_default_limit_of_20() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .withf(|status, _, after, max| status.is_none() && after.is_none() && *max == 21)
        .returning(|_, _, _, _| Ok(Vec::new()));
    let req = TestRequest::get().uri("/v1/pets").insert_header(bearer());
    let reply = send(repository, MockClock::new(), req).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json(), json!([]));
}

#[actix_web::test]
async fn list_refuses_bad_parameters_naming_them() {
    for (query, name) in [
        ("limit=0", "`limit`"),
        ("limit=101", "`limit`"),
        ("limit=1.5", "`limit`"),
        ("limit=", "`limit`"),
        ("status=SOLD", "`status`"),
        ("status=", "`status`"),
        ("cursor=garbage", "`cursor`"),
    ] {
        let req = TestRequest::get()
            .uri(&format!("/v1/pets?{query}"))
            .insert_header(bearer());
        let message = send_untouched(req)
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_parameter");
        assert!(message.contains(name), "{query}: {message}");
    }
}

#[actix_web::test]
async fn unavailable_storage_is_a_503_with_retry_after() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_list()
        .returning(|_, _, _, _| Err(unavailable()));
    let req = TestRequest::get().uri("/v1/pets").insert_header(bearer());
    let reply = send(repository, MockClock::new(), req).await;
    reply.assert_error(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable");
    assert_eq!(reply.header("retry-after"), Some("1"));
}

// --- getPet ---------------------------------------------------------------------------------

#[track_caller]
fn assert_deprecation_headers(reply: &Reply) {
    assert_eq!(reply.header("deprecation"), Some("@1795305600"));
    assert_eq!(
        reply.header("sunset"),
        Some("Thu, 05 Dec 2030 00:00:00 GMT")
    );
    let link = reply.header("link").unwrap_or_default();
    assert!(
        link.starts_with("</v1/pets") && link.ends_with(r#">; rel="successor-version""#),
        "{link}"
    );
}

fn get_pet(id: &str) -> TestRequest {
    TestRequest::get()
        .uri(&format!("/v1/pets/{id}"))
        .insert_header(bearer())
}

#[actix_web::test]
async fn get_pet_answers_with_the_pet_and_the_deprecation_headers() {
    let mut repository = MockPetRepository::new();
    repository
        .expect_find()
        .withf(|id| *id == PetId::new(4))
        .returning(|id| Ok(Some(pet(id.get(), "Rex", PetStatus::Sold))));
    let reply = send(repository, before_sunset(), get_pet("4")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.json(),
        json!({"id": 4, "name": "Rex", "categoryId": 3, "status": "sold"})
    );
    assert_deprecation_headers(&reply);
}

#[actix_web::test]
async fn get_pet_errors_carry_the_deprecation_headers_too() {
    let mut repository = MockPetRepository::new();
    repository.expect_find().returning(|_| Ok(None));
    let reply = send(repository, before_sunset(), get_pet("404")).await;
    reply.assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_deprecation_headers(&reply);

    let reply = send_untouched(get_pet("abc")).await;
    let message = reply.assert_error(StatusCode::BAD_REQUEST, "invalid_parameter");
    assert!(message.contains("`petId`"), "{message}");
    assert_deprecation_headers(&reply);

    let reply = send_untouched(TestRequest::get().uri("/v1/pets/1")).await;
    reply.assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
    assert_deprecation_headers(&reply);
}

#[actix_web::test]
async fn get_pet_is_gone_from_the_sunset_on() {
    for now in [
        get_pet_sunset(),
        get_pet_sunset() + Duration::from_secs(86_400 * 365),
    ] {
        // No expectation on the repository: after the sunset it is not even asked.
        let reply = send(MockPetRepository::new(), clock_at(now), get_pet("4")).await;
        reply.assert_error(StatusCode::GONE, "gone");
        assert_deprecation_headers(&reply);
    }
}

#[actix_web::test]
async fn get_pet_maps_storage_outage_to_503() {
    let mut repository = MockPetRepository::new();
    repository.expect_find().returning(|_| Err(unavailable()));
    let reply = send(repository, before_sunset(), get_pet("1")).await;
    reply.assert_error(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable");
    assert_eq!(reply.header("retry-after"), Some("1"));
}

// --- routing fallbacks ----------------------------------------------------------------------

#[actix_web::test]
async fn unknown_paths_are_404_json_with_or_without_a_key() {
    for (path, with_key) in [
        ("/index.html", false),
        ("/pets", true),
        ("/v1/", false),
        ("/v1/unknown", false),
        ("/v1/unknown", true),
        ("/v1/pets/", true),
        ("/v1/pets/1/extra", true),
        ("/v2/pets", true),
    ] {
        let mut req = TestRequest::get().uri(path);
        if with_key {
            req = req.insert_header(bearer());
        }
        send_untouched(req)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
}

#[actix_web::test]
async fn the_root_and_v1_link_to_the_docs_without_a_key() {
    for path in ["/", "/v1"] {
        let reply = send_untouched(TestRequest::get().uri(path)).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.json()["documentation"], "/docs");
        assert_eq!(reply.json()["openapi"], "/v1/openapi.json");
        assert!(reply
            .header("link")
            .unwrap()
            .contains(r#"rel="service-desc""#));
    }
}

#[actix_web::test]
async fn other_methods_are_405_json_with_allow() {
    for (method, path, allow) in [
        (Method::PUT, "/v1/pets", "GET, HEAD, POST"),
        (Method::DELETE, "/v1/pets", "GET, HEAD, POST"),
        (Method::PATCH, "/v1/pets", "GET, HEAD, POST"),
        (Method::POST, "/v1/pets/1", "GET, HEAD, PATCH, DELETE"),
        (Method::PUT, "/v1/pets/1", "GET, HEAD, PATCH, DELETE"),
        (Method::POST, "/healthz", "GET, HEAD"),
        (Method::PUT, "/readyz", "GET, HEAD"),
        (Method::POST, "/", "GET, HEAD"),
        (Method::DELETE, "/v1", "GET, HEAD"),
    ] {
        let req = TestRequest::default()
            .method(method.clone())
            .uri(path)
            .insert_header(bearer());
        let reply = send_untouched(req).await;
        reply.assert_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
        assert_eq!(reply.header("allow"), Some(allow), "{method} {path}");
    }
}

// --- health ---------------------------------------------------------------------------------

#[actix_web::test]
async fn healthz_needs_no_key_and_touches_nothing() {
    let reply = send_untouched(TestRequest::get().uri("/healthz")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json(), json!({"status": "ok"}));
}

#[actix_web::test]
async fn readyz_follows_storage() {
    let mut repository = MockPetRepository::new();
    repository.expect_ping().returning(|| Ok(()));
    let reply = send(
        repository,
        MockClock::new(),
        TestRequest::get().uri("/readyz"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.json(), json!({"status": "ready"}));

    let mut repository = MockPetRepository::new();
    repository.expect_ping().returning(|| Err(unavailable()));
    let reply = send(
        repository,
        MockClock::new(),
        TestRequest::get().uri("/readyz"),
    )
    .await;
    reply.assert_error(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable");
    assert_eq!(reply.header("retry-after"), Some("1"));
}

/// From the moment a stop is asked for, `/readyz` says so, before anything else is checked.
#[actix_web::test]
async fn readyz_fails_at_once_when_the_instance_is_shutting_down() {
    let service = PetService::new(
        Arc::new(MockPetRepository::new()),
        Arc::new(MockClock::new()),
    );
    let state = HttpState::new(service, test_directory(KeyScope::Write), SECRET, &[]);
    let flag = state.shutdown_flag();
    let app = test::init_service(app(state)).await;
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
    let request = TestRequest::get().uri("/readyz").to_request();
    let body: Value = test::call_and_read_body_json(&app, request).await;
    assert_eq!(body["status"], 503, "{body}");
    assert_eq!(body["code"], "service_unavailable");
    assert!(
        body["message"].as_str().unwrap().contains("shutting down"),
        "{body}"
    );
}

/// An instance that cannot read the key registry keeps serving the keys it knew, but says it is
/// not ready once the registry has gone unread for longer than the bound (it would miss
/// revocations).
#[actix_web::test]
async fn readyz_fails_once_the_key_registry_has_gone_unread_too_long() {
    let now = Arc::new(std::sync::Mutex::new(SystemTime::now()));
    let mut registry = MockKeyRegistry::new();
    let mut reads = 0;
    registry.expect_changes_since().returning(move |_| {
        reads += 1;
        // The first read (at load) works; the registry is unreachable after that.
        if reads == 1 {
            Ok(KeyChanges::default())
        } else {
            Err(unavailable())
        }
    });
    let mut clock = MockClock::new();
    let shared = Arc::clone(&now);
    clock
        .expect_now()
        .returning(move || *shared.lock().unwrap());
    let directory = KeyDirectory::load(Arc::new(registry), Arc::new(clock)).unwrap();
    let readyz = || {
        let mut repository = MockPetRepository::new();
        repository.expect_ping().returning(|| Ok(()));
        send_with_keys(
            repository,
            MockClock::new(),
            directory.clone(),
            TestRequest::get().uri("/readyz"),
        )
    };

    *now.lock().unwrap() += Duration::from_secs(4);
    assert!(directory.refresh().is_err());
    assert_eq!(readyz().await.status, StatusCode::OK, "within the bound");
    *now.lock().unwrap() += Duration::from_secs(2);
    let reply = readyz().await;
    let message = reply.assert_error(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable");
    assert!(message.contains("key registry"), "{message}");
}

// --- the JSON safety net --------------------------------------------------------------------

#[actix_web::test]
async fn plain_text_errors_are_rewritten_as_json_keeping_their_headers() {
    use actix_web::{middleware, web, App, HttpResponse};

    let app = test::init_service(
        App::new()
            .route(
                "/teapot",
                web::get().to(|| async {
                    HttpResponse::NotFound()
                        .insert_header(("x-kept", "yes"))
                        .body("plain text")
                }),
            )
            .wrap(middleware::from_fn(
                crate::app::request_middleware::log_and_contain_failures,
            )),
    )
    .await;
    let response = test::call_service(&app, TestRequest::get().uri("/teapot").to_request()).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = test::read_body(response).await;
    let reply = Reply {
        status,
        headers,
        body,
    };
    reply.assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(reply.header("x-kept"), Some("yes"));
}
