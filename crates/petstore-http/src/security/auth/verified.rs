//! Keys already verified, so a key calling again costs a hash lookup instead of an HMAC and two
//! JSON parses, which would otherwise be a large part of a cheap request.
//!
//! Only tokens that passed every check are kept, under their exact text, with their digest (the
//! registry's check that a token is the one issued for its key compares it), so a hit means the
//! very same bytes were verified before with the same secret. Each entry's own expiry is checked again
//! on every hit. The cache is bounded: `quick_cache` evicts the keys used least (CLOCK-Pro), so
//! the keys in use stay while a burst of new ones passes through.

use quick_cache::sync::Cache;

use super::token::VerifiedToken;

/// Most keys remembered at once.
const CAPACITY: usize = 4096;

pub(crate) struct VerifiedKeys {
    by_token: Cache<Box<str>, VerifiedToken>,
}

impl Default for VerifiedKeys {
    fn default() -> Self {
        Self {
            by_token: Cache::new(CAPACITY),
        }
    }
}

impl std::fmt::Debug for VerifiedKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedKeys")
            .field("held", &self.by_token.len())
            .finish()
    }
}

impl VerifiedKeys {
    /// `token` as verified before, if it was and, at `now` (Unix seconds), has not passed `exp`
    /// plus `leeway`.
    pub(crate) fn get(&self, token: &str, now: u64, leeway: u64) -> Option<VerifiedToken> {
        self.by_token.get(token).filter(|verified| {
            verified
                .claims
                .exp
                .is_none_or(|exp| now <= exp.saturating_add(leeway))
        })
    }

    /// Remembers `token` as verified.
    pub(crate) fn insert(&self, token: &str, verified: &VerifiedToken) {
        self.by_token.insert(token.into(), verified.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::super::{token_digest, KeyClaims};
    use super::*;

    fn claims(exp: Option<u64>) -> VerifiedToken {
        VerifiedToken {
            claims: KeyClaims {
                sub: "me".into(),
                jti: "00".into(),
                iat: 100,
                exp,
                nbf: None,
            },
            digest: token_digest("token"),
        }
    }

    #[test]
    fn a_remembered_key_is_found_until_it_expires() {
        let keys = VerifiedKeys::default();
        keys.insert("token", &claims(Some(200)));
        assert_eq!(keys.get("token", 150, 30), Some(claims(Some(200))));
        assert_eq!(keys.get("token", 230, 30), Some(claims(Some(200))));
        assert_eq!(
            keys.get("token", 231, 30),
            None,
            "expired beyond the leeway"
        );
        assert_eq!(keys.get("other", 150, 30), None);
    }

    #[test]
    fn the_cache_never_holds_more_than_its_capacity_and_keeps_a_key_in_use() {
        let keys = VerifiedKeys::default();
        keys.insert("in use", &claims(None));
        for n in 0..CAPACITY * 2 {
            keys.insert(&format!("token {n}"), &claims(None));
            // The key in use calls between every two new ones.
            assert!(
                keys.get("in use", 0, 0).is_some(),
                "evicted after {n} new keys"
            );
        }
        let held = keys.by_token.len();
        assert!(held <= CAPACITY, "{held}");
    }
}
