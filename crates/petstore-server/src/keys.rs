//! API keys: `petstore keys issue` signs a new one and prints it, and nothing else, on stdout.
//!
//! A key is a JWT signed with the key secret (HS256; `petstore_http::ApiKeys` checks it on every
//! request): `sub` names the key, `jti` identifies it (16 random bytes, hex), `iat` says when it
//! was issued and `exp`, when present, when it stops working.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{EncodingKey, Header};
use petstore_http::auth::KEY_ALGORITHM;
use petstore_http::KeyClaims;
use secrecy::ExposeSecret as _;

use crate::cli::IssueKeyArgs;
use crate::{key_secret, AppError};

/// Why a key could not be issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("--name must not be blank")]
    BlankName,
    #[error("the expiry is too far in the future")]
    ExpiryTooFar,
    #[error("--expires-in must be at least {}s: a shorter key would outlive it by the {}s of clock leeway every check allows", MIN_TTL.as_secs(), petstore_http::EXP_LEEWAY.as_secs())]
    TooShort,
    #[error("no randomness for the key id: {0}")]
    Random(String),
    #[error("signing the key failed: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
}

/// Shortest lifetime a key may be issued with.
pub const MIN_TTL: Duration = Duration::from_secs(60);

/// A new key for `name`, signed with `secret`, expiring `ttl` from now (never when `None`).
pub fn sign(secret: &[u8], name: &str, ttl: Option<Duration>) -> Result<String, IssueError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(IssueError::BlankName);
    }
    if ttl.is_some_and(|ttl| ttl < MIN_TTL) {
        return Err(IssueError::TooShort);
    }
    // A clock before 1970 is a broken machine; 0 is no worse than the clock itself.
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let exp = ttl
        .map(|ttl| {
            iat.checked_add(ttl.as_secs())
                .ok_or(IssueError::ExpiryTooFar)
        })
        .transpose()?;
    let claims = KeyClaims {
        sub: name.to_owned(),
        jti: crate::random::random_hex(16).map_err(|err| IssueError::Random(err.to_string()))?,
        iat,
        exp,
        nbf: None,
    };
    Ok(jsonwebtoken::encode(
        &Header::new(KEY_ALGORITHM),
        &claims,
        &EncodingKey::from_secret(secret),
    )?)
}

/// A new API key as `args` ask for it, signed with the configured secret.
pub fn issue_key(args: &IssueKeyArgs) -> Result<String, AppError> {
    let secret = key_secret::resolve(&args.keys, &args.data_dir)?;
    Ok(sign(secret.expose_secret(), &args.name, args.expires_in)?)
}

pub fn issue(args: IssueKeyArgs) -> Result<(), AppError> {
    let key = issue_key(&args)?;
    println!("{key}");
    let name = args.name.trim();
    match args.expires_in {
        Some(ttl) => eprintln!(
            "issued an API key for `{name}`, valid for {}s",
            ttl.as_secs()
        ),
        None => eprintln!("issued an API key for `{name}` that does not expire"),
    }
    Ok(())
}

/// `petstore keys secret`: a new key secret, 32 random bytes as 64 hex digits, alone on stdout.
pub fn print_secret() -> Result<(), AppError> {
    let secret = crate::random::random_hex(key_secret::MIN_PRODUCTION_SECRET_BYTES)
        .map_err(|err| key_secret::KeySecretError::Random(err.to_string()))?;
    println!("{secret}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use petstore_http::ApiKeys;

    use super::*;

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    #[test]
    fn a_signed_key_verifies_with_its_claims() {
        let claims = ApiKeys::new(SECRET)
            .verify(&sign(SECRET, "alice", None).expect("sign"))
            .expect("verify");
        assert_eq!(claims.sub, "alice");
        assert_eq!(claims.jti.len(), 32);
        assert!(claims.jti.chars().all(|c| c.is_ascii_hexdigit()));
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_secs();
        assert!(claims.iat.abs_diff(now) <= 5);
        assert_eq!(claims.exp, None);
    }

    #[test]
    fn a_key_without_ttl_has_no_exp_claim() {
        let token = sign(SECRET, "forever", None).expect("sign");
        let payload = token.split('.').nth(1).expect("three parts");
        let json: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url"))
                .expect("JSON");
        assert!(json.get("exp").is_none(), "{json}");
    }

    #[test]
    fn ttl_sets_exp_after_iat() {
        let token = sign(SECRET, "ci", Some(Duration::from_secs(90 * 86_400))).expect("sign");
        let claims = ApiKeys::new(SECRET).verify(&token).expect("verify");
        assert_eq!(claims.exp, Some(claims.iat + 90 * 86_400));
    }

    #[test]
    fn each_key_gets_its_own_id() {
        let keys = ApiKeys::new(SECRET);
        let a = keys
            .verify(&sign(SECRET, "a", None).expect("sign"))
            .expect("verify");
        let b = keys
            .verify(&sign(SECRET, "a", None).expect("sign"))
            .expect("verify");
        assert_ne!(a.jti, b.jti);
    }

    #[test]
    fn a_lifetime_under_a_minute_is_refused() {
        assert!(matches!(
            sign(SECRET, "x", Some(Duration::from_secs(59))),
            Err(IssueError::TooShort)
        ));
        assert!(sign(SECRET, "x", Some(MIN_TTL)).is_ok());
    }

    #[test]
    fn a_blank_name_or_an_endless_ttl_is_refused() {
        assert!(matches!(
            sign(SECRET, "  ", None),
            Err(IssueError::BlankName)
        ));
        assert!(matches!(
            sign(SECRET, "x", Some(Duration::from_secs(u64::MAX))),
            Err(IssueError::ExpiryTooFar)
        ));
    }
}
