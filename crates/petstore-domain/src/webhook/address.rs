//! Which network addresses a webhook may be delivered to: never one inside the server's own
//! network (loopback, private, link-local, carrier-grade NAT, cloud metadata) nor one that
//! embeds such an address (IPv4-mapped, NAT64, 6to4, Teredo), so that an endpoint URL cannot
//! make the server reach what only it can reach (server-side request forgery).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The rule an address must pass before the server connects to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddressPolicy {
    /// Also permit loopback (`127.0.0.0/8`, `::1`): for development and tests only.
    pub allow_loopback: bool,
}

/// Why an address is refused: the range it falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{address} is a {range} address, which webhooks are never delivered to")]
pub struct AddressRefusal {
    pub address: IpAddr,
    pub range: &'static str,
}

impl AddressPolicy {
    /// `Ok` when a delivery may connect to `address`. An IPv4-mapped IPv6 address is judged as
    /// the IPv4 address it carries.
    pub fn permits(self, address: IpAddr) -> Result<(), AddressRefusal> {
        let refused = |range| Err(AddressRefusal { address, range });
        match address.to_canonical() {
            IpAddr::V4(v4) => match v4_range(v4) {
                Some("loopback") if self.allow_loopback => Ok(()),
                Some(range) => refused(range),
                None => Ok(()),
            },
            IpAddr::V6(v6) if v6 == Ipv6Addr::LOCALHOST && self.allow_loopback => Ok(()),
            IpAddr::V6(v6) => match v6_range(v6) {
                Some(range) => refused(range),
                None => Ok(()),
            },
        }
    }
}

/// The special-purpose IPv4 range `address` is in, if any (IANA's registry, every block that
/// is not globally reachable unicast).
fn v4_range(address: Ipv4Addr) -> Option<&'static str> {
    const RANGES: [([u8; 4], u8, &str); 15] = [
        ([0, 0, 0, 0], 8, "\"this network\""),
        ([10, 0, 0, 0], 8, "private"),
        ([100, 64, 0, 0], 10, "carrier-grade NAT"),
        ([127, 0, 0, 0], 8, "loopback"),
        ([169, 254, 0, 0], 16, "link-local (cloud metadata)"),
        ([172, 16, 0, 0], 12, "private"),
        ([192, 0, 0, 0], 24, "protocol assignment"),
        ([192, 0, 2, 0], 24, "documentation"),
        ([192, 88, 99, 0], 24, "6to4 relay"),
        ([192, 168, 0, 0], 16, "private"),
        ([198, 18, 0, 0], 15, "benchmarking"),
        ([198, 51, 100, 0], 24, "documentation"),
        ([203, 0, 113, 0], 24, "documentation"),
        ([224, 0, 0, 0], 4, "multicast"),
        ([240, 0, 0, 0], 4, "reserved"),
    ];
    let bits = u32::from(address);
    RANGES.iter().find_map(|&(start, prefix, name)| {
        let mask = u32::MAX << (32 - u32::from(prefix));
        (bits & mask == u32::from(Ipv4Addr::from(start))).then_some(name)
    })
}

/// Why an IPv6 address is not a global unicast one a delivery may reach, if it is not. Only
/// `2000::/3` is allowed, less the blocks in it that carry IPv4 addresses or are reserved, so a
/// range defined later outside it is refused without a change here.
fn v6_range(address: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(address);
    let within = |start: u128, prefix: u32| bits & (u128::MAX << (128 - prefix)) == start;
    if !within(0x2000 << 112, 3) {
        return Some(match address.segments()[0] {
            0 if within(0xffff << 32, 96) => "IPv4-mapped",
            0 => "unspecified, loopback or IPv4-compatible",
            0x64 => "NAT64",
            0x100 => "discard",
            0xfc00..=0xfdff => "unique local (private)",
            0xfe80..=0xfebf => "link-local",
            0xff00..=0xffff => "multicast",
            _ => "reserved",
        });
    }
    const INSIDE: [(u128, u32, &str); 7] = [
        (0x2001_0000 << 96, 32, "Teredo"),
        (0x2001_0002 << 96, 48, "benchmarking"),
        (0x2001_0010 << 96, 28, "ORCHID"),
        (0x2001_0020 << 96, 28, "ORCHID"),
        (0x2001_0db8 << 96, 32, "documentation"),
        (0x3fff_0000 << 96, 20, "documentation"),
        (0x2002_0000 << 96, 16, "6to4"),
    ];
    INSIDE
        .iter()
        .find(|&&(start, prefix, _)| within(start, prefix))
        .map(|&(_, _, name)| name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn permitted(address: &str, allow_loopback: bool) -> bool {
        AddressPolicy { allow_loopback }
            .permits(address.parse().unwrap())
            .is_ok()
    }

    #[test]
    fn public_addresses_are_permitted() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
        ] {
            assert!(permitted(address, false), "{address} should be permitted");
        }
    }

    #[test]
    fn internal_and_special_addresses_are_refused() {
        for address in [
            "0.0.0.0",
            "0.255.255.255",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.0",
            "100.100.100.200",
            "100.127.255.255",
            "127.0.0.1",
            "127.255.255.255",
            "169.254.169.254",
            "172.16.0.0",
            "172.31.255.255",
            "192.0.0.192",
            "192.168.1.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "2001::1",
            "2001:db8::1",
            "2002:7f00:1::",
            "100::1",
        ] {
            assert!(!permitted(address, false), "{address} should be refused");
        }
    }

    #[test]
    fn a_mapped_address_is_judged_as_the_ipv4_address_it_carries() {
        assert!(permitted("::ffff:8.8.8.8", false));
        let refusal = AddressPolicy::default()
            .permits("::ffff:10.1.2.3".parse().unwrap())
            .unwrap_err();
        assert_eq!(refusal.range, "private");
    }

    #[test]
    fn allowing_loopback_permits_loopback_only() {
        assert!(permitted("127.0.0.1", true));
        assert!(permitted("127.3.2.1", true));
        assert!(permitted("::1", true));
        assert!(permitted("::ffff:127.0.0.1", true));
        for address in [
            "10.0.0.1",
            "169.254.169.254",
            "192.168.0.1",
            "fd00::1",
            "0.0.0.0",
        ] {
            assert!(!permitted(address, true), "{address} should stay refused");
        }
    }

    #[test]
    fn a_refusal_names_the_range() {
        let refusal = AddressPolicy::default()
            .permits("169.254.169.254".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "169.254.169.254 is a link-local (cloud metadata) address, which webhooks are never \
             delivered to"
        );
    }
}
