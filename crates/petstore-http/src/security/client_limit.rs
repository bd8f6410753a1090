//! Rate limits for what no key answers for: every request to an endpoint that needs no key
//! (health, metrics, the contract, unknown paths) and every refused key (401) takes from a bucket
//! of its client's address, so that guessing credentials or flooding the anonymous endpoints
//! is not free. Requests with an accepted key take from their key's bucket instead
//! (`state::access`).
//!
//! The middleware that applies it is `app/client_limit.rs`, which paths need a key the route
//! table says (`routing::table::KeyedPaths`); who the client is, behind trusted proxies too,
//! `client_address.rs` says.

/// The policy's name in the `RateLimit` headers of per-address buckets.
pub(crate) const CLIENT_POLICY: &str = "per-client";
