//! Rate limits: a token bucket per API key (GCRA, from the `governor` crate), in this instance's
//! memory, and the same per client address for what no key answers for (`client_limit.rs`).
//! Key requests are checked after the key is, so only keys the registry issued ever get a key
//! bucket; refused keys (401) and anonymous endpoints take from their client address's bucket.
//!
//! Memory is bounded whatever clients send: a limiter keeps at most `MAX_BUCKETS` buckets.
//! When it is full, a new bucket takes the place of one used least (`quick_cache`'s CLOCK-Pro):
//! a bucket used again and again, such as an empty one being hammered, stays while a flood of
//! new addresses passes through, and the client of a bucket dropped starts again with a full
//! one.
//!
//! Each key has a direct (unkeyed) governor limiter, found in that cache under a read lock of
//! one of its shards: a check is then one atomic compare-and-swap. (governor's keyed limiter
//! takes a write lock on a `DashMap` shard per check; with every worker checking the same key,
//! the workers queued on it and yielded their cores.)
//!
//! Every response to a limited key carries the IETF httpapi rate-limit draft's headers:
//! `RateLimit-Policy: "per-key";q=BURST;w=SECONDS` (the bucket and the time it takes to refill)
//! and `RateLimit: "per-key";r=REMAINING;t=SECONDS` (requests left now, seconds until the next
//! one is allowed). Over the limit: 429 `rate_limited` with `Retry-After`.

use std::convert::Infallible;
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::web::Bytes;
use governor::clock::{Clock as _, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use quick_cache::sync::Cache;

/// `RateLimit-Policy`.
pub const RATE_LIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// `RateLimit`.
pub const RATE_LIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The policy's name in the headers of the per-key buckets.
const KEY_POLICY: &str = "per-key";

/// Most buckets one limiter keeps: enough for every client of a busy instance within a refill
/// window, few enough that addresses made up by the million cost a bounded amount of memory.
pub(crate) const MAX_BUCKETS: usize = 16_384;

/// A rate and a burst: `100/s`, `6000/m`, optionally `,burst=200` (default: one second's worth,
/// at least 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per `period`.
    per_period: NonZeroU32,
    burst: NonZeroU32,
    /// A second or a minute.
    period: Duration,
}

impl FromStr for RateLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const FORMAT: &str = "write it as `100/s` or `6000/m`, optionally followed by `,burst=200`";
        let (rate, burst) = match text.split_once(',') {
            Some((rate, burst)) => (rate.trim(), Some(burst.trim())),
            None => (text.trim(), None),
        };
        let (count, unit) = rate.split_once('/').ok_or(FORMAT)?;
        let count: u32 = count.trim().parse().map_err(|_| FORMAT)?;
        let period = match unit.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            _ => return Err(FORMAT.to_owned()),
        };
        let count = NonZeroU32::new(count).ok_or("the rate must be at least 1")?;
        let burst = match burst {
            None => count,
            Some(burst) => {
                let value = burst.strip_prefix("burst=").ok_or(FORMAT)?;
                let value: u32 = value.parse().map_err(|_| FORMAT)?;
                NonZeroU32::new(value).ok_or("the burst must be at least 1")?
            }
        };
        Ok(Self {
            per_period: count,
            burst,
            period,
        })
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.period.as_secs() == 60 {
            "m"
        } else {
            "s"
        };
        write!(f, "{}/{unit},burst={}", self.per_period, self.burst)
    }
}

impl RateLimit {
    fn quota(self) -> Quota {
        let quota = if self.period.as_secs() == 60 {
            Quota::per_minute(self.per_period)
        } else {
            Quota::per_second(self.per_period)
        };
        quota.allow_burst(self.burst)
    }

    /// Seconds (rounded up, at least 1) until an empty bucket holds a token again.
    fn secs_per_token(self) -> u64 {
        let per_token = self.period.as_secs_f64() / f64::from(self.per_period.get());
        per_token.ceil().max(1.0) as u64
    }

    /// Seconds for an empty bucket to fill up again: the policy's window.
    fn window_secs(self) -> u64 {
        let per_token = self.period.as_secs_f64() / f64::from(self.per_period.get());
        (per_token * f64::from(self.burst.get())).ceil().max(1.0) as u64
    }
}

/// One key's bucket.
type Bucket = RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>;

/// The buckets of one instance.
pub struct KeyRateLimiter {
    limit: RateLimit,
    /// The policy's name in the headers.
    name: &'static str,
    buckets: Cache<String, Arc<Bucket>>,
    policy: HeaderValue,
}

impl fmt::Debug for KeyRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRateLimiter")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// What a check decided; both carry the headers to send.
#[derive(Debug, Clone)]
pub(crate) enum Decision {
    Allowed(RateLimitHeaders),
    Limited {
        headers: RateLimitHeaders,
        retry_after_secs: u64,
    },
}

/// `RateLimit-Policy` and `RateLimit` for one response.
#[derive(Debug, Clone)]
pub(crate) struct RateLimitHeaders {
    pub(crate) policy: HeaderValue,
    pub(crate) state: HeaderValue,
}

impl KeyRateLimiter {
    /// Buckets of `limit` per API key.
    pub fn new(limit: RateLimit) -> Self {
        Self::named(limit, KEY_POLICY)
    }

    /// Buckets of `limit` per whatever the caller keys them by, `name`d so in the headers.
    pub(crate) fn named(limit: RateLimit, name: &'static str) -> Self {
        let policy = format!("\"{name}\";q={};w={}", limit.burst, limit.window_secs());
        Self {
            limit,
            name,
            buckets: Cache::new(MAX_BUCKETS),
            policy: HeaderValue::from_str(&policy).expect("digits and quotes are a valid header"),
        }
    }

    /// Takes a token from `key`'s bucket, or says how long until one is there.
    pub(crate) fn check(&self, key: &str) -> Decision {
        match self.bucket(key).check() {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                // The last token taken: the next request waits for one to come back, and `t`
                // says how long (0 would tell the client it may go on at once).
                let reset_secs = if remaining == 0 {
                    self.limit.secs_per_token()
                } else {
                    0
                };
                Decision::Allowed(self.headers(remaining, reset_secs))
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Decision::Limited {
                    headers: self.headers(0, retry_after_secs),
                    retry_after_secs,
                }
            }
        }
    }

    fn headers(&self, remaining: u32, reset_secs: u64) -> RateLimitHeaders {
        // Sized once and handed over without a copy: this runs for every keyed request.
        let mut state = String::with_capacity(self.name.len() + 32);
        state.push('"');
        state.push_str(self.name);
        state.push_str("\";r=");
        state.push_str(itoa::Buffer::new().format(remaining));
        state.push_str(";t=");
        state.push_str(itoa::Buffer::new().format(reset_secs));
        RateLimitHeaders {
            policy: self.policy.clone(),
            state: HeaderValue::from_maybe_shared(Bytes::from(state))
                .expect("digits and quotes are a valid header"),
        }
    }

    /// `key`'s bucket, made on first use (once, however many workers ask at the same time).
    fn bucket(&self, key: &str) -> Arc<Bucket> {
        let made = self.buckets.get_or_insert_with(key, || {
            Ok::<_, Infallible>(Arc::new(
                RateLimiter::direct(self.limit.quota())
                    .with_middleware::<StateInformationMiddleware>(),
            ))
        });
        match made {
            Ok(bucket) => bucket,
            Err(never) => match never {},
        }
    }

    /// How many keys have a bucket now.
    pub fn tracked_keys(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_with_an_optional_burst_and_print_back() {
        let limit: RateLimit = "100/s".parse().unwrap();
        assert_eq!(limit.to_string(), "100/s,burst=100");
        let limit: RateLimit = "6000/m, burst=200".parse().unwrap();
        assert_eq!(limit.to_string(), "6000/m,burst=200");
        assert_eq!(limit.window_secs(), 2);
        for bad in ["", "100", "100/h", "0/s", "x/s", "10/s,burst=0", "10/s,200"] {
            assert!(bad.parse::<RateLimit>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_key_gets_its_burst_then_429_with_the_time_to_wait_and_other_keys_are_untouched() {
        let limiter = KeyRateLimiter::new("2/m,burst=3".parse().unwrap());
        let key = "a".repeat(32);
        let key = key.as_str();
        // 2 a minute: a token comes back every 30 s. Until the bucket is empty the next request
        // may go at once (t=0); the one that empties it says how long the next must wait.
        for (remaining, reset) in [(2, 0), (1, 0), (0, 30)] {
            match limiter.check(key) {
                Decision::Allowed(headers) => {
                    assert_eq!(headers.policy, "\"per-key\";q=3;w=90");
                    assert_eq!(
                        headers.state,
                        format!("\"per-key\";r={remaining};t={reset}").as_str()
                    );
                }
                Decision::Limited { .. } => panic!("limited within the burst"),
            }
        }
        match limiter.check(key) {
            Decision::Limited {
                headers,
                retry_after_secs,
            } => {
                assert!((1..=30).contains(&retry_after_secs), "{retry_after_secs}");
                assert_eq!(
                    headers.state,
                    format!("\"per-key\";r=0;t={retry_after_secs}").as_str()
                );
            }
            Decision::Allowed(_) => panic!("allowed past the burst"),
        }
        assert!(matches!(limiter.check("b"), Decision::Allowed(_)));
        assert_eq!(limiter.tracked_keys(), 2);
    }

    #[test]
    fn a_flood_of_new_clients_keeps_the_buckets_bounded_and_a_busy_one_limited() {
        let limiter = KeyRateLimiter::new("1/m".parse().unwrap());
        assert!(matches!(limiter.check("busy"), Decision::Allowed(_)));
        assert!(matches!(limiter.check("busy"), Decision::Limited { .. }));
        for client in 0..3 * MAX_BUCKETS {
            limiter.check(&format!("203.0.{}.{}", client / 256, client % 256));
        }
        assert!(
            limiter.tracked_keys() <= MAX_BUCKETS,
            "{}",
            limiter.tracked_keys()
        );
        assert!(matches!(limiter.check("busy"), Decision::Limited { .. }));
    }
}
