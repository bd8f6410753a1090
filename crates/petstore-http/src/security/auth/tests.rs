//! Unit tests of key verification and the `Authorization` header check (issuing is the
//! server's: `crates/petstore-server/src/keys.rs`).

#![allow(clippy::unwrap_used)]

use actix_web::test::TestRequest;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use actix_web::http::header;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use petstore_domain::KeyScope;

use super::token_check::unix_now;
use super::*;
use crate::error::{ApiError, ErrorCode};

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

fn keys() -> ApiKeys {
    ApiKeys::new(SECRET, &[])
}

/// A token with arbitrary claims signed by `secret` with `alg` (and `secret`'s `kid`), for cases
/// `issue` cannot make.
fn signed(alg: Algorithm, secret: &[u8], claims: &serde_json::Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(key_id(secret));
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).unwrap()
}

fn claims_expiring_at(exp: u64) -> serde_json::Value {
    serde_json::json!({"sub": "ci", "jti": TEST_KEY_ID, "iat": exp.saturating_sub(3600), "exp": exp})
}

#[test]
fn the_kid_names_the_secret_without_revealing_it() {
    let kid = key_id(SECRET);
    assert_eq!(kid.len(), 16);
    assert_eq!(kid, key_id(SECRET), "stable");
    assert_ne!(kid, key_id(b"another secret of enough length!!"));
    assert!(!kid.contains("0123"), "{kid}");
}

#[test]
fn a_token_without_a_kid_or_with_an_unknown_one_is_refused() {
    let claims = serde_json::json!({"sub": "ci", "jti": TEST_KEY_ID, "iat": unix_now()});
    let bare = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET),
    )
    .unwrap();
    assert!(matches!(keys().verify(&bare), Err(KeyError::Invalid(_))));
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("0000000000000000".into());
    let unknown =
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(SECRET)).unwrap();
    assert!(matches!(keys().verify(&unknown), Err(KeyError::Invalid(_))));
}

#[test]
fn keys_of_a_previous_secret_are_accepted_during_a_rotation_only() {
    const OLD: &[u8] = b"the secret before the rotation!!";
    let token = test_key(OLD, "legacy");
    assert!(keys().verify(&token).is_err(), "not without the old secret");
    let rotating = ApiKeys::new(SECRET, &[OLD]);
    assert_eq!(rotating.verify(&token).unwrap().sub, "legacy");
    assert_eq!(
        rotating.verify(&test_key(SECRET, "new")).unwrap().sub,
        "new"
    );
}

#[test]
fn a_huge_token_is_refused_before_it_is_decoded() {
    let huge = format!(
        "{}.{}.{}",
        "a".repeat(1000),
        "b".repeat(1000),
        "c".repeat(100)
    );
    assert!(
        matches!(keys().verify(&huge), Err(KeyError::Invalid(reason)) if reason.contains("bytes long"))
    );
}

#[test]
fn a_key_without_exp_is_accepted_and_says_so() {
    let claims = keys().verify(&test_key(SECRET, "forever")).unwrap();
    assert_eq!((claims.sub.as_str(), claims.exp), ("forever", None));
}

#[test]
fn expired_beyond_the_leeway_is_rejected_as_expired() {
    let exp = unix_now() - EXP_LEEWAY.as_secs() - 30;
    let token = signed(Algorithm::HS256, SECRET, &claims_expiring_at(exp));
    assert!(matches!(keys().verify(&token), Err(KeyError::Expired)));
}

#[test]
fn expired_within_the_leeway_is_still_accepted() {
    let exp = unix_now() - EXP_LEEWAY.as_secs() / 3;
    let token = signed(Algorithm::HS256, SECRET, &claims_expiring_at(exp));
    assert_eq!(keys().verify(&token).unwrap().exp, Some(exp));
}

#[test]
fn wrong_secret_is_rejected() {
    let token = test_key(b"another secret of enough length!!", "mallory");
    assert!(matches!(keys().verify(&token), Err(KeyError::Invalid(_))));
}

#[test]
fn alg_none_is_rejected() {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"mallory","jti":"00","iat":1}"#);
    for token in [
        format!("{header}.{payload}."),
        format!("{header}.{payload}"),
    ] {
        assert!(
            matches!(keys().verify(&token), Err(KeyError::Invalid(_))),
            "{token}"
        );
    }
}

#[test]
fn other_algorithm_with_the_same_secret_is_rejected() {
    let claims = serde_json::json!({"sub": "mallory", "jti": "00", "iat": 1});
    for alg in [Algorithm::HS384, Algorithm::HS512] {
        let token = signed(alg, SECRET, &claims);
        assert!(
            matches!(keys().verify(&token), Err(KeyError::Invalid(_))),
            "{alg:?}"
        );
    }
}

#[test]
fn tampered_payload_is_rejected() {
    let token = test_key(SECRET, "alice");
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    parts[1] = URL_SAFE_NO_PAD.encode(br#"{"sub":"admin","jti":"00","iat":1}"#);
    assert!(matches!(
        keys().verify(&parts.join(".")),
        Err(KeyError::Invalid(_))
    ));
}

#[test]
fn malformed_tokens_are_rejected() {
    for token in ["", "abc", "a.b.c", "a.b", "....", "eyJ.eyJ.sig"] {
        assert!(
            matches!(keys().verify(token), Err(KeyError::Invalid(_))),
            "{token:?}"
        );
    }
}

#[test]
fn token_missing_its_name_is_rejected() {
    let token = signed(
        Algorithm::HS256,
        SECRET,
        &serde_json::json!({"jti": "00", "iat": 1}),
    );
    assert!(matches!(keys().verify(&token), Err(KeyError::Invalid(_))));
}

#[test]
fn debug_output_does_not_contain_the_secret() {
    let text = format!("{:?}", keys());
    assert!(!text.contains("0123456789abcdef"));
}

fn authenticate_with(value: Option<&str>) -> Result<KeyCheck, ApiError> {
    let mut req = TestRequest::get();
    if let Some(value) = value {
        req = req.insert_header((header::AUTHORIZATION, value));
    }
    authenticate_request(&req.to_http_request())
}

/// A read of `req`, by [`keys`] and a directory that knows the test key as a write key.
fn authenticate_request(req: &actix_web::HttpRequest) -> Result<KeyCheck, ApiError> {
    authenticate(
        req,
        &keys(),
        &test_directory(KeyScope::Write),
        KeyScope::Read,
    )
}

#[actix_web::test]
async fn a_valid_token_the_registry_does_not_know_is_looked_up_once_then_refused_at_once() {
    let claims = serde_json::json!({"sub": "ci", "jti": "ffffffffffffffffffffffffffffffff", "iat": unix_now()});
    let token = signed(Algorithm::HS256, SECRET, &claims);
    assert!(keys().verify(&token).is_ok(), "the token itself is fine");
    let req = TestRequest::get()
        .insert_header((header::AUTHORIZATION, format!("Bearer {token}")))
        .to_http_request();
    let directory = test_directory(KeyScope::Write);

    let Ok(KeyCheck::NotKnownHere(claims)) =
        authenticate(&req, &keys(), &directory, KeyScope::Read)
    else {
        panic!("a signed key the directory does not know is worth a lookup");
    };
    let err = look_up(claims, directory.clone(), KeyScope::Read)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    assert_eq!(err.message(), "invalid or expired API key");

    // Found unknown a moment ago: refused without another lookup.
    let err = authenticate(&req, &keys(), &directory, KeyScope::Read).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
}

#[test]
fn a_read_key_may_read_but_not_write() {
    let req = TestRequest::get()
        .insert_header((
            header::AUTHORIZATION,
            format!("Bearer {}", test_key(SECRET, "r")),
        ))
        .to_http_request();
    let directory = test_directory(KeyScope::Read);
    assert!(matches!(
        authenticate(&req, &keys(), &directory, KeyScope::Read),
        Ok(KeyCheck::Judged(Verdict::Accepted(_, KeyScope::Read)))
    ));
    let Ok(KeyCheck::Judged(Verdict::OutOfScope(_, _, err))) =
        authenticate(&req, &keys(), &directory, KeyScope::Write)
    else {
        panic!("a read key is out of scope for a write");
    };
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(
        challenge(&err),
        r#"Bearer realm="petstore", error="insufficient_scope", scope="write""#
    );
}

#[test]
fn only_a_store_key_may_do_the_staffs_work() {
    let req = TestRequest::get()
        .insert_header((
            header::AUTHORIZATION,
            format!("Bearer {}", test_key(SECRET, "w")),
        ))
        .to_http_request();
    let Ok(KeyCheck::Judged(Verdict::OutOfScope(_, KeyScope::Write, err))) = authenticate(
        &req,
        &keys(),
        &test_directory(KeyScope::Write),
        KeyScope::Store,
    ) else {
        panic!("a write key is out of scope for the staff's work");
    };
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(
        challenge(&err),
        r#"Bearer realm="petstore", error="insufficient_scope", scope="store""#
    );
    for needed in KeyScope::ALL {
        assert!(matches!(
            authenticate(&req, &keys(), &test_directory(KeyScope::Store), needed),
            Ok(KeyCheck::Judged(Verdict::Accepted(_, KeyScope::Store)))
        ));
    }
}

fn challenge(err: &ApiError) -> String {
    err.headers()
        .iter()
        .find(|(name, _)| name == header::WWW_AUTHENTICATE)
        .map(|(_, value)| value.to_str().unwrap().to_owned())
        .unwrap()
}

#[test]
fn scheme_word_is_case_insensitive() {
    let token = test_key(SECRET, "alice");
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let Ok(KeyCheck::Judged(Verdict::Accepted(claims, _))) =
            authenticate_with(Some(&format!("{scheme} {token}")))
        else {
            panic!("{scheme}: refused");
        };
        assert_eq!(claims.sub, "alice");
    }
}

#[test]
fn no_token_gets_a_plain_challenge() {
    for value in [
        None,
        Some("Basic dXNlcjpwYXNz"),
        Some("Bearer"),
        Some("Bearer   "),
    ] {
        let err = authenticate_with(value).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Unauthorized, "{value:?}");
        assert_eq!(challenge(&err), r#"Bearer realm="petstore""#, "{value:?}");
    }
}

#[test]
fn bad_token_gets_an_invalid_token_challenge() {
    let err = authenticate_with(Some("Bearer not-a-jwt")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unauthorized);
    assert_eq!(err.message(), "invalid or expired API key");
    assert_eq!(
        challenge(&err),
        r#"Bearer realm="petstore", error="invalid_token""#
    );
}

#[test]
fn a_key_with_bytes_beyond_ascii_is_an_invalid_token() {
    let token = test_key(SECRET, "alice");
    let with_nbsp = format!("Bearer {token}\u{a0}");
    for value in [
        with_nbsp.as_bytes(),
        b"Bearer \xff\xfe",
        "Bearer clé".as_bytes(),
    ] {
        let req = TestRequest::get()
            .insert_header((
                header::AUTHORIZATION,
                header::HeaderValue::from_bytes(value).unwrap(),
            ))
            .to_http_request();
        let err = authenticate_request(&req).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Unauthorized, "{value:?}");
        assert!(
            challenge(&err).contains(r#"error="invalid_token""#),
            "{value:?}"
        );
    }
}

#[test]
fn an_expired_key_gets_the_same_answer_as_any_refused_key() {
    let token = signed(
        Algorithm::HS256,
        SECRET,
        &claims_expiring_at(unix_now() - 3600),
    );
    let err = authenticate_with(Some(&format!("Bearer {token}"))).unwrap_err();
    assert_eq!(err.message(), "invalid or expired API key");
    assert!(challenge(&err).contains(r#"error="invalid_token""#));
}

#[test]
fn two_authorization_headers_are_an_invalid_request_whatever_they_hold() {
    let valid = format!("Bearer {}", test_key(SECRET, "alice"));
    for second in [valid.as_str(), "Bearer not-a-key", "Basic dXNlcjpwYXNz"] {
        let req = TestRequest::get()
            .append_header((header::AUTHORIZATION, valid.as_str()))
            .append_header((header::AUTHORIZATION, second))
            .to_http_request();
        let err = authenticate_request(&req).unwrap_err();
        assert_eq!(err.status(), actix_web::http::StatusCode::UNAUTHORIZED);
        assert_eq!(
            challenge(&err),
            r#"Bearer realm="petstore", error="invalid_request""#,
            "{second}"
        );
    }
}

#[test]
fn keys_from_the_future_are_invalid_beyond_a_few_seconds() {
    let now = unix_now();
    let ten_years = 10 * 365 * 86_400;
    for claims in [
        serde_json::json!({"sub": "x", "jti": "1", "iat": now + ten_years}),
        serde_json::json!({"sub": "x", "jti": "2", "iat": now, "nbf": now + 3_600}),
        serde_json::json!({"sub": "x", "jti": "3", "iat": now + 60}),
    ] {
        let token = signed(Algorithm::HS256, SECRET, &claims);
        assert!(
            matches!(keys().verify(&token), Err(KeyError::Invalid(_))),
            "{claims}"
        );
    }
    for claims in [
        serde_json::json!({"sub": "x", "jti": "4", "iat": now + 3}),
        serde_json::json!({"sub": "x", "jti": "5", "iat": now - 60, "nbf": now - 1}),
    ] {
        let token = signed(Algorithm::HS256, SECRET, &claims);
        assert!(keys().verify(&token).is_ok(), "{claims}");
    }
}

#[test]
fn a_critical_header_extension_is_refused() {
    let mut header = Header::new(Algorithm::HS256);
    header.crit = Some(vec!["exp".to_owned()]);
    let claims = serde_json::json!({"sub": "x", "jti": "1", "iat": unix_now()});
    let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(SECRET)).unwrap();
    assert!(matches!(keys().verify(&token), Err(KeyError::Invalid(_))));
}
