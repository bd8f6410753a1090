//! Bearer API keys: every way a key can be missing or wrong is a 401 with a JSON `Error` and a
//! `WWW-Authenticate` challenge, decided before anything else about the request.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use petstore_http::security::auth::key_id;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{claims_of, eventually, send, TestApp, TestResponse};

const CHALLENGE: &str = r#"Bearer realm="petstore""#;
const INVALID_TOKEN_CHALLENGE: &str = r#"Bearer realm="petstore", error="invalid_token""#;

fn now() -> i64 {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    i64::try_from(seconds).expect("seconds fit i64")
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

/// `token` with its header replaced by `header` (the signature is kept, so it no longer fits).
fn with_header(token: &str, header: &Value) -> String {
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    parts[0] = URL_SAFE_NO_PAD.encode(header.to_string());
    parts.join(".")
}

/// Every way a presented key can be wrong gets the same 401 `invalid_token`, whatever check
/// failed: the message does not tell an attacker which.
async fn every_refused_key_gets_the_same_invalid_token_answer(app: TestApp) {
    let secret = app.key_secret();
    let kid = key_id(&secret);
    // The app's own key, issued and recorded: a token with its `jti` passes the registry.
    let issued_jti = claims_of(&app.api_key)["jti"]
        .as_str()
        .expect("jti")
        .to_owned();
    let claims = |extra: Value| {
        let mut claims =
            json!({"sub": "mallory", "jti": issued_jti, "iat": now(), "exp": now() + 3600});
        claims
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        claims
    };
    let signed = |alg: Algorithm, secret: &[u8], kid: Option<&str>, claims: &Value| {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_owned);
        encode(&header, claims, &EncodingKey::from_secret(secret)).expect("sign")
    };
    // Signed with the right secret for an issued key's id, but not the token issued for it:
    // what anyone holding the secret could mint for any recorded key, with claims of their own.
    let minted = signed(Algorithm::HS256, &secret, Some(&kid), &claims(json!({})));
    let tampered = {
        let mut parts: Vec<String> = app.api_key.split('.').map(str::to_owned).collect();
        parts[1] = URL_SAFE_NO_PAD.encode(claims(json!({"sub": "admin"})).to_string());
        parts.join(".")
    };
    let bad_tokens = [
        ("not a JWT", "not-a-jwt".to_owned()),
        (
            "alg none",
            format!(
                "{}.{}.",
                URL_SAFE_NO_PAD
                    .encode(json!({"alg": "none", "typ": "JWT", "kid": kid}).to_string()),
                URL_SAFE_NO_PAD.encode(claims(json!({})).to_string()),
            ),
        ),
        (
            "HS384, same secret",
            signed(Algorithm::HS384, &secret, Some(&kid), &claims(json!({}))),
        ),
        (
            "HS512, same secret",
            signed(Algorithm::HS512, &secret, Some(&kid), &claims(json!({}))),
        ),
        (
            "an RS256 header",
            with_header(
                &app.api_key,
                &json!({"alg": "RS256", "typ": "JWT", "kid": kid}),
            ),
        ),
        (
            "an ES256 header",
            with_header(
                &app.api_key,
                &json!({"alg": "ES256", "typ": "JWT", "kid": kid}),
            ),
        ),
        (
            "signed with another secret under our kid",
            signed(
                Algorithm::HS256,
                b"another secret that is long enough!!",
                Some(&kid),
                &claims(json!({})),
            ),
        ),
        (
            "no kid",
            signed(Algorithm::HS256, &secret, None, &claims(json!({}))),
        ),
        (
            "an unknown kid",
            signed(
                Algorithm::HS256,
                &secret,
                Some("00000000deadbeef"),
                &claims(json!({})),
            ),
        ),
        ("payload swapped", tampered),
        (
            "expired an hour ago",
            signed(
                Algorithm::HS256,
                &secret,
                Some(&kid),
                &claims(json!({"iat": now() - 7200, "exp": now() - 3600})),
            ),
        ),
        (
            "not valid for another hour",
            signed(
                Algorithm::HS256,
                &secret,
                Some(&kid),
                &claims(json!({"nbf": now() + 3600})),
            ),
        ),
        (
            "issued ten years from now",
            signed(
                Algorithm::HS256,
                &secret,
                Some(&kid),
                &claims(json!({"iat": now() + 315_360_000})),
            ),
        ),
        ("a critical header extension", {
            let mut header = Header::new(Algorithm::HS256);
            header.kid = Some(kid.clone());
            header.crit = Some(vec!["exp".to_owned()]);
            encode(
                &header,
                &claims(json!({})),
                &EncodingKey::from_secret(&secret),
            )
            .expect("sign")
        }),
        (
            "never issued (signed right, unknown to the registry)",
            signed(
                Algorithm::HS256,
                &secret,
                Some(&kid),
                &claims(json!({"jti": "ffffffffffffffffffffffffffffffff"})),
            ),
        ),
        ("huge", format!("{}{}", app.api_key, "A".repeat(20_000))),
        ("minted for an issued key's id with other claims", minted),
        (
            "minted for an issued key's id with its own claims but no expiry",
            signed(Algorithm::HS256, &secret, Some(&kid), &{
                let mut own = claims_of(&app.api_key);
                own.as_object_mut().expect("an object").remove("exp");
                own
            }),
        ),
    ];
    let mut messages = std::collections::BTreeSet::new();
    for (what, token) in bad_tokens {
        let response = list_with_authorization(&app, &format!("Bearer {token}")).await;
        assert_eq!(response.status.as_u16(), 401, "{what}: {}", response.body);
        assert_unauthorized(&response, INVALID_TOKEN_CHALLENGE);
        messages.insert(
            response.json()["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    assert_eq!(
        messages.len(),
        1,
        "the message tells refusals apart: {messages:?}"
    );

    let response = list_with_authorization(&app, &format!("Bearer {}", app.api_key)).await;
    assert_eq!(
        response.status.as_u16(),
        200,
        "the token the registry issued: {}",
        response.body
    );
}

/// A read key lists and gets; creating is 403 `forbidden` with `insufficient_scope`, and
/// nothing is stored.
async fn a_read_key_reads_but_may_not_write(app: TestApp) {
    let read_key = app
        .issue_key(&["--name", "dashboard", "--scope", "read"])
        .await;
    let response = list_with_authorization(&app, &format!("Bearer {read_key}")).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    let created = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let response = send(
        app.client
            .get(app.url(&format!("/v1/pets/{}", created["id"])))
            .bearer_auth(&read_key),
        None,
    )
    .await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);

    let response = send(
        app.client
            .post(app.url("/v1/pets"))
            .bearer_auth(&read_key)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"name": "Sneaky", "categoryId": 1}).to_string()),
    )
    .await;
    response.assert_error(403, "forbidden");
    assert_eq!(
        response.header("www-authenticate"),
        Some(r#"Bearer realm="petstore", error="insufficient_scope", scope="write""#)
    );
    assert_eq!(
        app.list("").await.len(),
        1,
        "the forbidden create stored nothing"
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
    let key = app
        .issue_key(&["--name", "ci-robot", "--expires-in", "30d"])
        .await;
    let claims = claims_of(&key);
    assert_eq!(claims["sub"], "ci-robot");
    assert!(
        claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()),
        "{claims}"
    );
    let iat = claims["iat"].as_i64().expect("iat");
    assert!((iat - now()).abs() < 60, "{claims}");
    assert_eq!(claims["exp"].as_i64(), Some(iat + 30 * 86_400), "{claims}");

    let response = list_with_authorization(&app, &format!("Bearer {key}")).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);

    // Without --expires-in a key lasts 90 days; a key that never expires must be asked for.
    let default = claims_of(&app.issue_key(&["--name", "default"]).await);
    assert_eq!(
        default["exp"].as_i64(),
        Some(default["iat"].as_i64().expect("iat") + 90 * 86_400),
        "{default}"
    );
    let forever = claims_of(
        &app.issue_key(&["--name", "forever", "--expires-in", "never"])
            .await,
    );
    assert!(forever.get("exp").is_none(), "{forever}");
}

// Every refusal on every registry (the header checks come before the registry, but a key that
// passes them is looked up there).
on_backends!(
    [memory, sqlite, postgres]
    two_authorization_headers_are_refused,
    the_scheme_word_is_case_insensitive,
    authentication_is_decided_before_the_request_is_looked_at,
    every_operation_needs_a_key,
    another_scheme_or_an_empty_token_is_refused,
    every_refused_key_gets_the_same_invalid_token_answer,
    a_read_key_reads_but_may_not_write,
    issued_keys_carry_their_claims_and_expiry,
);

/// Revocation from the command line needs a registry another process can reach: not `memory:`.
mod revocation {
    use super::*;

    /// `keys revoke` on the database: the server refuses the key within a second, and revoking
    /// again says so and changes nothing.
    async fn a_revoked_key_is_refused_within_a_second(app: TestApp) {
        let key = app.issue_key(&["--name", "leaked"]).await;
        let response = list_with_authorization(&app, &format!("Bearer {key}")).await;
        assert_eq!(response.status.as_u16(), 200, "{}", response.body);
        let id = claims_of(&key)["jti"].as_str().expect("jti").to_owned();

        let revoked_at = Instant::now();
        let output = app.run_keys_command(&["revoke", &id]);
        assert!(output.status.success(), "{output:?}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("revoked key"),
            "{output:?}"
        );
        let refused = eventually(
            revoked_at + Duration::from_secs(1),
            "the revoked key refused",
            async || {
                let response = list_with_authorization(&app, &format!("Bearer {key}")).await;
                if response.status.as_u16() == 401 {
                    Ok(response)
                } else {
                    Err(response.status)
                }
            },
        )
        .await;
        assert_unauthorized(&refused, INVALID_TOKEN_CHALLENGE);
        let again = app.run_keys_command(&["revoke", &id]);
        assert!(again.status.success(), "{again:?}");
        assert!(
            String::from_utf8_lossy(&again.stdout).contains("already revoked"),
            "{again:?}"
        );
        // The app's own key is untouched.
        assert_eq!(app.list("").await.len(), 0);
    }

    on_backends!([sqlite, postgres] a_revoked_key_is_refused_within_a_second);
}
