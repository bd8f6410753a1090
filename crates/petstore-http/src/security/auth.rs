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
//!
//! `token.rs` is the format the signer and the checker share; `token_check.rs` checks a token
//! (`verified.rs` remembers those checked); `bearer.rs` reads the `Authorization` header;
//! `verdict.rs` judges the key with the directory's answer and the operation's scope;
//! `challenge.rs` words the refusals.

mod bearer;
mod challenge;
#[cfg(test)]
mod test_keys;
mod token;
mod token_check;
mod verdict;
mod verified;

pub(crate) use bearer::PresentedKeyId;
pub(crate) use challenge::insufficient_scope;
pub use challenge::REALM;
#[cfg(test)]
pub(crate) use test_keys::{test_directory, test_key, TEST_KEY_ID};
pub use token::{key_id, sign, token_digest, KeyClaims, VerifiedToken, KEY_ALGORITHM};
pub use token_check::{ApiKeys, KeyError, EXP_LEEWAY, MAX_TOKEN_BYTES, NOT_BEFORE_LEEWAY};
pub(crate) use verdict::{authenticate, look_up, KeyCheck, Verdict};

#[cfg(test)]
mod tests;
