//! Bearer API keys: every way a key can be missing or wrong is a 401 with a JSON `Error` and a
//! `WWW-Authenticate` challenge, decided before anything else about the request.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use crate::helpers::{send, TestApp, TestResponse};
use crate::on_backends;

const CHALLENGE: &str = r#"Bearer realm="petstore""#;
const INVALID_TOKEN_CHALLENGE: &str = r#"Bearer realm="petstore", error="invalid_token""#;

fn now() -> i64 {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    i64::try_from(seconds).expect("seconds fit i64")
}

fn sign(algorithm: Algorithm, secret: &[u8], claims: &Value) -> String {
    encode(
        &Header::new(algorithm),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .expect("sign")
}

async fn list_with_authorization(app: &TestApp, authorization: &str) -> TestResponse {
    send(
        app.client
            .get(app.url("/v1/pets"))
            .insert_header(("Authorization", authorization)),
        None,
    )
    .await
}

fn assert_unauthorized(response: &TestResponse, challenge: &str) {
    response.assert_error(401, "unauthorized");
    assert_eq!(response.header("www-authenticate"), Some(challenge));
}

async fn every_operation_needs_a_key(app: TestApp) {
    let requests = [
        app.client.get(app.url("/v1/pets")),
        app.client.get(app.url("/v1/pets/1")),
        app.client
            .post(app.url("/v1/pets"))
            .insert_header(("Content-Type", "application/json")),
    ];
    for request in requests {
        let response = send(
            request,
            Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
        )
        .await;
        assert_unauthorized(&response, CHALLENGE);
    }
    assert!(
        app.list("").await.is_empty(),
        "an unauthenticated create stored a pet"
    );
}

/// RFC 6750 3.1: a request carrying two `Authorization` headers is malformed, even when the first
/// holds a valid key (taking the first would let it vouch for the other).
async fn two_authorization_headers_are_refused(app: TestApp) {
    let valid = format!("Bearer {}", app.api_key);
    for second in [valid.as_str(), "Bearer forged", "Basic dXNlcjpwYXNz"] {
        let response = send(
            app.client
                .get(app.url("/v1/pets"))
                .append_header(("Authorization", valid.as_str()))
                .append_header(("Authorization", second)),
            None,
        )
        .await;
        response.assert_error(401, "unauthorized");
        assert_eq!(
            response.header("www-authenticate"),
            Some(r#"Bearer realm="petstore", error="invalid_request""#),
            "{second}"
        );
    }
}

async fn another_scheme_or_an_empty_token_is_refused(app: TestApp) {
    for authorization in [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer ",
        "Token abc",
        &app.api_key,
    ] {
        let response = list_with_authorization(&app, authorization).await;
        assert_eq!(
            response.status.as_u16(),
            401,
            "{authorization:?}: {}",
            response.body
        );
        response.assert_error(401, "unauthorized");
        let challenge = response.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with(CHALLENGE),
            "{authorization:?}: {challenge}"
        );
    }
}

async fn the_scheme_word_is_case_insensitive(app: TestApp) {
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let response = list_with_authorization(&app, &format!("{scheme} {}", app.api_key)).await;
        assert_eq!(response.status.as_u16(), 200, "{scheme}: {}", response.body);
    }
}

async fn malformed_forged_and_expired_keys_are_invalid_tokens(app: TestApp) {
    let secret = app.key_secret();
    let valid_claims = json!({"sub": "mallory", "jti": "1", "iat": now(), "exp": now() + 3600});
    let expired_claims =
        json!({"sub": "old", "jti": "2", "iat": now() - 7200, "exp": now() - 3600});
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(valid_claims.to_string()),
    );
    let tampered = {
        let mut parts: Vec<String> = app.api_key.split('.').map(str::to_owned).collect();
        parts[1] =
            URL_SAFE_NO_PAD.encode(json!({"sub": "admin", "jti": "x", "iat": now()}).to_string());
        parts.join(".")
    };
    let bad_tokens = [
        ("not a JWT", "not-a-jwt".to_owned()),
        (
            "signed with another secret",
            sign(
                Algorithm::HS256,
                b"another secret that is long enough!!",
                &valid_claims,
            ),
        ),
        ("alg none", unsigned),
        (
            "another algorithm, same secret",
            sign(Algorithm::HS384, &secret, &valid_claims),
        ),
        (
            "expired an hour ago",
            sign(Algorithm::HS256, &secret, &expired_claims),
        ),
        ("payload swapped", tampered),
        (
            "not valid for another hour",
            sign(
                Algorithm::HS256,
                &secret,
                &json!({"sub": "early", "jti": "3", "iat": now(), "nbf": now() + 3600}),
            ),
        ),
        (
            "issued ten years from now",
            sign(
                Algorithm::HS256,
                &secret,
                &json!({"sub": "later", "jti": "4", "iat": now() + 315_360_000}),
            ),
        ),
        ("a critical header extension", {
            let mut header = Header::new(Algorithm::HS256);
            header.crit = Some(vec!["exp".to_owned()]);
            encode(&header, &valid_claims, &EncodingKey::from_secret(&secret)).expect("sign")
        }),
    ];
    for (what, token) in bad_tokens {
        let response = list_with_authorization(&app, &format!("Bearer {token}")).await;
        assert_eq!(response.status.as_u16(), 401, "{what}: {}", response.body);
        assert_unauthorized(&response, INVALID_TOKEN_CHALLENGE);
    }

    let genuine = sign(Algorithm::HS256, &secret, &valid_claims);
    let response = list_with_authorization(&app, &format!("Bearer {genuine}")).await;
    assert_eq!(
        response.status.as_u16(),
        200,
        "a correctly signed key: {}",
        response.body
    );
}

async fn authentication_is_decided_before_the_request_is_looked_at(app: TestApp) {
    let no_key_bad_body = send(
        app.client
            .post(app.url("/v1/pets"))
            .insert_header(("Content-Type", "application/json")),
        Some("{not json".to_owned()),
    )
    .await;
    assert_unauthorized(&no_key_bad_body, CHALLENGE);

    let bad_key_wrong_type = send(
        app.client
            .post(app.url("/v1/pets"))
            .bearer_auth("nope")
            .insert_header(("Content-Type", "text/plain")),
        Some("hello".to_owned()),
    )
    .await;
    assert_unauthorized(&bad_key_wrong_type, INVALID_TOKEN_CHALLENGE);

    for path in ["/v1/pets/999999", "/v1/pets/abc", "/v1/pets?limit=0"] {
        let response = send(app.client.get(app.url(path)), None).await;
        assert_unauthorized(&response, CHALLENGE);
    }
}

async fn issued_keys_carry_their_claims_and_expiry(app: TestApp) {
    let key = app.issue_key(&["--name", "ci-robot", "--expires-in", "90d"]);
    let payload = key.split('.').nth(1).expect("a JWT has a payload");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("JSON");
    assert_eq!(claims["sub"], "ci-robot");
    assert!(
        claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()),
        "{claims}"
    );
    let iat = claims["iat"].as_i64().expect("iat");
    assert!((iat - now()).abs() < 60, "{claims}");
    assert_eq!(claims["exp"].as_i64(), Some(iat + 90 * 86_400), "{claims}");

    let response = list_with_authorization(&app, &format!("Bearer {key}")).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);

    let forever = app.issue_key(&["--name", "forever"]);
    let payload = forever.split('.').nth(1).expect("payload");
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("JSON");
    assert!(claims.get("exp").is_none(), "{claims}");
}

// Keys are checked before storage is touched: the backend makes no difference.
on_backends!(
    [memory]
    every_operation_needs_a_key,
    two_authorization_headers_are_refused,
    another_scheme_or_an_empty_token_is_refused,
    the_scheme_word_is_case_insensitive,
    malformed_forged_and_expired_keys_are_invalid_tokens,
    authentication_is_decided_before_the_request_is_looked_at,
    issued_keys_carry_their_claims_and_expiry,
);
