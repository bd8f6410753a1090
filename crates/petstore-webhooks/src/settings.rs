//! How the sender makes its attempts: the deadline, whether loopback may be reached (tests),
//! names answered from a table instead of DNS (tests, like curl's `--resolve`) and a file of
//! extra trusted roots (a private or test CA). The server fills these from its environment.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The sender's settings; [`SenderSettings::default`] is production's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderSettings {
    /// An attempt's whole deadline: resolving, connecting, TLS, the request and the answer's
    /// head, then reading a bounded part of its body. From [`MIN_TIMEOUT`] to [`MAX_TIMEOUT`].
    pub timeout: Duration,
    /// Also deliver to loopback addresses and over plain `http` (development and tests).
    pub allow_loopback: bool,
    /// Names resolved to these addresses without asking DNS; the address rule still applies
    /// to them. Names are matched without case and without a final dot.
    pub hosts: Vec<(String, IpAddr)>,
    /// A PEM file of certificates trusted besides the system's roots.
    pub ca_file: Option<PathBuf>,
}

/// The shortest deadline an attempt may be given.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest deadline, and the default: a receiver answers within it or the attempt fails.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(15);

impl Default for SenderSettings {
    fn default() -> Self {
        Self {
            timeout: MAX_TIMEOUT,
            allow_loopback: false,
            hosts: Vec::new(),
            ca_file: None,
        }
    }
}

/// Why a list of `name=address` pairs does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostsError {
    #[error("`{entry}` is not `name=address`")]
    NotAPair { entry: String },
    #[error("`{name}` is not a host name")]
    Name { name: String },
    #[error("`{address}` is not an IP address")]
    Address { address: String },
}

/// The table of [`SenderSettings::hosts`] from its text form: `name=address` pairs separated by
/// commas (`hooks.test=127.0.0.1,v6.test=::1`); empty text is an empty table.
pub fn parse_hosts(raw: &str) -> Result<Vec<(String, IpAddr)>, HostsError> {
    raw.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (name, address) = entry.split_once('=').ok_or_else(|| HostsError::NotAPair {
                entry: entry.to_owned(),
            })?;
            let (name, address) = (name.trim(), address.trim());
            let is_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || b"-._".contains(&byte));
            if !is_name {
                return Err(HostsError::Name {
                    name: name.to_owned(),
                });
            }
            let address = address
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .map_err(|_| HostsError::Address {
                    address: address.to_owned(),
                })?;
            Ok((name.to_owned(), address))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn pairs_parse_into_the_table() {
        assert_eq!(
            parse_hosts("hooks.test=127.0.0.1, v6.test=[::1]").unwrap(),
            vec![
                ("hooks.test".to_owned(), "127.0.0.1".parse().unwrap()),
                ("v6.test".to_owned(), "::1".parse().unwrap()),
            ]
        );
        assert_eq!(parse_hosts("").unwrap(), vec![]);
    }

    #[test]
    fn malformed_pairs_are_refused() {
        assert!(matches!(
            parse_hosts("hooks.test"),
            Err(HostsError::NotAPair { .. })
        ));
        assert!(matches!(
            parse_hosts("=127.0.0.1"),
            Err(HostsError::Name { .. })
        ));
        assert!(matches!(
            parse_hosts("a b=127.0.0.1"),
            Err(HostsError::Name { .. })
        ));
        assert!(matches!(
            parse_hosts("hooks.test=localhost"),
            Err(HostsError::Address { .. })
        ));
    }
}
