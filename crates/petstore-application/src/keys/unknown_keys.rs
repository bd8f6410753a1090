//! Keys a lookup found unknown, remembered for [`MISS_TTL`] so that repeated tokens for them do
//! not read the registry again.

use std::time::SystemTime;

use quick_cache::sync::Cache;

use super::MISS_TTL;

/// Most keys remembered as unknown at once. Only correctly signed tokens get this far, so many
/// distinct unknown keys mean a leaked secret; past this bound the least used miss is forgotten.
const MAX_UNKNOWN: usize = 1024;

/// When each recently missed key was found unknown; bounded by [`MAX_UNKNOWN`].
pub(super) struct UnknownKeys(Cache<String, SystemTime>);

impl Default for UnknownKeys {
    fn default() -> Self {
        Self(Cache::new(MAX_UNKNOWN))
    }
}

impl UnknownKeys {
    /// Whether `id` was found unknown less than [`MISS_TTL`] before `now`.
    pub(super) fn recently_missed(&self, id: &str, now: SystemTime) -> bool {
        self.0
            .get(id)
            .is_some_and(|missed_at| now.duration_since(missed_at).unwrap_or_default() < MISS_TTL)
    }

    /// Remembers that `id` was found unknown at `now`.
    pub(super) fn remember(&self, id: &str, now: SystemTime) {
        self.0.insert(id.to_owned(), now);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn a_miss_is_remembered_for_the_ttl_only() {
        let unknown = UnknownKeys::default();
        let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert!(!unknown.recently_missed("k", at));
        unknown.remember("k", at);
        assert!(unknown.recently_missed("k", at + MISS_TTL / 2));
        assert!(!unknown.recently_missed("k", at + MISS_TTL));
        assert!(!unknown.recently_missed("other", at));
    }

    #[test]
    fn a_flood_of_misses_stays_bounded_and_keeps_the_latest() {
        let unknown = UnknownKeys::default();
        let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        for n in 0..MAX_UNKNOWN * 4 {
            unknown.remember(&format!("key-{n}"), at);
        }
        assert!(unknown.0.len() <= MAX_UNKNOWN, "{}", unknown.0.len());
        let latest = format!("key-{}", MAX_UNKNOWN * 4 - 1);
        assert!(unknown.recently_missed(&latest, at));
    }
}
