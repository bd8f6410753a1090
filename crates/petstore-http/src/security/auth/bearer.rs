//! The request's `Authorization: Bearer <key>` header (RFC 6750): exactly one, of the bearer
//! scheme, with a token that passes [`ApiKeys::verify_token`]; and the key id a refused token
//! claimed, for the request's log line.

use actix_web::http::header;
use actix_web::{HttpMessage as _, HttpRequest};

use super::challenge::{invalid_token, malformed_request, unauthorized};
use super::token::VerifiedToken;
use super::token_check::{ApiKeys, KeyError};
use crate::error::ApiError;
use crate::observability::metrics::Refusal;

/// The key id a refused token claimed, kept in the request's extensions for its log line: 32
/// lowercase hex digits read from the unverified payload, nothing else, so a forger cannot
/// write into the log.
#[derive(Debug, Clone)]
pub(crate) struct PresentedKeyId(pub(crate) String);

impl PresentedKeyId {
    /// The `jti` of `token`'s payload, if it is a well-formed key id.
    pub(super) fn of(token: &str) -> Option<Self> {
        use base64::Engine as _;
        let payload = token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        Self::from_id(claims.get("jti")?.as_str()?)
    }

    /// `id`, if it is a well-formed key id.
    pub(super) fn from_id(id: &str) -> Option<Self> {
        let id = petstore_domain::KeyId::parse(id).ok()?;
        Some(Self(id.as_str().to_owned()))
    }
}

/// The claims of the request's bearer token, or the 401 for its absence or invalidity (with the
/// reason, for the metrics).
pub(super) fn verify_bearer(
    req: &HttpRequest,
    keys: &ApiKeys,
) -> Result<VerifiedToken, (Refusal, ApiError)> {
    // RFC 6750 3.1: more than one way of sending a token is a malformed request. Taking the
    // first header would let a valid key vouch for a request that also carries another.
    if req
        .headers()
        .get_all(header::AUTHORIZATION)
        .nth(1)
        .is_some()
    {
        return Err((
            Refusal::SeveralHeaders,
            malformed_request("send exactly one `Authorization: Bearer <key>` header"),
        ));
    }
    let missing = || {
        (
            Refusal::Missing,
            unauthorized("missing API key: send `Authorization: Bearer <key>`", false),
        )
    };
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(missing());
    };
    // Bytes that are not UTF-8 cannot be a JWT; the client did present something, so it is a
    // bad token. (Checked as UTF-8 rather than with `to_str`, which looks at the key's every
    // byte one by one; a key with other non-ASCII text fails its check all the same.)
    let Ok(value) = std::str::from_utf8(value.as_bytes()) else {
        return Err((Refusal::InvalidToken, invalid_token()));
    };
    let value = value.trim_ascii();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // RFC 6750 3.1: another scheme is no token at all, so no `error` attribute.
        return Err((
            Refusal::OtherScheme,
            unauthorized(
                "unsupported authorization scheme: send `Authorization: Bearer <key>`",
                false,
            ),
        ));
    }
    let token = token.trim_ascii();
    if token.is_empty() {
        return Err(missing());
    }
    keys.verify_token(token).map_err(|err| {
        tracing::debug!(reason = %err, "rejected an API key");
        if let Some(presented) = PresentedKeyId::of(token) {
            req.extensions_mut().insert(presented);
        }
        let refusal = match err {
            KeyError::Expired => Refusal::Expired,
            KeyError::Invalid(_) => Refusal::InvalidToken,
        };
        (refusal, invalid_token())
    })
}
