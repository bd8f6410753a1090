//! How a write's outcome is answered: what a client sees first and on a replay.

use actix_web::body::MessageBody;

use super::*;
use crate::error::ErrorCode;

/// A result carrying a secret that its first answer shows once.
struct Endpoint {
    id: u32,
    secret: &'static str,
}

fn with_secret(endpoint: &Endpoint) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[],
        &serde_json::json!({"id": endpoint.id, "secret": endpoint.secret}),
    )
}

fn without_secret(endpoint: &Endpoint) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[],
        &serde_json::json!({"id": endpoint.id}),
    )
}

fn body_of(response: HttpResponse) -> String {
    let bytes = response.into_body().try_into_bytes().expect("a full body");
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

#[test]
fn a_secret_is_answered_once_and_recorded_without_it() {
    let rendering = Rendering::secret_once(with_secret, without_secret);
    let endpoint = Endpoint {
        id: 7,
        secret: "whsec_abc",
    };
    // What storage recorded for the key, from the plan it was given.
    let recorded = (rendering.recorded)(&endpoint);
    assert!(!String::from_utf8_lossy(&recorded.body).contains("whsec_abc"));

    let first = answer_written(
        rendering,
        None,
        Written::Done(endpoint, Some(recorded.clone())),
    )
    .expect("an answer");
    assert_eq!(first.status(), StatusCode::CREATED);
    assert_eq!(body_of(first), r#"{"id":7,"secret":"whsec_abc"}"#);

    let replayed = answer(Answer::Replay(recorded)).expect("a replay");
    assert_eq!(
        replayed
            .headers()
            .get(IDEMPOTENT_REPLAYED)
            .map(HeaderValue::as_bytes),
        Some(&b"true"[..])
    );
    assert_eq!(body_of(replayed), r#"{"id":7}"#);
}

#[test]
fn a_write_is_answered_with_the_response_recorded_with_it() {
    let rendering = Rendering::same(without_secret);
    let endpoint = Endpoint { id: 3, secret: "" };
    let recorded = StoredResponse {
        status: 201,
        headers: vec![("location".to_owned(), "/v1/things/3".to_owned())],
        body: br#"{"id":3}"#.to_vec(),
    };
    let sent = answer_written(rendering, None, Written::Done(endpoint, Some(recorded)))
        .expect("an answer");
    assert_eq!(
        sent.headers()
            .get(header::LOCATION)
            .map(HeaderValue::as_bytes),
        Some(&b"/v1/things/3"[..])
    );
    assert!(sent.headers().get(IDEMPOTENT_REPLAYED).is_none());
    assert_eq!(body_of(sent), r#"{"id":3}"#);

    let unkeyed = answer_written(
        rendering,
        None,
        Written::Done(Endpoint { id: 4, secret: "" }, None),
    )
    .expect("an answer");
    assert_eq!(body_of(unkeyed), r#"{"id":4}"#);
}

/// `response` with its headers in name order: two responses alike whatever order they were
/// inserted in.
pub(crate) fn sorted(response: StoredResponse) -> StoredResponse {
    let mut response = response;
    response.headers.sort();
    response
}

#[test]
fn a_json_response_sent_directly_is_the_one_sent_from_its_record() {
    let extra = [
        (header::LOCATION, "/v1/things/3".to_owned()),
        (header::ETAG, "\"1.1\"".to_owned()),
        (header::WARNING, "not a\nheader value".to_owned()),
    ];
    let body = serde_json::json!({"id": 3, "name": "Rex"});
    let recorded = json_response(StatusCode::CREATED, &extra, &body);
    let from_record = stored(sent(recorded));
    assert_eq!(
        sorted(stored(json_sent(StatusCode::CREATED, extra, &body))),
        sorted(from_record.clone())
    );
    assert_eq!(from_record.status, 201);
    assert_eq!(from_record.headers.len(), 3, "{:?}", from_record.headers);
    assert_eq!(from_record.body, br#"{"id":3,"name":"Rex"}"#);
}

#[test]
fn a_write_without_a_key_is_answered_directly_when_its_rendering_says_how() {
    fn directly(endpoint: Endpoint) -> HttpResponse {
        json_sent(
            StatusCode::CREATED,
            [(header::LOCATION, format!("/v1/things/{}", endpoint.id))],
            &serde_json::json!({"id": endpoint.id, "direct": true}),
        )
    }
    let rendering = Rendering::same(without_secret).sent_directly(directly);
    let unkeyed = answer_written(
        rendering,
        None,
        Written::Done(Endpoint { id: 5, secret: "" }, None),
    )
    .expect("an answer");
    assert_eq!(body_of(unkeyed), r#"{"direct":true,"id":5}"#);

    let recorded = without_secret(&Endpoint { id: 5, secret: "" });
    let keyed = answer_written(
        rendering,
        None,
        Written::Done(Endpoint { id: 5, secret: "" }, Some(recorded)),
    )
    .expect("an answer");
    assert_eq!(
        body_of(keyed),
        r#"{"id":5}"#,
        "a keyed write sends its record"
    );
}

#[test]
fn only_refusals_of_the_request_itself_are_recorded() {
    let malformed = ApiError::new(ErrorCode::MalformedJson, "not JSON");
    assert!(depends_on_request_alone(&malformed));
    for code in [
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::TooManyOpenOrders,
    ] {
        assert!(
            !depends_on_request_alone(&ApiError::new(code, "depends on what is stored")),
            "{code:?}"
        );
    }
}
