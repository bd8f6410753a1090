//! How an attempt learns a host name's addresses: once per attempt, from the system's resolver,
//! or from the settings' table of names for the names it lists (tests).

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};

use async_trait::async_trait;

#[async_trait]
pub(crate) trait Resolve: Send + Sync + 'static {
    /// The addresses `name` resolves to, each with `port`.
    async fn resolve(&self, name: &str, port: u16) -> io::Result<Vec<SocketAddr>>;
}

/// The system's resolver (`getaddrinfo`), except for the names of the table.
pub(crate) struct SystemResolver {
    table: HashMap<String, IpAddr>,
}

impl SystemResolver {
    pub(crate) fn new(hosts: &[(String, IpAddr)]) -> Self {
        Self {
            table: hosts
                .iter()
                .map(|(name, address)| (normalised(name), *address))
                .collect(),
        }
    }
}

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, name: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        if let Some(&address) = self.table.get(&normalised(name)) {
            return Ok(vec![SocketAddr::new(address, port)]);
        }
        Ok(tokio::net::lookup_host((name, port)).await?.collect())
    }
}

/// Host names are compared without case and without the final dot of a fully qualified name.
fn normalised(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_name_of_the_table_resolves_to_its_address_whatever_its_case() {
        let resolver =
            SystemResolver::new(&[("hooks.test".to_owned(), "10.0.0.1".parse().unwrap())]);
        for name in ["hooks.test", "Hooks.TEST", "hooks.test."] {
            assert_eq!(
                resolver.resolve(name, 8443).await.unwrap(),
                vec!["10.0.0.1:8443".parse().unwrap()],
                "{name}"
            );
        }
    }
}
