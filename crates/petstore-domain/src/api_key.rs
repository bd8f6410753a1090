//! API keys as the store's registry knows them: who holds one (`KeyName`), what it may do
//! (`KeyScope`), and whether it works at a given instant (`ApiKey::state_at`). The signed token a
//! client presents is the HTTP adapter's business; here a key is its registry record.

use std::fmt;
use std::str::FromStr;

use crate::human_name::{self, HumanNameError};

/// A key's id: the token's `jti`, 16 random bytes as 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a key id is {len} lowercase hex digits", len = KeyId::LEN)]
pub struct KeyIdError;

impl KeyId {
    pub const LEN: usize = 32;

    pub fn parse(text: &str) -> Result<Self, KeyIdError> {
        let valid = text.len() == Self::LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if valid {
            Ok(Self(text.to_owned()))
        } else {
            Err(KeyIdError)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who a key was issued to: 1 to 100 characters after trimming, following the rule for every
/// human-entered name ([`crate::human_name`]): it is printed in tables and logs, where an
/// invisible or reordering character would make one key's holder look like another's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyNameError {
    #[error("must not be blank")]
    Blank,
    #[error("must be at most {max} characters", max = KeyName::MAX_CHARS)]
    TooLong,
    #[error(transparent)]
    Characters(#[from] HumanNameError),
    /// Only from [`KeyName::parse_stored`].
    #[error("must not contain control characters")]
    ControlCharacter,
}

impl KeyName {
    pub const MAX_CHARS: usize = 100;

    pub fn parse(text: &str) -> Result<Self, KeyNameError> {
        let name = Self::trimmed(text)?;
        human_name::check(name)?;
        Ok(Self(name.to_owned()))
    }

    /// A name read back from the registry, for the adapters only: keys issued under the older
    /// rule (no control characters) keep being listed and keep working; what that rule refused
    /// is still refused, so a row changed behind the service's back is noticed.
    pub fn parse_stored(text: &str) -> Result<Self, KeyNameError> {
        let name = Self::trimmed(text)?;
        if name.chars().any(char::is_control) {
            return Err(KeyNameError::ControlCharacter);
        }
        Ok(Self(name.to_owned()))
    }

    fn trimmed(text: &str) -> Result<&str, KeyNameError> {
        let name = text.trim();
        if name.is_empty() {
            return Err(KeyNameError::Blank);
        }
        if name.chars().count() > Self::MAX_CHARS {
            return Err(KeyNameError::TooLong);
        }
        Ok(name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a key may do. The scopes are ordered, each including everything the ones before it
/// may: `Read` < `Write` < `Store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyScope {
    /// List and get pets; list and get the key's own orders.
    Read,
    /// Read, create pets, place orders and cancel the key's own.
    Write,
    /// The store's staff: write, and see, approve, deliver and cancel every order.
    Store,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a scope is `read`, `write` or `store`")]
pub struct KeyScopeError;

impl KeyScope {
    /// Every scope, from the least to the most a key may do.
    pub const ALL: [KeyScope; 3] = [Self::Read, Self::Write, Self::Store];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Store => "store",
        }
    }

    /// Where the scope stands in the order `Read` < `Write` < `Store`.
    const fn rank(self) -> u8 {
        match self {
            Self::Read => 0,
            Self::Write => 1,
            Self::Store => 2,
        }
    }

    /// Whether a key of this scope may do what needs `needed`.
    pub const fn allows(self, needed: KeyScope) -> bool {
        self.rank() >= needed.rank()
    }
}

impl FromStr for KeyScope {
    type Err = KeyScopeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == text)
            .ok_or(KeyScopeError)
    }
}

impl fmt::Display for KeyScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The SHA-256 digest of the one token issued for a key (its compact JWS text). The registry
/// keeps the digest, never the token: whoever reads the database cannot use a key, and whoever
/// holds the signing secret cannot mint a second token for a recorded key with other claims.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenDigest(pub [u8; 32]);

impl fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenDigest(")?;
        for byte in &self.0[..4] {
            write!(f, "{byte:02x}")?;
        }
        write!(f, "...)")
    }
}

/// A key's registry record. Times are whole seconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: KeyId,
    pub name: KeyName,
    pub scope: KeyScope,
    /// The digest of the key's token; `None` for a key issued before tokens were bound, which
    /// any correctly signed token with its id still passes for (`petstore keys list` marks it
    /// `unbound`; docs/api.md says how to rotate it).
    pub token_digest: Option<TokenDigest>,
    pub created_at: i64,
    /// `None`: never expires (only when asked for explicitly).
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Coarse: recorded at most once a minute.
    pub last_used_at: Option<i64>,
}

/// Whether a key works at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    Active,
    Expired,
    Revoked,
}

impl ApiKey {
    /// Whether a token whose digest is `presented` is this key's token: the one issued for it,
    /// or any, for a key recorded before tokens were bound.
    pub fn issued_as(&self, presented: &TokenDigest) -> bool {
        self.token_digest.is_none_or(|digest| digest == *presented)
    }

    /// The key's state at `now`. Revocation wins over expiry: it is what an operator did.
    pub fn state_at(&self, now: i64) -> KeyState {
        if self.revoked_at.is_some() {
            KeyState::Revoked
        } else if self.expires_at.is_some_and(|expires| now >= expires) {
            KeyState::Expired
        } else {
            KeyState::Active
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(expires_at: Option<i64>, revoked_at: Option<i64>) -> ApiKey {
        ApiKey {
            id: KeyId::parse(&"a".repeat(32)).unwrap(),
            name: KeyName::parse("ops").unwrap(),
            scope: KeyScope::Read,
            token_digest: None,
            created_at: 100,
            expires_at,
            revoked_at,
            last_used_at: None,
        }
    }

    #[test]
    fn key_ids_are_32_lowercase_hex_digits() {
        assert!(KeyId::parse("0123456789abcdef0123456789abcdef").is_ok());
        for bad in [
            "",
            "0123",
            &"A".repeat(32),
            &"g".repeat(32),
            &"a".repeat(33),
        ] {
            assert_eq!(KeyId::parse(bad), Err(KeyIdError), "{bad:?}");
        }
    }

    #[test]
    fn key_names_are_trimmed_bounded_and_printable() {
        assert_eq!(
            KeyName::parse("  partner a ").unwrap().as_str(),
            "partner a"
        );
        assert_eq!(KeyName::parse(" \t"), Err(KeyNameError::Blank));
        assert_eq!(
            KeyName::parse(&"é".repeat(100))
                .unwrap()
                .as_str()
                .chars()
                .count(),
            100
        );
        assert_eq!(KeyName::parse(&"é".repeat(101)), Err(KeyNameError::TooLong));
        for name in ["a\u{1b}[31m", "partner\u{202e}a", "ops\u{200b}", "a\nb"] {
            assert!(
                matches!(KeyName::parse(name), Err(KeyNameError::Characters(_))),
                "{name:?}"
            );
        }
    }

    #[test]
    fn a_stored_key_name_from_before_the_rule_is_still_read() {
        let old = "partner\u{202e}a";
        assert_eq!(KeyName::parse_stored(old).unwrap().as_str(), old);
        assert_eq!(
            KeyName::parse_stored("a\u{1b}[31m"),
            Err(KeyNameError::ControlCharacter)
        );
        assert_eq!(KeyName::parse_stored(" "), Err(KeyNameError::Blank));
    }

    #[test]
    fn write_allows_everything_read_only_reading() {
        assert!(KeyScope::Write.allows(KeyScope::Write));
        assert!(KeyScope::Write.allows(KeyScope::Read));
        assert!(KeyScope::Read.allows(KeyScope::Read));
        assert!(!KeyScope::Read.allows(KeyScope::Write));
        assert_eq!("read".parse(), Ok(KeyScope::Read));
        assert_eq!("write".parse(), Ok(KeyScope::Write));
        assert_eq!("admin".parse::<KeyScope>(), Err(KeyScopeError));
        assert_eq!("Store".parse::<KeyScope>(), Err(KeyScopeError));
        assert_eq!("Read".parse::<KeyScope>(), Err(KeyScopeError));
    }

    #[test]
    fn a_bound_key_passes_only_its_own_token_and_an_unbound_one_any() {
        let issued = TokenDigest([7; 32]);
        let other = TokenDigest([8; 32]);
        let bound = ApiKey {
            token_digest: Some(issued),
            ..key(None, None)
        };
        assert!(bound.issued_as(&issued));
        assert!(!bound.issued_as(&other));
        let unbound = key(None, None);
        assert!(unbound.issued_as(&issued) && unbound.issued_as(&other));
    }

    #[test]
    fn store_allows_everything_and_only_store_allows_store() {
        for needed in KeyScope::ALL {
            assert!(KeyScope::Store.allows(needed), "{needed}");
            assert_eq!(needed.as_str().parse(), Ok(needed));
        }
        assert!(!KeyScope::Write.allows(KeyScope::Store));
        assert!(!KeyScope::Read.allows(KeyScope::Store));
    }

    #[test]
    fn a_key_works_until_it_expires_or_is_revoked() {
        assert_eq!(key(None, None).state_at(i64::MAX), KeyState::Active);
        assert_eq!(key(Some(200), None).state_at(199), KeyState::Active);
        assert_eq!(key(Some(200), None).state_at(200), KeyState::Expired);
        assert_eq!(key(Some(200), Some(150)).state_at(300), KeyState::Revoked);
        assert_eq!(key(None, Some(150)).state_at(120), KeyState::Revoked);
    }
}
