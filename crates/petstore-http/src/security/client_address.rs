//! Who the client of a request is: the address its per-client rate-limit bucket is kept under
//! and the `client` of its log line.
//!
//! The client is the socket's peer, unless the peer is a configured trusted proxy. Then it is
//! read from the one header the operator named as the one the proxies write
//! ([`ClientAddressHeader`]): `X-Forwarded-For` by default, or `Forwarded` (RFC 7239). The other
//! header is ignored, since a proxy passes on whatever a client sent in a header it does not
//! write itself. From any other peer both headers are ignored.
//!
//! Each proxy appends the address it got the request from, so the header is walked from its
//! right end: past the addresses of trusted proxies, the first address is the client. An entry
//! that is not an address (`unknown`, an obfuscated name, garbage) was written by the trusted
//! proxy to its right, which could not name its client: that proxy is then the client, as
//! nothing to the left of it can be believed.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use actix_web::http::header::{self, HeaderName};
use actix_web::HttpRequest;

/// Peers whose forwarding header is believed: addresses or CIDR blocks
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

    pub(crate) fn trusts(&self, address: IpAddr) -> bool {
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

/// The header trusted proxies name the client in: `x-forwarded-for` (the default) or
/// `forwarded`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClientAddressHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`.
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1;proto=https`.
    Forwarded,
}

impl FromStr for ClientAddressHeader {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(Self::XForwardedFor),
            "forwarded" => Ok(Self::Forwarded),
            _ => Err(format!(
                "`{text}` is not a header client addresses are read from: write \
                 `x-forwarded-for` or `forwarded`"
            )),
        }
    }
}

impl fmt::Display for ClientAddressHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name().as_str())
    }
}

impl ClientAddressHeader {
    fn name(self) -> HeaderName {
        match self {
            Self::XForwardedFor => HeaderName::from_static("x-forwarded-for"),
            Self::Forwarded => header::FORWARDED,
        }
    }

    /// The address one hop's entry names, if it names one.
    fn address_in(self, entry: &str) -> Option<IpAddr> {
        match self {
            Self::XForwardedFor => address_of(entry),
            Self::Forwarded => forwarded_for(entry),
        }
    }
}

/// How client addresses are told: the trusted proxies and the header they write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClientAddresses {
    pub(crate) trusted: TrustedProxies,
    pub(crate) header: ClientAddressHeader,
}

impl ClientAddresses {
    /// The client of `req` (see the module's documentation); `None` only for a request that
    /// came over no socket.
    pub(crate) fn of(&self, req: &HttpRequest) -> Option<IpAddr> {
        // A socket bound to `[::]` sees IPv4 peers as `::ffff:a.b.c.d`: as the address they are,
        // they match the operator's IPv4 blocks and one client has one bucket and one log name.
        let peer = req.peer_addr()?.ip().to_canonical();
        if !self.trusted.trusts(peer) {
            return Some(peer);
        }
        let entries: Vec<&str> = req
            .headers()
            .get_all(self.header.name())
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .collect();
        // The nearest proxy known so far: the client if the walk stops here.
        let mut nearest = peer;
        for entry in entries.into_iter().rev() {
            match self
                .header
                .address_in(entry)
                .map(|address| address.to_canonical())
            {
                Some(address) if self.trusted.trusts(address) => nearest = address,
                Some(client) => return Some(client),
                None => break,
            }
        }
        Some(nearest)
    }
}

/// The address of one `X-Forwarded-For` entry: `192.0.2.60`, `2001:db8::1`, and with a port
/// `192.0.2.60:4711` or `[2001:db8::1]:4711`.
fn address_of(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    if let Ok(address) = entry.parse() {
        return Some(address);
    }
    let host = match entry.strip_prefix('[') {
        Some(rest) => rest.split_once(']')?.0,
        None => entry.split_once(':')?.0,
    };
    host.parse().ok()
}

/// The address of one `Forwarded` element's `for=` (`for=192.0.2.60`, `for="[2001:db8::1]:4711"`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("for") {
            return None;
        }
        address_of(value.trim().trim_matches('"'))
    })
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn from(
        peer: &str,
        headers: &[(&str, &str)],
        trusted: &str,
        header: ClientAddressHeader,
    ) -> Option<IpAddr> {
        let peer: IpAddr = peer.parse().unwrap();
        let mut req = TestRequest::get().peer_addr((peer, 4000).into());
        for (name, value) in headers {
            req = req.append_header((*name, *value));
        }
        let addresses = ClientAddresses {
            trusted: trusted.parse().unwrap(),
            header,
        };
        addresses.of(&req.to_http_request())
    }

    fn xff(peer: &str, headers: &[(&str, &str)], trusted: &str) -> Option<IpAddr> {
        from(peer, headers, trusted, ClientAddressHeader::XForwardedFor)
    }

    fn forwarded(peer: &str, headers: &[(&str, &str)], trusted: &str) -> Option<IpAddr> {
        from(peer, headers, trusted, ClientAddressHeader::Forwarded)
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn an_ipv4_peer_seen_through_an_ipv6_socket_is_its_ipv4_address() {
        let headers = [("x-forwarded-for", "::ffff:203.0.113.9")];
        assert_eq!(
            xff("::ffff:10.1.2.3", &headers, "10.0.0.0/8"),
            ip("203.0.113.9")
        );
        assert_eq!(xff("::ffff:198.51.100.1", &[], ""), ip("198.51.100.1"));
    }

    #[test]
    fn forwarding_headers_count_only_from_a_trusted_peer() {
        let headers = [
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=203.0.113.9"),
        ];
        for read in [xff, forwarded] {
            assert_eq!(read("198.51.100.1", &headers, ""), ip("198.51.100.1"));
            assert_eq!(
                read("198.51.100.1", &headers, "10.0.0.0/8"),
                ip("198.51.100.1")
            );
            assert_eq!(read("10.1.2.3", &headers, "10.0.0.0/8"), ip("203.0.113.9"));
        }
    }

    #[test]
    fn only_the_named_header_is_read_and_the_other_is_ignored_whatever_it_holds() {
        let both = |forwarded: &'static str, xff: &'static str| {
            [("forwarded", forwarded), ("x-forwarded-for", xff)]
        };
        let spoofed = both("for=1.2.3.4", "203.0.113.9");
        assert_eq!(xff("10.0.0.1", &spoofed, "10.0.0.0/8"), ip("203.0.113.9"));
        let garbage = both("garbage", "203.0.113.9");
        assert_eq!(xff("10.0.0.1", &garbage, "10.0.0.0/8"), ip("203.0.113.9"));
        let spoofed = both("for=203.0.113.9", "1.2.3.4");
        assert_eq!(
            forwarded("10.0.0.1", &spoofed, "10.0.0.0/8"),
            ip("203.0.113.9")
        );
        let garbage = both("for=203.0.113.9", "garbage");
        assert_eq!(
            forwarded("10.0.0.1", &garbage, "10.0.0.0/8"),
            ip("203.0.113.9")
        );
        // The named header absent: the proxy itself, never the other header.
        let only_xff = [("x-forwarded-for", "203.0.113.9")];
        assert_eq!(
            forwarded("10.0.0.1", &only_xff, "10.0.0.0/8"),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn the_nearest_untrusted_address_is_the_client_and_a_spoofed_first_hop_is_ignored() {
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")];
        assert_eq!(xff("10.0.0.1", &chain, "10.0.0.0/8"), ip("203.0.113.9"));
        // Over several header lines, in the order they came.
        let lines = [
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "203.0.113.9, 10.0.0.2"),
        ];
        assert_eq!(xff("10.0.0.1", &lines, "10.0.0.0/8"), ip("203.0.113.9"));
        let chain = [(
            "forwarded",
            r#"for=1.1.1.1, for="[2001:db8::7]:4711";proto=https, for=10.0.0.2"#,
        )];
        assert_eq!(
            forwarded("10.0.0.1", &chain, "10.0.0.0/8"),
            ip("2001:db8::7")
        );
        // Only trusted proxies: the farthest of them sent it.
        let inside = [("x-forwarded-for", "10.0.0.3, 10.0.0.2")];
        assert_eq!(xff("10.0.0.1", &inside, "10.0.0.0/8"), ip("10.0.0.3"));
    }

    #[test]
    fn an_entry_that_is_no_address_makes_the_proxy_that_wrote_it_the_client() {
        // 10.0.0.2 wrote `unknown`: what is left of it came from someone nobody vouches for.
        let chain = [("x-forwarded-for", "1.1.1.1, unknown, 10.0.0.2")];
        assert_eq!(xff("10.0.0.1", &chain, "10.0.0.0/8"), ip("10.0.0.2"));
        let junk = [("x-forwarded-for", "unknown, _hidden")];
        assert_eq!(xff("10.0.0.1", &junk, "10.0.0.1"), ip("10.0.0.1"));
        for element in ["garbage", "for=unknown", "for=_hidden", "proto=https", ""] {
            let value = format!("for=1.1.1.1, {element}");
            let chain = [("forwarded", value.as_str())];
            assert_eq!(
                forwarded("10.0.0.1", &chain, "10.0.0.0/8"),
                ip("10.0.0.1"),
                "{element}"
            );
        }
    }

    #[test]
    fn entries_may_carry_ports() {
        for (entry, address) in [
            ("203.0.113.9:4711", "203.0.113.9"),
            ("[2001:db8::1]:4711", "2001:db8::1"),
            ("[2001:db8::1]", "2001:db8::1"),
            ("2001:db8::1", "2001:db8::1"),
        ] {
            assert_eq!(address_of(entry), ip(address), "{entry}");
        }
        assert_eq!(forwarded_for(r#"For="192.0.2.43:_abc""#), ip("192.0.2.43"));
        assert_eq!(address_of("example.com:80"), None);
    }

    #[test]
    fn the_header_is_named_in_lower_or_upper_case() {
        for (text, header) in [
            ("x-forwarded-for", ClientAddressHeader::XForwardedFor),
            ("X-Forwarded-For", ClientAddressHeader::XForwardedFor),
            ("Forwarded", ClientAddressHeader::Forwarded),
        ] {
            assert_eq!(text.parse(), Ok(header));
            assert_eq!(header.to_string(), text.to_ascii_lowercase());
        }
        let refused = "x-real-ip".parse::<ClientAddressHeader>().unwrap_err();
        assert!(
            refused.contains("`x-forwarded-for` or `forwarded`"),
            "{refused}"
        );
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
}
