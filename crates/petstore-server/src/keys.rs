//! API keys, issued: a JWT signed with the current key secret (HS256, its `kid` in the header),
//! recorded in the key registry with the SHA-256 of the token (which binds the key to that one
//! token) before it is handed out. `petstore_http::ApiKeys` checks the
//! token and `petstore_application::KeyDirectory` the registry on every request.
//!
//! Claims: `sub` names the key, `jti` is its registry id (16 random bytes, hex), `iat` says
//! when it was issued and `exp` when it stops working (keys expire after 90 days unless issued
//! with `never`).

mod commands;
mod refresher;

pub use commands::{issue, list, print_secret, revoke};
pub use refresher::{spawn_refresher, Refresher};

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use petstore_application::{KeyDirectory, RepositoryError};
use petstore_domain::{ApiKey, KeyId, KeyName, KeyNameError, KeyScope};
use petstore_http::security::auth::{self, token_digest};
use petstore_http::KeyClaims;
use secrecy::{ExposeSecret as _, SecretSlice};

/// Why a key could not be issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("--name {0}")]
    Name(#[from] KeyNameError),
    #[error("--expires-in may be at most {}d (ten years); issue the key with `--expires-in never` for one that does not expire", MAX_TTL.as_secs() / 86_400)]
    ExpiryTooFar,
    #[error("--expires-in must be at least {}s: a shorter key would outlive it by the {}s of clock leeway every check allows", MIN_TTL.as_secs(), petstore_http::EXP_LEEWAY.as_secs())]
    TooShort,
    #[error("no randomness for the key id: {0}")]
    Random(String),
    #[error("signing the key failed: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
    #[error("the key registry could not record the key: {0}")]
    Registry(#[source] RepositoryError),
}

/// Shortest lifetime a key may be issued with.
pub const MIN_TTL: Duration = Duration::from_secs(60);

/// Longest lifetime a key may be issued with (`never` aside): ten years. A longer one is a typo
/// more often than a plan, and every date it leads to stays printable.
pub const MAX_TTL: Duration = Duration::from_secs(3_650 * 86_400);

/// Refuses a lifetime shorter than [`MIN_TTL`] or longer than [`MAX_TTL`].
pub fn check_lifetime(lifetime: Option<Duration>) -> Result<(), IssueError> {
    match lifetime {
        Some(lifetime) if lifetime < MIN_TTL => Err(IssueError::TooShort),
        Some(lifetime) if lifetime > MAX_TTL => Err(IssueError::ExpiryTooFar),
        _ => Ok(()),
    }
}

/// Issues keys: records them in the registry (through the directory, which then knows them at
/// once) and signs them with the current secret. Cheap to clone.
#[derive(Clone)]
pub struct KeyIssuer {
    directory: KeyDirectory,
    secret: Arc<SecretSlice<u8>>,
}

impl std::fmt::Debug for KeyIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIssuer").finish_non_exhaustive()
    }
}

/// A key just issued: its registry record and the token to hand to its holder.
#[derive(Debug)]
pub struct IssuedKey {
    pub key: ApiKey,
    pub token: String,
}

impl KeyIssuer {
    pub fn new(directory: KeyDirectory, secret: Arc<SecretSlice<u8>>) -> Self {
        Self { directory, secret }
    }

    /// A new key for `name` with `scope`, working for `lifetime` (for ever when `None`).
    pub fn issue(
        &self,
        name: &str,
        scope: KeyScope,
        lifetime: Option<Duration>,
    ) -> Result<IssuedKey, IssueError> {
        let name = KeyName::parse(name)?;
        check_lifetime(lifetime)?;
        let id = crate::random::random_hex(16)
            .map_err(|err| IssueError::Random(err.to_string()))
            .and_then(|hex| {
                KeyId::parse(&hex).map_err(|err| IssueError::Random(err.to_string()))
            })?;
        let draft = self.directory.draft(id, name, scope, lifetime);
        let token = sign(self.secret.expose_secret(), &draft)?;
        let key = ApiKey {
            token_digest: Some(token_digest(&token)),
            ..draft
        };
        self.directory.record(&key).map_err(IssueError::Registry)?;
        Ok(IssuedKey { key, token })
    }
}

/// The token of `key`, signed with `secret`.
fn sign(secret: &[u8], key: &ApiKey) -> Result<String, IssueError> {
    let to_u64 = |seconds: i64| u64::try_from(seconds).map_err(|_| IssueError::ExpiryTooFar);
    let claims = KeyClaims {
        sub: key.name.as_str().to_owned(),
        jti: key.id.as_str().to_owned(),
        iat: to_u64(key.created_at)?,
        exp: key.expires_at.map(to_u64).transpose()?,
        nbf: None,
    };
    Ok(auth::sign(&claims, secret)?)
}

/// Seconds since the Unix epoch, now (0 on a clock before 1970, a broken machine anyway).
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use petstore_application::SystemClock;
    use petstore_http::security::auth::key_id;
    use petstore_http::ApiKeys;
    use petstore_persistence::InMemoryKeyRegistry;

    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn issuer() -> KeyIssuer {
        let directory =
            KeyDirectory::load(Arc::new(InMemoryKeyRegistry::new()), Arc::new(SystemClock))
                .expect("load");
        KeyIssuer::new(directory, Arc::new(SecretSlice::from(SECRET.to_vec())))
    }

    fn payload(token: &str) -> serde_json::Value {
        let payload = token.split('.').nth(1).expect("three parts");
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("JSON")
    }

    #[test]
    fn a_lifetime_beyond_ten_years_is_refused_and_never_is_not() {
        assert!(check_lifetime(Some(MAX_TTL)).is_ok());
        assert!(check_lifetime(None).is_ok());
        let err = check_lifetime(Some(Duration::from_secs(2_930_000 * 86_400))).unwrap_err();
        assert!(matches!(err, IssueError::ExpiryTooFar));
        assert!(err.to_string().contains("at most 3650d"), "{err}");
        assert!(matches!(
            check_lifetime(Some(Duration::from_secs(30))),
            Err(IssueError::TooShort)
        ));
    }

    #[test]
    fn an_issued_key_is_recorded_and_its_token_carries_its_id_and_kid() {
        let issuer = issuer();
        let issued = issuer
            .issue(
                " alice ",
                KeyScope::Read,
                Some(Duration::from_secs(90 * 86_400)),
            )
            .expect("issue");
        let claims = ApiKeys::new(SECRET, &[])
            .verify(&issued.token)
            .expect("verify");
        assert_eq!(claims.sub, "alice");
        assert_eq!(claims.jti, issued.key.id.as_str());
        assert!(claims.iat.abs_diff(u64::try_from(unix_now()).unwrap()) <= 5);
        assert_eq!(claims.exp, Some(claims.iat + 90 * 86_400));
        let header = jsonwebtoken::decode_header(&issued.token).expect("header");
        assert_eq!(header.kid, Some(key_id(SECRET)));
        let digest = token_digest(&issued.token);
        assert_eq!(issued.key.token_digest, Some(digest), "bound to its token");
        assert_eq!(
            issuer.directory.check(&claims.jti, &digest),
            Ok(KeyScope::Read)
        );
        assert_eq!(issuer.directory.list().expect("list"), vec![issued.key]);
    }

    #[test]
    fn a_key_issued_for_ever_has_no_exp_claim() {
        let issued = issuer()
            .issue("forever", KeyScope::Write, None)
            .expect("issue");
        assert!(payload(&issued.token).get("exp").is_none());
        assert_eq!(issued.key.expires_at, None);
    }

    #[test]
    fn each_key_gets_its_own_id() {
        let issuer = issuer();
        let a = issuer.issue("a", KeyScope::Read, None).expect("issue");
        let b = issuer.issue("a", KeyScope::Read, None).expect("issue");
        assert_ne!(a.key.id, b.key.id);
    }

    #[test]
    fn a_lifetime_under_a_minute_a_bad_name_or_an_endless_ttl_is_refused() {
        let issuer = issuer();
        let refused = |name: &str, ttl: Option<Duration>| issuer.issue(name, KeyScope::Read, ttl);
        assert!(matches!(
            refused("x", Some(Duration::from_secs(59))),
            Err(IssueError::TooShort)
        ));
        assert!(refused("x", Some(MIN_TTL)).is_ok());
        assert!(matches!(refused("  ", None), Err(IssueError::Name(_))));
        assert!(matches!(refused("a\nb", None), Err(IssueError::Name(_))));
        assert!(matches!(
            refused("x", Some(Duration::from_secs(u64::MAX))),
            Err(IssueError::ExpiryTooFar)
        ));
        assert_eq!(
            issuer.directory.list().expect("list").len(),
            1,
            "only the valid one"
        );
    }
}
