//! The published contract: `GET /v1/openapi.json` equals the committed `docs/openapi.json` (so
//! every API change shows up in review), states the facts clients rely on, and leads tools that
//! join its server URL and paths to the real routes; `GET /docs` serves Swagger UI offline.

use awc::http::StatusCode;
use serde_json::Value;

use petstore_test_support::{send, Backend, TestApp};

/// The servers `make openapi` writes into `docs/openapi.json` (see `OPENAPI_SERVERS` in the
/// Makefile); the server under test is configured with the same ones.
const PUBLIC_URL: &str = "https://petstore.example.com/v1";
const STAGING_URL: &str = "https://staging.petstore.example.com/v1";

const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
const COMMITTED_3_0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi-3.0.json");

async fn served_document(app: &TestApp) -> String {
    // No key: the contract is public.
    let response = send(app.client.get(app.url("/v1/openapi.json")), None).await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.body);
    assert_eq!(response.header("content-type"), Some("application/json"));
    response.body
}

#[actix_web::test]
async fn the_served_document_is_the_committed_one() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_PUBLIC_URL", PUBLIC_URL)
        .setting("PETSTORE_STAGING_URL", STAGING_URL)
        .spawn()
        .await;
    let served = served_document(&app).await;
    let committed = std::fs::read_to_string(COMMITTED).expect("docs/openapi.json exists");
    assert!(
        served == committed,
        "docs/openapi.json differs from the document the server serves: run `make openapi` and \
         commit docs/openapi.json\n--- served ---\n{served}"
    );

    let doc: Value = serde_json::from_str(&served).expect("the document is JSON");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    assert_eq!(doc["servers"][0]["url"], PUBLIC_URL);
    assert_eq!(doc["servers"][1]["url"], STAGING_URL);
    let mut ids = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("operations") {
            ids.push(
                op["operationId"]
                    .as_str()
                    .expect("an operationId")
                    .to_owned(),
            );
            // The scope it needs, as its security requirement's role (OpenAPI 3.1).
            let scope = op["security"][0]["bearerAuth"][0]
                .as_str()
                .unwrap_or_default();
            assert!(
                ["read", "write", "store"].contains(&scope),
                "{method} {path}: {}",
                op["security"]
            );
            let deprecated = op["operationId"] == "getPet";
            assert_eq!(op["deprecated"].as_bool().unwrap_or(false), deprecated);
        }
    }
    ids.sort();
    assert_eq!(
        ids,
        [
            "approveOrder",
            "cancelOrder",
            "createCategory",
            "createPet",
            "createWebhookEndpoint",
            "deleteCategory",
            "deletePet",
            "deleteWebhookEndpoint",
            "deliverOrder",
            "getCategory",
            "getInventory",
            "getOrder",
            "getPet",
            "getWebhookDelivery",
            "getWebhookEndpoint",
            "listCategories",
            "listEvents",
            "listOrders",
            "listPets",
            "listWebhookDeliveries",
            "listWebhookEndpoints",
            "pingWebhookEndpoint",
            "placeOrder",
            "retryWebhookDelivery",
            "rotateWebhookSecret",
            "updateCategory",
            "updatePet",
            "updateWebhookEndpoint"
        ]
    );
    for schema in ["Pet", "NewPet", "PetStatus", "Pets", "Error"] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "no schema {schema}"
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearerAuth"]["scheme"],
        "bearer"
    );
}

/// The 3.0.3 document for tools that read only 3.0: committed like the 3.1 one, with the same
/// operations and nothing only 3.1 allows (type arrays, `null` types, schema `examples`).
#[actix_web::test]
async fn the_served_3_0_document_is_the_committed_one_and_plain_3_0() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_PUBLIC_URL", PUBLIC_URL)
        .setting("PETSTORE_STAGING_URL", STAGING_URL)
        .spawn()
        .await;
    let response = send(app.client.get(app.url("/v1/openapi-3.0.json")), None).await;
    assert_eq!(response.status, StatusCode::OK, "{}", response.body);
    let committed = std::fs::read_to_string(COMMITTED_3_0).expect("docs/openapi-3.0.json exists");
    assert!(
        response.body == committed,
        "docs/openapi-3.0.json differs from the document the server serves: run `make openapi` \
         and commit it\n--- served ---\n{}",
        response.body
    );
    let doc: Value = serde_json::from_str(&response.body).expect("JSON");
    assert_eq!(doc["openapi"], "3.0.3");
    let v3_1: Value = serde_json::from_str(&served_document(&app).await).expect("JSON");
    assert_eq!(
        doc["paths"].as_object().map(|paths| paths.len()),
        v3_1["paths"].as_object().map(|paths| paths.len())
    );
    fn check(value: &Value, at: &str) {
        match value {
            Value::Object(object) => {
                assert!(
                    !object.get("type").is_some_and(Value::is_array),
                    "type array at {at}"
                );
                assert!(
                    object.get("type") != Some(&Value::from("null")),
                    "null type at {at}"
                );
                assert!(
                    !object.get("examples").is_some_and(Value::is_array),
                    "schema examples at {at}"
                );
                assert!(!object.contains_key("const"), "const at {at}");
                for (key, child) in object {
                    check(child, &format!("{at}/{key}"));
                }
            }
            Value::Array(items) => items.iter().for_each(|item| check(item, at)),
            _ => {}
        }
    }
    check(&doc, "");
    assert_eq!(
        doc["components"]["schemas"]["NewPet"]["properties"]["status"]["nullable"],
        true
    );
}

/// For a webhook operation's `path`, an endpoint of its own and, when the path names one, a
/// delivery of it whose first attempt was made (so no attempt is in flight): their ids.
async fn webhook_of(app: &TestApp, staff: &str, path: &str) -> (String, String) {
    if !path.contains("{endpointId}") {
        return (String::new(), String::new());
    }
    let created = send(
        app.post_json_as(staff, "/v1/webhook-endpoints"),
        Some(r#"{"url":"https://hooks.openapi.invalid/in"}"#.to_owned()),
    )
    .await;
    let endpoint = created.json()["id"].to_string();
    if !path.contains("{deliveryId}") {
        return (endpoint, String::new());
    }
    let ping = format!("/v1/webhook-endpoints/{endpoint}/ping");
    let delivery = send(app.post_json_as(staff, &ping), None).await.json()["id"].to_string();
    let one = format!("/v1/webhook-endpoints/{endpoint}/deliveries/{delivery}");
    petstore_test_support::eventually(
        std::time::Duration::from_secs(15),
        "a first attempt",
        async || {
            let got = send(app.get_as(staff, &one), None).await.json();
            match got["attempts"].as_array().map(Vec::len) {
                Some(1) => Ok(()),
                _ => Err(got.to_string()),
            }
        },
    )
    .await;
    (endpoint, delivery)
}

/// Without `--public-url` the production server is the address served, so a tool that joins
/// `servers[0].url` and a path (Swagger UI, schemathesis) reaches the real route.
#[actix_web::test]
async fn joining_the_default_server_url_and_each_path_reaches_the_operation() {
    // An order for each operation: more than a key's default bound of open orders.
    // Webhook attempts fail at once (an address never connected to) and wait a day to be
    // retried, so a delivery stays still once attempted.
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_MAX_OPEN_ORDERS_PER_KEY", "100")
        .setting("PETSTORE_WEBHOOK_HOSTS", "hooks.openapi.invalid=10.0.0.1")
        .setting("PETSTORE_WEBHOOK_RETRY_SCHEDULE", "0s,24h")
        .spawn()
        .await;
    let doc: Value = serde_json::from_str(&served_document(&app).await).expect("JSON");
    let base = doc["servers"][0]["url"].as_str().expect("a server URL");
    assert_eq!(base, format!("{}/v1", app.address));
    assert_eq!(
        doc["servers"].as_array().map(Vec::len),
        Some(1),
        "no staging"
    );

    // Every operation with a `store` key, which may do them all.
    let staff = app.staff_key().await;
    // An order on an available pet of its own, for each store operation.
    let fresh_order = || async {
        let pet = app
            .create_pet(serde_json::json!({"name": "Ordered", "categoryId": 1}))
            .await;
        let placed = send(
            app.post_json("/v1/store/orders"),
            Some(serde_json::json!({"petId": pet["id"]}).to_string()),
        )
        .await;
        placed.json()["id"].to_string()
    };
    // A category of its own for each operation on one (a DELETE among them).
    let mut categories = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("operations").keys() {
            // A pet of its own for each operation on one (a DELETE among them).
            let id = app
                .create_pet(serde_json::json!({"name": "Rex", "categoryId": 1}))
                .await["id"]
                .to_string();
            let order_id = fresh_order().await;
            categories += 1;
            let category = send(
                app.post_json_as(&staff, "/v1/categories"),
                Some(serde_json::json!({"name": format!("Category {categories}")}).to_string()),
            )
            .await
            .json()["id"]
                .to_string();
            if path.ends_with("/deliver") {
                let approve = format!("/v1/store/orders/{order_id}/approve");
                send(app.post_json_as(&staff, &approve), None).await;
            }
            let (endpoint, delivery) = webhook_of(&app, &staff, path).await;
            let url = format!(
                "{base}{}",
                path.replace("{petId}", &id)
                    .replace("{orderId}", &order_id)
                    .replace("{categoryId}", &category)
                    .replace("{endpointId}", &endpoint)
                    .replace("{deliveryId}", &delivery)
            );
            let request = app
                .client
                .request(method.to_uppercase().parse().expect("a method"), &url)
                .bearer_auth(&staff)
                .insert_header(("Content-Type", "application/json"));
            let body = match (method.as_str(), path.as_str()) {
                ("post", "/pets") => Some(r#"{"name":"Tom","categoryId":2}"#.to_owned()),
                ("post", "/store/orders") => {
                    // The fresh order took its pet; order another one.
                    let pet = app
                        .create_pet(serde_json::json!({"name": "Free", "categoryId": 1}))
                        .await;
                    Some(serde_json::json!({"petId": pet["id"]}).to_string())
                }
                ("post", "/categories") => Some(r#"{"name":"Birds"}"#.to_owned()),
                ("patch", "/categories/{categoryId}") => Some(r#"{"name":"Fish"}"#.to_owned()),
                ("patch", "/pets/{petId}") => Some(r#"{"name":"Max"}"#.to_owned()),
                ("post", "/webhook-endpoints") => {
                    Some(r#"{"url":"https://hooks.openapi.invalid/in"}"#.to_owned())
                }
                ("patch", "/webhook-endpoints/{endpointId}") => {
                    Some(r#"{"enabled":false}"#.to_owned())
                }
                _ => None,
            };
            let response = send(request, body).await;
            assert!(
                response.status.is_success(),
                "{method} {url}: {} {}",
                response.status,
                response.body
            );
        }
    }
}

#[actix_web::test]
async fn docs_serves_swagger_ui_from_the_service_alone() {
    let app = TestApp::spawn(Backend::Memory).await;
    // `/docs` redirects to `/docs/` (the page loads its files relative to itself); awc follows
    // the redirect like a browser does.
    for path in ["/docs", "/docs/"] {
        let page = send(app.client.get(app.url(path)), None).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(
            page.body.contains("swagger-ui-bundle.js"),
            "{path}: {}",
            page.body
        );
    }
    let page = send(app.client.get(app.url("/docs/")), None).await;
    assert!(page
        .header("content-type")
        .is_some_and(|value| value.starts_with("text/html")));
    assert!(page.body.contains("swagger-ui"), "{}", page.body);
    assert!(
        !page.body.contains("http://") && !page.body.contains("https://"),
        "the page loads something from elsewhere: {}",
        page.body
    );
    let init = send(
        app.client.get(app.url("/docs/swagger-initializer.js")),
        None,
    )
    .await;
    assert!(init.body.contains("/v1/openapi.json"), "{}", init.body);

    // Everything else stays JSON.
    send(app.client.get(app.url("/docs/missing.css")), None)
        .await
        .assert_error(404, "not_found");
    send(app.client.delete(app.url("/v1/openapi.json")), None)
        .await
        .assert_error(405, "method_not_allowed");
}
