//! The API key's token format, the one the signer (`petstore keys issue`) and the checker share:
//! an HS256 JWT whose header's `kid` names the secret that signed it and whose claims name the
//! key; the registry keeps the SHA-256 of the token issued for each key.

use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use petstore_domain::TokenDigest;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The one algorithm keys are signed and checked with.
pub const KEY_ALGORITHM: Algorithm = Algorithm::HS256;

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

/// A token that passed [`ApiKeys::verify_token`](super::ApiKeys::verify_token): its claims, and its digest for the registry's
/// check that it is the token issued for its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub claims: KeyClaims,
    pub digest: TokenDigest,
}

/// The token of `claims`, signed with `secret` and naming it in its `kid`.
pub fn sign(claims: &KeyClaims, secret: &[u8]) -> Result<String, jsonwebtoken::errors::Error> {
    let mut header = Header::new(KEY_ALGORITHM);
    header.kid = Some(key_id(secret));
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret))
}
