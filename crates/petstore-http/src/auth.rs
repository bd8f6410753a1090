//! API keys: JWTs the service signs itself (HS256) and checks on every `/v1` request.
//!
//! A key is self-contained (no key table): `sub` names the key, `jti` identifies it (so a later
//! revocation list has something to point at), `iat` says when it was issued and `exp`, when
//! present, when it stops working. The accepted algorithm is pinned to HS256 so a token cannot
//! choose how it is checked (`alg: none`, HS384 with the same secret, ... are all refused).

mod verified;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::header;
use actix_web::HttpRequest;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};
use verified::VerifiedKeys;

/// How far past its `exp` a key is still accepted: absorbs clock differences between the
/// machine that issued a key and the ones checking it (several instances, NTP drift).
pub const EXP_LEEWAY: Duration = Duration::from_secs(30);

/// How far in the future a key's `iat` or `nbf` may lie and still count: absorbs a few seconds
/// of clock difference between the machine that issued a key and the one checking it, and no
/// more (a key "issued" ten years from now is a forgery or a broken clock).
pub const NOT_BEFORE_LEEWAY: Duration = Duration::from_secs(5);

/// The one algorithm keys are signed and checked with.
pub const KEY_ALGORITHM: Algorithm = Algorithm::HS256;

/// The `realm` of the `WWW-Authenticate` challenge on every 401.
pub const REALM: &str = "petstore";

/// What a key says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyClaims {
    /// The key's name, as given to `issue`.
    pub sub: String,
    /// The key's unique id: 16 random bytes, hex.
    pub jti: String,
    /// Issued at, in seconds since the Unix epoch.
    pub iat: u64,
    /// Expires at, in seconds since the Unix epoch; `None` for a key that never expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp: Option<u64>,
    /// Not valid before, in seconds since the Unix epoch; keys this service issues have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key was valid but its `exp` (plus [`EXP_LEEWAY`]) has passed.
    #[error("API key expired")]
    Expired,
    /// Malformed, wrongly signed, another algorithm, missing claims... The reason is for logs.
    #[error("invalid API key: {0}")]
    Invalid(String),
}

/// Verifies API keys signed with one shared secret (the server's `keys issue` signs them).
/// Clones share what was verified.
#[derive(Clone)]
pub struct ApiKeys {
    decoding: DecodingKey,
    validation: Validation,
    verified: Arc<VerifiedKeys>,
}

impl fmt::Debug for ApiKeys {
    // Never print key material.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKeys")
            .field("algorithm", &KEY_ALGORITHM)
            .finish_non_exhaustive()
    }
}

impl ApiKeys {
    /// Checks keys signed with `secret` (HMAC-SHA-256). Whoever has the secret can mint keys, so
    /// it must be long and random in production (the server enforces that, not this type).
    pub fn new(secret: &[u8]) -> Self {
        let mut validation = Validation::new(KEY_ALGORITHM);
        // jsonwebtoken requires `exp` by default; keys without one are meant to never expire.
        validation.set_required_spec_claims(&["sub"]);
        validation.validate_exp = true;
        validation.leeway = EXP_LEEWAY.as_secs();
        Self {
            decoding: DecodingKey::from_secret(secret),
            validation,
            verified: Arc::default(),
        }
    }

    /// The claims of `token` when it was signed by this secret with HS256 and has not expired.
    pub fn verify(&self, token: &str) -> Result<KeyClaims, KeyError> {
        if let Some(claims) = self.verified.get(token, unix_now(), self.validation.leeway) {
            return Ok(claims);
        }
        // RFC 7515 4.1.11: a `crit` header lists extensions the recipient must understand or
        // refuse the token; this service understands none.
        let header =
            jsonwebtoken::decode_header(token).map_err(|err| KeyError::Invalid(err.to_string()))?;
        if header.crit.is_some() {
            return Err(KeyError::Invalid(
                "critical header extensions are not understood".into(),
            ));
        }
        let claims = jsonwebtoken::decode::<KeyClaims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|err| match err.kind() {
                ErrorKind::ExpiredSignature => KeyError::Expired,
                _ => KeyError::Invalid(err.to_string()),
            })?;
        let latest = unix_now().saturating_add(NOT_BEFORE_LEEWAY.as_secs());
        if claims.iat > latest {
            return Err(KeyError::Invalid("issued in the future".into()));
        }
        if claims.nbf.is_some_and(|nbf| nbf > latest) {
            return Err(KeyError::Invalid("not valid yet".into()));
        }
        self.verified.insert(token, &claims);
        Ok(claims)
    }
}

fn unix_now() -> u64 {
    // A clock before 1970 is a broken machine; 0 then makes every expiring key look fresh,
    // which is no worse than the clock itself.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Checks the request's `Authorization: Bearer <key>` header. Called first by every `/v1`
/// handler, so nothing about the request is looked at before the caller is known.
pub(crate) fn authenticate(req: &HttpRequest, keys: &ApiKeys) -> Result<KeyClaims, ApiError> {
    // RFC 6750 3.1: more than one way of sending a token is a malformed request. Taking the
    // first header would let a valid key vouch for a request that also carries another.
    if req
        .headers()
        .get_all(header::AUTHORIZATION)
        .nth(1)
        .is_some()
    {
        return Err(malformed_request(
            "send exactly one `Authorization: Bearer <key>` header",
        ));
    }
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(unauthorized(
            "missing API key: send `Authorization: Bearer <key>`",
            false,
        ));
    };
    // Non-ASCII bytes cannot be a JWT; the client did present something, so it is a bad token.
    let Ok(value) = value.to_str() else {
        return Err(unauthorized("invalid API key", true));
    };
    let value = value.trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // RFC 6750 3.1: another scheme is no token at all, so no `error` attribute.
        return Err(unauthorized(
            "unsupported authorization scheme: send `Authorization: Bearer <key>`",
            false,
        ));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(unauthorized(
            "missing API key: send `Authorization: Bearer <key>`",
            false,
        ));
    }
    keys.verify(token).map_err(|err| {
        tracing::debug!(reason = %err, "rejected an API key");
        match err {
            KeyError::Expired => unauthorized("API key expired", true),
            KeyError::Invalid(_) => unauthorized("invalid API key", true),
        }
    })
}

/// A 401 for a request that is not a well-formed bearer request (RFC 6750 3.1
/// `invalid_request`; the status stays 401 like every refused key here).
fn malformed_request(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, message).with_header(
        header::WWW_AUTHENTICATE,
        &format!("Bearer realm=\"{REALM}\", error=\"invalid_request\""),
    )
}

/// A 401 with the RFC 6750 challenge; `error="invalid_token"` only when a token was presented.
fn unauthorized(message: &str, token_presented: bool) -> ApiError {
    let challenge = if token_presented {
        format!("Bearer realm=\"{REALM}\", error=\"invalid_token\"")
    } else {
        format!("Bearer realm=\"{REALM}\"")
    };
    ApiError::new(ErrorCode::Unauthorized, message)
        .with_header(header::WWW_AUTHENTICATE, &challenge)
}

/// A key signed with `secret`, for this crate's tests (the server signs real ones).
#[cfg(test)]
pub(crate) fn test_key(secret: &[u8], name: &str) -> String {
    let claims = KeyClaims {
        sub: name.to_owned(),
        jti: "0123456789abcdef0123456789abcdef".to_owned(),
        iat: unix_now(),
        exp: None,
        nbf: None,
    };
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(KEY_ALGORITHM),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("HS256 signs anything")
}

#[cfg(test)]
mod tests;
