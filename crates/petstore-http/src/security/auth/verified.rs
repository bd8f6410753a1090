//! Keys already verified, so a key calling again costs a hash lookup instead of an HMAC and two
//! JSON parses (a large share of a getPet's time when every call was verified afresh; the
//! profile is in `docs/benchmarks.md`).
//!
//! Only tokens that passed every check are kept, under their exact text, so a hit means the very
//! same bytes were verified before with the same secret. Expiry is checked again on every hit.
//! The map is bounded: when full it is emptied and refills with the keys in use.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::KeyClaims;

/// Most keys remembered at once.
const CAPACITY: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct VerifiedKeys {
    by_token: Mutex<HashMap<Box<str>, KeyClaims>>,
}

impl VerifiedKeys {
    /// The claims of `token` if it was verified before and, at `now` (Unix seconds), has not
    /// passed `exp` plus `leeway`.
    pub(crate) fn get(&self, token: &str, now: u64, leeway: u64) -> Option<KeyClaims> {
        let by_token = self.by_token.lock().unwrap_or_else(PoisonError::into_inner);
        by_token
            .get(token)
            .filter(|claims| {
                claims
                    .exp
                    .is_none_or(|exp| now <= exp.saturating_add(leeway))
            })
            .cloned()
    }

    /// Remembers `token` as verified with these claims.
    pub(crate) fn insert(&self, token: &str, claims: &KeyClaims) {
        let mut by_token = self.by_token.lock().unwrap_or_else(PoisonError::into_inner);
        if by_token.len() >= CAPACITY {
            by_token.clear();
        }
        by_token.insert(token.into(), claims.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: Option<u64>) -> KeyClaims {
        KeyClaims {
            sub: "me".into(),
            jti: "00".into(),
            iat: 100,
            exp,
            nbf: None,
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
    fn the_map_never_holds_more_than_its_capacity() {
        let keys = VerifiedKeys::default();
        for n in 0..=CAPACITY {
            keys.insert(&format!("token {n}"), &claims(None));
        }
        let held = keys.by_token.lock().expect("lock").len();
        assert!(held <= CAPACITY, "{held}");
        assert!(keys.get(&format!("token {CAPACITY}"), 0, 0).is_some());
    }
}
