//! `WebhookUrl`: where an endpoint's deliveries are posted. Checked when the endpoint is
//! registered for what can be told from the URL alone (scheme, host, an address literal the
//! delivery rule refuses); the name is resolved and its addresses checked at every delivery,
//! not here, since an answer now says nothing of the answer then.

use std::fmt;
use std::net::IpAddr;

use url::{Host, Url};

use super::address::{AddressPolicy, AddressRefusal};

/// An absolute `https` URL with a host (a name, or an address the [`AddressPolicy`] permits),
/// no user name or password and no fragment, at most [`MAX_BYTES`](Self::MAX_BYTES) long, kept
/// in the `url` crate's serialised form. `http` is accepted only where the policy allows
/// loopback (development and tests).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WebhookUrl(Url);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookUrlError {
    #[error("must be at most {max} bytes long (got {actual})")]
    TooLong { max: usize, actual: usize },
    #[error("must be an absolute https URL ({reason})")]
    Invalid { reason: String },
    #[error("must be an https URL (got the scheme \"{scheme}\")")]
    NotHttps { scheme: String },
    #[error("must be a URL with a host")]
    NoHost,
    #[error("must be a URL without a user name or password")]
    UserInfo,
    #[error("must be a URL without a fragment (`#...`)")]
    Fragment,
    #[error("must not name this machine (`{host}`)")]
    LocalName { host: String },
    #[error("must not be an internal address: {0}")]
    Address(AddressRefusal),
}

impl WebhookUrl {
    /// Longest accepted URL, in bytes of its serialised form.
    pub const MAX_BYTES: usize = 2_048;

    pub fn parse(raw: &str, policy: AddressPolicy) -> Result<Self, WebhookUrlError> {
        let too_long = |actual| WebhookUrlError::TooLong {
            max: Self::MAX_BYTES,
            actual,
        };
        if raw.len() > Self::MAX_BYTES {
            return Err(too_long(raw.len()));
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(WebhookUrlError::Invalid {
                reason: "spaces and control characters are not allowed".to_owned(),
            });
        }
        let url = Url::parse(raw).map_err(|err| WebhookUrlError::Invalid {
            reason: err.to_string(),
        })?;
        match url.scheme() {
            "https" => {}
            "http" if policy.allow_loopback => {}
            scheme => {
                return Err(WebhookUrlError::NotHttps {
                    scheme: scheme.to_owned(),
                })
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebhookUrlError::UserInfo);
        }
        if url.fragment().is_some() {
            return Err(WebhookUrlError::Fragment);
        }
        match url.host() {
            None => return Err(WebhookUrlError::NoHost),
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.');
                let local = name == "localhost" || name.ends_with(".localhost");
                if local && !policy.allow_loopback {
                    return Err(WebhookUrlError::LocalName {
                        host: name.to_owned(),
                    });
                }
            }
            Some(Host::Ipv4(v4)) => policy
                .permits(IpAddr::V4(v4))
                .map_err(WebhookUrlError::Address)?,
            Some(Host::Ipv6(v6)) => policy
                .permits(IpAddr::V6(v6))
                .map_err(WebhookUrlError::Address)?,
        }
        if url.as_str().len() > Self::MAX_BYTES {
            return Err(too_long(url.as_str().len()));
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The host as the URL names it (a name, or an address literal without brackets).
    pub fn host(&self) -> Host<&str> {
        // Parsing refused URLs without a host.
        self.0.host().unwrap_or(Host::Domain(""))
    }

    /// The port to connect to: the URL's, or its scheme's default.
    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or(443)
    }

    /// Whether deliveries go over TLS (`https`), rather than plain `http` (tests only).
    pub fn is_https(&self) -> bool {
        self.0.scheme() == "https"
    }

    /// The path and query, what the request line carries.
    pub fn path_and_query(&self) -> &str {
        &self.0[url::Position::BeforePath..url::Position::AfterQuery]
    }
}

impl fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const STRICT: AddressPolicy = AddressPolicy {
        allow_loopback: false,
    };
    const LOOPBACK: AddressPolicy = AddressPolicy {
        allow_loopback: true,
    };

    #[test]
    fn an_https_url_is_kept_serialised_with_its_parts() {
        let url = WebhookUrl::parse("https://Hooks.Example.com:8443/in?shop=1", STRICT).unwrap();
        assert_eq!(url.as_str(), "https://hooks.example.com:8443/in?shop=1");
        assert_eq!(url.host(), Host::Domain("hooks.example.com"));
        assert_eq!(url.port(), 8443);
        assert_eq!(url.path_and_query(), "/in?shop=1");
        assert!(url.is_https());
        let default_port = WebhookUrl::parse("https://example.com", STRICT).unwrap();
        assert_eq!(default_port.port(), 443);
        assert_eq!(default_port.path_and_query(), "/");
    }

    #[test]
    fn other_schemes_are_refused_and_http_only_with_loopback_allowed() {
        for raw in [
            "http://example.com/",
            "ftp://example.com/",
            "file:///etc/passwd",
        ] {
            assert!(
                matches!(
                    WebhookUrl::parse(raw, STRICT),
                    Err(WebhookUrlError::NotHttps { .. })
                ),
                "{raw}"
            );
        }
        assert!(!WebhookUrl::parse("http://127.0.0.1:8080/", LOOPBACK)
            .unwrap()
            .is_https());
    }

    #[test]
    fn internal_address_literals_and_local_names_are_refused() {
        for raw in [
            "https://127.0.0.1/",
            "https://[::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://10.0.0.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://[fd00:ec2::254]/",
            "https://0x7f000001/",
        ] {
            assert!(
                matches!(
                    WebhookUrl::parse(raw, STRICT),
                    Err(WebhookUrlError::Address(_))
                ),
                "{raw}"
            );
        }
        for raw in ["https://localhost/", "https://api.localhost./x"] {
            assert!(
                matches!(
                    WebhookUrl::parse(raw, STRICT),
                    Err(WebhookUrlError::LocalName { .. })
                ),
                "{raw}"
            );
        }
        assert!(WebhookUrl::parse("https://localhost/", LOOPBACK).is_ok());
        assert!(WebhookUrl::parse("https://127.0.0.1/", LOOPBACK).is_ok());
        assert!(WebhookUrl::parse("https://10.0.0.1/", LOOPBACK).is_err());
    }

    #[test]
    fn user_info_fragments_spaces_and_relative_urls_are_refused() {
        assert_eq!(
            WebhookUrl::parse("https://user:pw@example.com/", STRICT),
            Err(WebhookUrlError::UserInfo)
        );
        assert_eq!(
            WebhookUrl::parse("https://example.com/#x", STRICT),
            Err(WebhookUrlError::Fragment)
        );
        assert!(matches!(
            WebhookUrl::parse(" https://example.com/", STRICT),
            Err(WebhookUrlError::Invalid { .. })
        ));
        assert!(matches!(
            WebhookUrl::parse("/hooks", STRICT),
            Err(WebhookUrlError::Invalid { .. })
        ));
    }

    #[test]
    fn a_url_over_the_limit_is_refused() {
        let raw = format!("https://example.com/{}", "a".repeat(WebhookUrl::MAX_BYTES));
        assert!(matches!(
            WebhookUrl::parse(&raw, STRICT),
            Err(WebhookUrlError::TooLong { .. })
        ));
    }
}
