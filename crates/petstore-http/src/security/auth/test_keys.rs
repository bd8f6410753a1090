//! Keys and a key directory for this crate's tests (the server signs real keys).

use std::sync::Arc;

use petstore_application::KeyDirectory;
use petstore_domain::KeyScope;

use super::token::{sign, KeyClaims};
use super::token_check::unix_now;

/// The `jti` of [`test_key`]s.
pub(crate) const TEST_KEY_ID: &str = "0123456789abcdef0123456789abcdef";

/// A key signed with `secret`, for this crate's tests (the server signs real ones).
pub(crate) fn test_key(secret: &[u8], name: &str) -> String {
    let claims = KeyClaims {
        sub: name.to_owned(),
        jti: TEST_KEY_ID.to_owned(),
        iat: unix_now(),
        exp: None,
        nbf: None,
    };
    sign(&claims, secret).expect("HS256 signs anything")
}

/// A key directory that knows the [`test_key`]s, with `scope`, for this crate's tests.
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
