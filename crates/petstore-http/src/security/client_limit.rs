//! Rate limits for what no key answers for: every request to an endpoint that needs no key
//! (health, metrics, the contract, unknown paths) and every refused key (401) takes from a bucket
//! of its client's address, so that guessing credentials or flooding the anonymous endpoints
//! is not free. Requests with an accepted key take from their key's bucket instead
//! (`state::access`).
//!
//! The middleware that applies it is `app/client_limit.rs`; who the client is, behind trusted
//! proxies too, `client_address.rs` says.

use crate::routing::paths::{ORDERS_PATH, PETS_PATH};

/// The policy's name in the `RateLimit` headers of per-address buckets.
pub(crate) const CLIENT_POLICY: &str = "per-client";

/// Whether `path` is one of the resources a key answers for.
pub(crate) fn needs_a_key(path: &str) -> bool {
    [PETS_PATH, ORDERS_PATH].into_iter().any(|resource| {
        path.strip_prefix(resource)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pets_and_orders_need_a_key() {
        for path in [
            "/v1/pets",
            "/v1/pets/7",
            "/v1/store/orders",
            "/v1/store/orders/3/approve",
        ] {
            assert!(needs_a_key(path), "{path}");
        }
        for path in [
            "/healthz",
            "/readyz",
            "/metrics",
            "/v1/openapi.json",
            "/docs",
            "/v1/petsx",
            "/nope",
        ] {
            assert!(!needs_a_key(path), "{path}");
        }
    }
}
