//! `GET /v1/pets/{petId}` (getPet, deprecated): the pet, 404, a bad id, and the deprecation
//! headers on every answer. (Its 410 after the sunset is proven with a mocked clock in the
//! application's unit tests.)

use serde_json::json;

use petstore_test_support::on_backends;
use petstore_test_support::TestApp;
use petstore_test_support::{send, TestResponse};

fn assert_deprecation_headers(response: &TestResponse) {
    assert_eq!(response.header("deprecation"), Some("@1795305600"));
    assert_eq!(
        response.header("sunset"),
        Some("Thu, 05 Dec 2030 00:00:00 GMT")
    );
    let link = response.header("link").expect("a Link to the replacement");
    assert!(
        link.starts_with("</v1/pets") && link.ends_with(r#">; rel="successor-version""#),
        "{link}"
    );
}

async fn returns_the_pet_with_deprecation_headers(app: TestApp) {
    let created = app
        .create_pet(json!({"name": "Rex", "categoryId": 3, "status": "sold"}))
        .await;
    let id = created["id"].as_i64().expect("id");

    let response = send(app.get(&format!("/v1/pets/{id}")), None).await;

    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    assert_eq!(response.json(), created);
    assert_deprecation_headers(&response);
    // The successor link fetches the same pet through listPets.
    let link = response.header("link").expect("a Link");
    assert_eq!(
        link,
        format!(r#"</v1/pets?id={id}>; rel="successor-version""#)
    );
    let successor = send(app.get(&format!("/v1/pets?id={id}")), None).await;
    assert_eq!(successor.json(), json!([created]));
}

async fn an_unknown_id_is_404(app: TestApp) {
    let response = send(app.get("/v1/pets/424242"), None).await;
    let message = response.assert_error(404, "not_found");
    assert!(message.contains("424242"), "{message}");
    assert_deprecation_headers(&response);
}

async fn an_id_that_is_not_an_int64_is_400(app: TestApp) {
    for raw in ["abc", "1.5", "9223372036854775808", "-"] {
        let response = send(app.get(&format!("/v1/pets/{raw}")), None).await;
        let message = response.assert_error(400, "invalid_parameter");
        assert!(message.contains("petId"), "{raw}: {message}");
    }
}

on_backends!(
    [memory, sqlite, postgres]
    returns_the_pet_with_deprecation_headers,
    an_unknown_id_is_404,
);

/// Refused before storage is touched: the backend makes no difference.
mod refused_before_storage {
    use super::*;
    on_backends!([memory] an_id_that_is_not_an_int64_is_400);
}
