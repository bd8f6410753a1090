//! Dates in the life cycle of the v1 operations. `getPet` is deprecated and is removed on
//! 5 December 2030 (spec, section 4.3); from that instant it answers `410 Gone`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2026-11-22T00:00:00Z, the day petstore v1.0.0 first shipped with `getPet` already deprecated.
pub const GET_PET_DEPRECATED_AT_UNIX: u64 = 1_795_305_600;

/// 2030-12-05T00:00:00Z: the first instant at which `getPet` no longer answers.
pub const GET_PET_SUNSET_AT_UNIX: u64 = 1_922_659_200;

pub fn get_pet_sunset() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(GET_PET_SUNSET_AT_UNIX)
}
