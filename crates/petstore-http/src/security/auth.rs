//! API keys: JWTs the service signs itself (HS256) and checks on every `/v1` request.
//!
//! A key is checked twice. First the token itself ([`ApiKeys::verify`]): its header's `kid`
//! names the secret it was signed with (the current one or a previous one still honoured during
//! a rotation), the signature must match with HS256 exactly (`alg: none`, HS384 with the same
//! secret, ... are all refused) and `exp`, `iat` and `nbf` must hold. Then its `jti` in the key
//! directory (`petstore_application::KeyDirectory`): the registry must have issued it, not
//! revoked it, and its scope must allow the operation. The registry also keeps the SHA-256 of
//! the token it issued for the key ([`token_digest`]): whoever holds the signing secret still
//! cannot mint a second token for a recorded key with claims of their own. Every refusal is the
//! same 401 `invalid_token` to the client; the reason goes to the debug log.

mod verified;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::header;
use actix_web::{HttpMessage as _, HttpRequest};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};

use hmac::{Hmac, Mac};
use petstore_application::{KeyDirectory, KeyRefusal, LookupError};
use petstore_domain::{KeyScope, TokenDigest};
use sha2::{Digest as _, Sha256};

use crate::error::{ApiError, ErrorCode};
use crate::observability::metrics::{self, Refusal};
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

/// Longest `Authorization` token looked at: the keys this service issues are about 300 bytes;
/// anything far longer is refused before it is decoded.
pub const MAX_TOKEN_BYTES: usize = 2048;

/// What the `kid` of a secret is derived for (domain separation from signatures and cursors).
const KID_LABEL: &[u8] = b"petstore/api-key/kid/v1";

/// The `kid` header of keys signed with `secret`: the first 8 bytes of an HMAC-SHA-256 keyed
/// with the secret over a fixed label, as hex. It names the secret without revealing it.
pub fn key_id(secret: &[u8]) -> String {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(KID_LABEL);
    hex::encode(&mac.finalize().into_bytes()[..8])
}

/// The digest the key registry keeps of a key's token: SHA-256 of its compact text.
pub fn token_digest(token: &str) -> TokenDigest {
    TokenDigest(Sha256::digest(token.as_bytes()).into())
}

/// A token that passed [`ApiKeys::verify_token`]: its claims, and its digest for the registry's
/// check that it is the token issued for its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub claims: KeyClaims,
    pub digest: TokenDigest,
}

/// The key id a refused token claimed, kept in the request's extensions for its log line: 32
/// lowercase hex digits read from the unverified payload, nothing else, so a forger cannot
/// write into the log.
#[derive(Debug, Clone)]
pub(crate) struct PresentedKeyId(pub(crate) String);

impl PresentedKeyId {
    /// The `jti` of `token`'s payload, if it is a well-formed key id.
    fn of(token: &str) -> Option<Self> {
        use base64::Engine as _;
        let payload = token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        Self::from_id(claims.get("jti")?.as_str()?)
    }

    /// `id`, if it is a well-formed key id.
    fn from_id(id: &str) -> Option<Self> {
        let id = petstore_domain::KeyId::parse(id).ok()?;
        Some(Self(id.as_str().to_owned()))
    }
}

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

/// Verifies API keys signed with the current secret or a previous one (the server's
/// `keys issue` signs them). Clones share what was verified.
#[derive(Clone)]
pub struct ApiKeys {
    /// `(kid, key)` of the current secret, then of each previous one.
    decoding: Vec<(String, DecodingKey)>,
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
    /// Checks keys signed with `secret` or one of `previous` (HMAC-SHA-256). Whoever has a secret
    /// can mint keys, so each must be long and random in production (the server enforces that,
    /// not this type); the key registry refuses keys it never issued all the same.
    pub fn new(secret: &[u8], previous: &[&[u8]]) -> Self {
        let mut validation = Validation::new(KEY_ALGORITHM);
        // jsonwebtoken requires `exp` by default; keys without one are meant to never expire.
        validation.set_required_spec_claims(&["sub"]);
        validation.validate_exp = true;
        validation.leeway = EXP_LEEWAY.as_secs();
        let decoding = std::iter::once(secret)
            .chain(previous.iter().copied())
            .map(|secret| (key_id(secret), DecodingKey::from_secret(secret)))
            .collect();
        Self {
            decoding,
            validation,
            verified: Arc::default(),
        }
    }

    /// The claims of `token` when it names a known secret in its `kid`, was signed by it with
    /// HS256 and has not expired.
    pub fn verify(&self, token: &str) -> Result<KeyClaims, KeyError> {
        self.verify_token(token).map(|verified| verified.claims)
    }

    /// [`verify`](Self::verify), with the token's digest. A token verified before costs a
    /// cache lookup: its signature and its digest are computed once.
    pub fn verify_token(&self, token: &str) -> Result<VerifiedToken, KeyError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(KeyError::Invalid(format!(
                "{} bytes long, more than any key",
                token.len()
            )));
        }
        if let Some(verified) = self.verified.get(token, unix_now(), self.validation.leeway) {
            return Ok(verified);
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
        let kid = header
            .kid
            .ok_or_else(|| KeyError::Invalid("no `kid` header".into()))?;
        let (_, decoding) = self
            .decoding
            .iter()
            .find(|(known, _)| *known == kid)
            .ok_or_else(|| KeyError::Invalid(format!("unknown `kid` {kid:?}")))?;
        let claims = jsonwebtoken::decode::<KeyClaims>(token, decoding, &self.validation)
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
        let verified = VerifiedToken {
            claims,
            digest: token_digest(token),
        };
        self.verified.insert(token, &verified);
        Ok(verified)
    }
}

fn unix_now() -> u64 {
    // A clock before 1970 is a broken machine; 0 then makes every expiring key look fresh,
    // which is no worse than the clock itself.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What the key directory's answer makes of a usable, correctly signed key.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// The key may do what was asked; its scope, which may allow more, says what else.
    Accepted(KeyClaims, KeyScope),
    /// A usable key whose scope does not cover the operation: the 403 to answer, once the
    /// refusal has been taken from the key's rate bucket (probing scopes is not free).
    OutOfScope(KeyClaims, KeyScope, ApiError),
}

/// What [`authenticate`] found.
#[derive(Debug)]
pub(crate) enum KeyCheck {
    /// The directory knew the key.
    Judged(Verdict),
    /// Correctly signed, but its key is not in this instance's directory: issued a moment ago
    /// by another process, or never. [`look_up`] says which.
    NotKnownHere(VerifiedToken),
}

/// Checks the request's `Authorization: Bearer <key>` header, then that the directory knows the
/// key as usable and that its scope allows `needed`. Called first by every `/v1` handler, so
/// nothing about the request is looked at before the caller is known. Costs no I/O: a key the
/// directory does not know comes back as [`KeyCheck::NotKnownHere`] for [`look_up`].
pub(crate) fn authenticate(
    req: &HttpRequest,
    keys: &ApiKeys,
    directory: &KeyDirectory,
    needed: KeyScope,
) -> Result<KeyCheck, ApiError> {
    let verified = verify_bearer(req, keys).map_err(|(refusal, error)| {
        metrics::key_refused(refusal);
        error
    })?;
    match directory.check(&verified.claims.jti, &verified.digest) {
        Err(KeyRefusal::Unknown) if directory.worth_looking_up(&verified.claims.jti) => {
            Ok(KeyCheck::NotKnownHere(verified))
        }
        Err(refusal) => {
            // A refused key's id goes on the request's log line (only then: no cost otherwise).
            if let Some(presented) = PresentedKeyId::from_id(&verified.claims.jti) {
                req.extensions_mut().insert(presented);
            }
            judge(verified.claims, Err(refusal), needed).map(KeyCheck::Judged)
        }
        answer => judge(verified.claims, answer, needed).map(KeyCheck::Judged),
    }
}

/// Looks up in the registry a correctly signed key the directory did not know, on a thread that
/// may block, and judges it like [`authenticate`]. A registry that cannot be read is a 503: the
/// key may well be valid.
pub(crate) async fn look_up(
    verified: VerifiedToken,
    directory: KeyDirectory,
    needed: KeyScope,
) -> Result<Verdict, ApiError> {
    let VerifiedToken { claims, digest } = verified;
    let id = claims.jti.clone();
    // In the request's span, so what the registry logs belongs to the request.
    let span = tracing::Span::current();
    let answer = actix_web::web::block(move || span.in_scope(|| directory.look_up(&id, &digest)))
        .await
        .map_err(|blocking| ApiError::internal("the key lookup did not run", &blocking))?;
    let answer = match answer {
        Ok(scope) => {
            metrics::key_looked_up("found");
            Ok(scope)
        }
        Err(LookupError::Refused(refusal)) => {
            if refusal == KeyRefusal::Unknown {
                metrics::key_looked_up("unknown");
            } else {
                metrics::key_looked_up("found");
            }
            Err(refusal)
        }
        Err(LookupError::Repository(error)) => {
            metrics::key_looked_up("failed");
            return Err(error.into());
        }
    };
    judge(claims, answer, needed)
}

/// Accepted (with the key's whole scope) when the directory's `answer` about the key lets it
/// do `needed`; out of scope (the 403 to answer) or the 401 of a refused key otherwise, counted.
fn judge(
    claims: KeyClaims,
    answer: Result<KeyScope, KeyRefusal>,
    needed: KeyScope,
) -> Result<Verdict, ApiError> {
    let scope = answer.map_err(|refusal| {
        tracing::debug!(key = %claims.jti, reason = %refusal, "rejected an API key");
        metrics::key_refused(match refusal {
            KeyRefusal::Unknown => Refusal::Unknown,
            KeyRefusal::Revoked => Refusal::Revoked,
            KeyRefusal::Expired => Refusal::Expired,
            KeyRefusal::NotIssued => Refusal::NotIssued,
        });
        invalid_token()
    })?;
    if !scope.allows(needed) {
        metrics::key_refused(Refusal::Scope);
        return Ok(Verdict::OutOfScope(
            claims,
            scope,
            insufficient_scope(needed),
        ));
    }
    Ok(Verdict::Accepted(claims, scope))
}

/// The claims of the request's bearer token, or the 401 for its absence or invalidity (with the
/// reason, for the metrics).
fn verify_bearer(req: &HttpRequest, keys: &ApiKeys) -> Result<VerifiedToken, (Refusal, ApiError)> {
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
    // Non-ASCII bytes cannot be a JWT; the client did present something, so it is a bad token.
    let Ok(value) = value.to_str() else {
        return Err((Refusal::InvalidToken, invalid_token()));
    };
    let value = value.trim();
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
    let token = token.trim();
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

/// The one answer to every presented key that is refused, whatever check it failed (malformed,
/// forged, expired, revoked, never issued): telling them apart would help only an attacker.
fn invalid_token() -> ApiError {
    unauthorized("invalid or expired API key", true)
}

/// A 403 for a valid key whose scope does not cover the operation (RFC 6750 3.1
/// `insufficient_scope`, naming the scope needed).
pub(crate) fn insufficient_scope(needed: KeyScope) -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        format!("this API key may not do this: it needs the `{needed}` scope"),
    )
    .with_header(
        header::WWW_AUTHENTICATE,
        &format!("Bearer realm=\"{REALM}\", error=\"insufficient_scope\", scope=\"{needed}\""),
    )
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

/// The `jti` of [`test_key`]s.
#[cfg(test)]
pub(crate) const TEST_KEY_ID: &str = "0123456789abcdef0123456789abcdef";

/// A key signed with `secret`, for this crate's tests (the server signs real ones).
#[cfg(test)]
pub(crate) fn test_key(secret: &[u8], name: &str) -> String {
    let claims = KeyClaims {
        sub: name.to_owned(),
        jti: TEST_KEY_ID.to_owned(),
        iat: unix_now(),
        exp: None,
        nbf: None,
    };
    let mut header = jsonwebtoken::Header::new(KEY_ALGORITHM);
    header.kid = Some(key_id(secret));
    jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("HS256 signs anything")
}

/// A key directory that knows the [`test_key`]s, with `scope`, for this crate's tests.
#[cfg(test)]
pub(crate) fn test_directory(scope: KeyScope) -> KeyDirectory {
    use petstore_application::{KeyChanges, MockKeyRegistry, SystemClock};
    use petstore_domain::{ApiKey, KeyId, KeyName};

    let key = ApiKey {
        id: KeyId::parse(TEST_KEY_ID).expect("a key id"),
        name: KeyName::parse("tests").expect("a name"),
        scope,
        // Unbound: every test key with its id passes, whatever its claims.
        token_digest: None,
        created_at: 0,
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
    };
    let mut registry = MockKeyRegistry::new();
    registry.expect_changes_since().returning(move |_| {
        Ok(KeyChanges {
            keys: vec![key.clone()],
            revision: 1,
        })
    });
    KeyDirectory::load(Arc::new(registry), Arc::new(SystemClock)).expect("load the keys")
}

#[cfg(test)]
mod tests;
