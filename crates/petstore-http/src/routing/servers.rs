//! The `servers` of the OpenAPI document: where production and staging serve the API.
//!
//! The document's paths are relative to its servers (`/pets`, as in the spec), and the API is
//! served under `/v1`, so every server URL must end in `/v1`: then a tool that joins a server
//! URL and a path (Swagger UI, schemathesis, generated clients) reaches the real route.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use utoipa::openapi::server::{Server, ServerBuilder};

use crate::routing::paths::BASE_PATH;

/// An absolute `http(s)` URL ending in `/v1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{url}` is not a usable server URL: {reason}")]
pub struct ServerUrlError {
    url: String,
    reason: &'static str,
}

// Checked as text rather than with the `url` crate, whose normalising (lowercased hosts, an added
// `/`, percent-encoded `{`) would change what the operator configured and hide the `{...}`
// OpenAPI reads as a variable.
impl ServerUrl {
    /// Checks `raw` and appends `/v1` unless it already ends in it (trailing slashes ignored):
    /// `https://petstore.example.com` and `https://petstore.example.com/v1/` both become
    /// `https://petstore.example.com/v1`.
    pub fn parse(raw: &str) -> Result<Self, ServerUrlError> {
        let refuse = |reason| ServerUrlError {
            url: raw.to_owned(),
            reason,
        };
        let lower = raw.to_ascii_lowercase();
        let rest = ["http://", "https://"]
            .iter()
            .find_map(|scheme| lower.strip_prefix(scheme))
            .ok_or_else(|| refuse("it must start with http:// or https://"))?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(refuse("it has no host"));
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(refuse("it contains whitespace or control characters"));
        }
        if raw.contains(['?', '#']) {
            return Err(refuse("it must not have a query or a fragment"));
        }
        // OpenAPI reads `{...}` in a server URL as a variable, which this service never defines.
        if raw.contains(['{', '}']) {
            return Err(refuse("it must not contain `{` or `}`"));
        }
        let trimmed = raw.trim_end_matches('/');
        if trimmed.ends_with(BASE_PATH) {
            return Ok(Self(trimmed.to_owned()));
        }
        // `.../v2` is almost certainly another version's address, not a prefix for this one.
        let after_scheme = &trimmed[trimmed.find("://").map_or(0, |i| i + 3)..];
        let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
        let last = path.rsplit('/').next().unwrap_or_default();
        if last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|b| b.is_ascii_digit())
        {
            return Err(refuse(
                "it ends in another API version; this service serves /v1",
            ));
        }
        Ok(Self(format!("{trimmed}{BASE_PATH}")))
    }

    /// `http://{address}/v1`: what a server listening on `address` serves. An unspecified
    /// address (`0.0.0.0`, `::`) is not one a browser can use, so loopback stands in for it.
    pub fn for_address(address: SocketAddr) -> Self {
        let mut address = address;
        if address.ip().is_unspecified() {
            address.set_ip(match address {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        Self(format!("http://{address}{BASE_PATH}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ServerUrl {
    type Err = ServerUrlError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        Self::parse(raw)
    }
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Production and, optionally, staging: the document's `servers`, production first (tools use
/// the first server by default). The default (nothing configured) is the relative `/v1` alone:
/// the API on whichever host serves the document, as OpenAPI resolves a relative server URL
/// against the document's own URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiServers {
    production: Option<ServerUrl>,
    staging: Option<ServerUrl>,
}

impl ApiServers {
    pub fn new(production: ServerUrl, staging: Option<ServerUrl>) -> Self {
        Self {
            production: Some(production),
            staging,
        }
    }

    pub(crate) fn to_openapi(&self) -> Vec<Server> {
        let production = match &self.production {
            Some(url) => server(url.as_str(), "production"),
            None => server(BASE_PATH, "this server"),
        };
        let staging = self
            .staging
            .as_ref()
            .map(|url| server(url.as_str(), "staging"));
        std::iter::once(production).chain(staging).collect()
    }
}

fn server(url: &str, description: &str) -> Server {
    ServerBuilder::new()
        .url(url)
        .description(Some(description))
        .build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn server_urls_get_v1_once_and_bad_ones_are_refused() {
        for (raw, expected) in [
            (
                "https://petstore.example.com",
                "https://petstore.example.com/v1",
            ),
            (
                "https://petstore.example.com/",
                "https://petstore.example.com/v1",
            ),
            (
                "https://petstore.example.com/v1",
                "https://petstore.example.com/v1",
            ),
            (
                "https://petstore.example.com/v1/",
                "https://petstore.example.com/v1",
            ),
            ("http://10.0.0.5:8080/api", "http://10.0.0.5:8080/api/v1"),
            ("http://[::1]:8080", "http://[::1]:8080/v1"),
        ] {
            assert_eq!(ServerUrl::parse(raw).unwrap().as_str(), expected, "{raw}");
        }
        for raw in [
            "",
            "petstore.example.com",
            "ftp://petstore.example.com",
            "https://",
            "https:///v1",
            "https://petstore.example.com/v1?x=1",
            "https://petstore.example.com/#v1",
            "https://pet store.example.com",
            "https://{host}/v1",
            "https://petstore.example.com/v2",
        ] {
            assert!(ServerUrl::parse(raw).is_err(), "{raw} accepted");
        }
    }

    #[test]
    fn the_default_public_url_is_the_bound_address() {
        let at = |address: &str| ServerUrl::for_address(address.parse().unwrap()).to_string();
        assert_eq!(at("127.0.0.1:8080"), "http://127.0.0.1:8080/v1");
        assert_eq!(at("0.0.0.0:9000"), "http://127.0.0.1:9000/v1");
        assert_eq!(at("[::]:9000"), "http://[::1]:9000/v1");
    }
}
