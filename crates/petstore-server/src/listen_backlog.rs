//! The API's listening socket, bound here rather than by `TcpListener::bind` so that its listen
//! backlog is chosen: the queue of connections the kernel has completed and the server has not
//! taken yet. The server takes every connection as it comes (the connection ledger answers those
//! past its bounds), so the queue only has to hold a burst, such as a fleet of clients
//! reconnecting at once; a connection that finds it full is dropped by the kernel unseen, and
//! its client retries a second or more later.
//!
//! The kernel caps the backlog at `net.core.somaxconn`; start-up warns when that is lower.

use std::io;
use std::net::{SocketAddr, TcpListener};

use rustix::net::{sockopt, AddressFamily, SocketFlags, SocketType};

/// The API's listen backlog: as many connections as the default bound serves, and Linux's
/// default `net.core.somaxconn` since 5.4.
pub const API_BACKLOG: u32 = 4096;

/// The metrics address's backlog: scrapers and probes, a few at a time.
pub const METRICS_BACKLOG: u32 = 128;

/// Where Linux says what it caps a listen backlog at.
const SOMAXCONN: &str = "/proc/sys/net/core/somaxconn";

/// A listener on `address` with a listen backlog of `backlog` (port 0 picks a free port).
/// Addresses are reused at once after a restart, as `TcpListener::bind` does.
pub fn bind(address: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let family = match address {
        SocketAddr::V4(_) => AddressFamily::INET,
        SocketAddr::V6(_) => AddressFamily::INET6,
    };
    let socket = rustix::net::socket_with(family, SocketType::STREAM, SocketFlags::CLOEXEC, None)?;
    sockopt::set_socket_reuseaddr(&socket, true)?;
    rustix::net::bind(&socket, &address)?;
    rustix::net::listen(&socket, i32::try_from(backlog).unwrap_or(i32::MAX))?;
    Ok(TcpListener::from(socket))
}

/// Warns when the kernel caps the API's backlog below [`API_BACKLOG`].
pub fn warn_if_capped() {
    let Some(cap) = std::fs::read_to_string(SOMAXCONN)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
    else {
        return;
    };
    if let Some(message) = capped(cap) {
        tracing::warn!(somaxconn = cap, backlog = API_BACKLOG, "{message}");
    }
}

/// What to say when the kernel's cap is `cap`.
fn capped(cap: u32) -> Option<String> {
    (cap < API_BACKLOG).then(|| {
        format!(
            "the kernel caps the listen backlog at {cap} (net.core.somaxconn), below the \
             {API_BACKLOG} the server asks for: a burst of new connections beyond it is dropped \
             unseen and its clients retry seconds later; raise net.core.somaxconn to \
             {API_BACKLOG}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_accepts_connections_and_tells_its_port() {
        let listener = bind("127.0.0.1:0".parse().unwrap(), API_BACKLOG).unwrap();
        let address = listener.local_addr().unwrap();
        assert_ne!(address.port(), 0);
        let _client = std::net::TcpStream::connect(address).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert!(peer.ip().is_loopback());
    }

    #[test]
    fn an_address_in_use_is_an_error() {
        let first = bind("127.0.0.1:0".parse().unwrap(), METRICS_BACKLOG).unwrap();
        let taken = first.local_addr().unwrap();
        assert!(bind(taken, METRICS_BACKLOG).is_err());
    }

    #[test]
    fn a_cap_below_the_backlog_is_named_with_what_to_raise() {
        assert_eq!(capped(API_BACKLOG), None);
        assert_eq!(capped(65_535), None);
        let message = capped(128).expect("a warning");
        assert!(message.contains("at 128"), "{message}");
        assert!(message.contains("net.core.somaxconn to 4096"), "{message}");
    }
}
