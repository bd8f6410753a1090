//! Checking a token: the signature of a secret still honoured, the algorithm, the times; each
//! token verified once and then remembered (`verified.rs`).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{DecodingKey, Validation};

use super::token::{key_id, token_digest, KeyClaims, VerifiedToken, KEY_ALGORITHM};
use super::verified::VerifiedKeys;

/// How far past its `exp` a key is still accepted: absorbs clock differences between the
/// machine that issued a key and the ones checking it (several instances, NTP drift).
pub const EXP_LEEWAY: Duration = Duration::from_secs(30);

/// How far in the future a key's `iat` or `nbf` may lie and still count: absorbs a few seconds
/// of clock difference between the machine that issued a key and the one checking it, and no
/// more (a key "issued" ten years from now is a forgery or a broken clock).
pub const NOT_BEFORE_LEEWAY: Duration = Duration::from_secs(5);

/// Longest `Authorization` token looked at: the keys this service issues are about 300 bytes;
/// anything far longer is refused before it is decoded.
pub const MAX_TOKEN_BYTES: usize = 2048;

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

pub(super) fn unix_now() -> u64 {
    // A clock before 1970 is a broken machine; 0 then makes every expiring key look fresh,
    // which is no worse than the clock itself.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
