//! Rate limits for what no key answers for: every request to an endpoint that needs no key
//! (health, metrics, the contract, unknown paths) and every refused key (401) takes from a bucket
//! of its client's address, so that guessing credentials or flooding the anonymous endpoints
//! is not free. Requests with an accepted key take from their key's bucket instead
//! (`state::access`).
//!
//! The middleware that applies it is `app/client_limit.rs`. The client's address is the
//! socket's peer, unless the peer is a configured trusted proxy:
//! then it is the nearest address in `Forwarded` (RFC 7239 `for=`) or else `X-Forwarded-For`
//! that is not itself a trusted proxy. A client cannot pick its bucket by sending those headers
//! straight to the service: they are read only from a trusted peer.

use std::net::IpAddr;
use std::str::FromStr;

use actix_web::http::header;
use actix_web::HttpRequest;

use crate::routing::paths::{ORDERS_PATH, PETS_PATH};

/// The policy's name in the `RateLimit` headers of per-address buckets.
pub(crate) const CLIENT_POLICY: &str = "per-client";

/// Peers whose forwarding headers are believed: addresses or CIDR blocks
/// (`10.0.0.0/8,192.168.1.7,fd00::/8`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

impl FromStr for TrustedProxies {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let bad = || format!("`{entry}` is not an IP address or a CIDR block");
                let (address, bits) = entry.split_once('/').unwrap_or((entry, ""));
                let address: IpAddr = address.parse().map_err(|_| bad())?;
                let max = if address.is_ipv4() { 32 } else { 128 };
                let bits = if bits.is_empty() {
                    max
                } else {
                    bits.parse::<u8>()
                        .ok()
                        .filter(|bits| *bits <= max)
                        .ok_or_else(bad)?
                };
                Ok((address, bits))
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

impl TrustedProxies {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.0
            .iter()
            .any(|&(block, bits)| in_block(address, block, bits))
    }
}

fn in_block(address: IpAddr, block: IpAddr, bits: u8) -> bool {
    let prefix = |value: u128, width: u32| {
        let shift = width - u32::from(bits);
        value.checked_shr(shift).unwrap_or(0)
    };
    match (address, block) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            prefix(u128::from(u32::from(a)), 32) == prefix(u128::from(u32::from(b)), 32)
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => prefix(u128::from(a), 128) == prefix(u128::from(b), 128),
        _ => false,
    }
}

/// The address a request is counted against (see the module's documentation).
pub(crate) fn client_address(req: &HttpRequest, trusted: &TrustedProxies) -> Option<IpAddr> {
    let peer = req.peer_addr().map(|peer| peer.ip())?;
    if !trusted.trusts(peer) {
        return Some(peer);
    }
    let forwarded: Vec<IpAddr> = if req.headers().contains_key(header::FORWARDED) {
        req.headers()
            .get_all(header::FORWARDED)
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(forwarded_for)
            .collect()
    } else {
        req.headers()
            .get_all("x-forwarded-for")
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|entry| entry.trim().parse().ok())
            .collect()
    };
    // Each proxy appends the address it got the request from: the nearest untrusted one is the
    // first a trusted proxy vouches for.
    Some(
        forwarded
            .into_iter()
            .rev()
            .find(|address| !trusted.trusts(*address))
            .unwrap_or(peer),
    )
}

/// The address of one `Forwarded` element's `for=` (`for=192.0.2.60`, `for="[2001:db8::1]:4711"`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("for") {
            return None;
        }
        let value = value.trim().trim_matches('"');
        let host = match value.strip_prefix('[') {
            Some(rest) => rest.split(']').next()?,
            None => value.split(':').next()?,
        };
        host.parse().ok()
    })
}

/// Whether `path` is one of the resources a key answers for.
pub(crate) fn needs_a_key(path: &str) -> bool {
    [PETS_PATH, ORDERS_PATH].into_iter().any(|resource| {
        path.strip_prefix(resource)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn from(peer: &str, headers: &[(&str, &str)], trusted: &str) -> Option<IpAddr> {
        let mut req = TestRequest::get().peer_addr(format!("{peer}:4000").parse().unwrap());
        for (name, value) in headers {
            req = req.append_header((*name, *value));
        }
        client_address(&req.to_http_request(), &trusted.parse().unwrap())
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn forwarding_headers_count_only_from_a_trusted_peer() {
        let xff = [("x-forwarded-for", "203.0.113.9")];
        assert_eq!(from("198.51.100.1", &xff, ""), ip("198.51.100.1"));
        assert_eq!(from("198.51.100.1", &xff, "10.0.0.0/8"), ip("198.51.100.1"));
        assert_eq!(from("10.1.2.3", &xff, "10.0.0.0/8"), ip("203.0.113.9"));
    }

    #[test]
    fn the_nearest_untrusted_address_is_the_client_and_a_spoofed_first_hop_is_ignored() {
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")];
        assert_eq!(from("10.0.0.1", &chain, "10.0.0.0/8"), ip("203.0.113.9"));
        let forwarded = [(
            "forwarded",
            r#"for=1.1.1.1, for="[2001:db8::7]:4711";proto=https, for=10.0.0.2"#,
        )];
        assert_eq!(
            from("10.0.0.1", &forwarded, "10.0.0.0/8"),
            ip("2001:db8::7")
        );
        // Nothing usable: the peer itself.
        let junk = [("x-forwarded-for", "unknown, _hidden")];
        assert_eq!(from("10.0.0.1", &junk, "10.0.0.1"), ip("10.0.0.1"));
    }

    #[test]
    fn trusted_proxies_parse_addresses_and_blocks() {
        let trusted: TrustedProxies = "10.0.0.0/8, 192.168.1.7 ,fd00::/8".parse().unwrap();
        assert!(trusted.trusts("10.200.0.1".parse().unwrap()));
        assert!(trusted.trusts("192.168.1.7".parse().unwrap()));
        assert!(!trusted.trusts("192.168.1.8".parse().unwrap()));
        assert!(trusted.trusts("fd12::1".parse().unwrap()));
        assert!(!trusted.trusts("11.0.0.1".parse().unwrap()));
        assert!("0.0.0.0/0"
            .parse::<TrustedProxies>()
            .unwrap()
            .trusts("8.8.8.8".parse().unwrap()));
        for bad in ["10.0.0.0/33", "example.com", "10.0.0.1/x"] {
            assert!(bad.parse::<TrustedProxies>().is_err(), "{bad}");
        }
    }

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
