//! The HTTP server: actix-web's `HttpServer` rebuilt from its parts (actix-server's workers and
//! actix-http's `HttpService`) so that every connection's I/O goes through [`HeadDeadline`] and
//! the connection ledger ([`Tracked`]), and with the limits that keep one client from holding the
//! service: a deadline for each request head, the keep-alive time, a bound on open connections
//! and a share of it for each client address, with idle connections closed first and every
//! connection past the bounds answered (`refusal.rs`) rather than left in the kernel's queue.

use std::fmt;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_http::{HttpService, KeepAlive, Protocol, Request, Response};
use actix_server::Server;
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::body::MessageBody;
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;

use connection::Tracked;
use drain::Connections;
use head_deadline::HeadDeadline;
use ledger::{ConnectionLedger, LedgerBounds};

use crate::security::client_address::TrustedProxies;

mod connection;
pub(crate) mod drain;
mod head_deadline;
mod ledger;
pub(crate) mod refusal;

/// How long a connection whose response has been written gets to close after it is told to.
const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Accepted connections beyond the bound and the refusal room, for each worker: those the
/// ledger has ended and that are still closing, so that actix-server never stops accepting
/// before the ledger's own bounds apply.
const CLOSING_ROOM_PER_WORKER: usize = 16;

/// How the server runs and what it allows each client.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Worker threads, each serving its share of the connections.
    pub workers: usize,
    /// On a graceful stop, how long requests in flight may take to finish.
    pub shutdown_timeout: Duration,
    pub limits: ConnectionLimits,
    /// Peers with no share of their own (each carries many clients).
    pub trusted_proxies: TrustedProxies,
    /// What the listener is called in the connection metrics (`api`, `metrics`).
    pub listener: &'static str,
}

/// What one connection may take of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From a request head's first byte to its end (for a connection's first request, from the
    /// connection's start); a slower connection is closed.
    pub head_timeout: Duration,
    /// How long an idle connection waits for its next request; zero closes each connection
    /// after its response.
    pub keep_alive: Duration,
    /// Most connections served at once across the workers. At the bound a new connection
    /// takes the place of the oldest idle one; with none idle it is refused.
    pub max_connections: usize,
    /// Most connections served at once from one peer address (a trusted proxy has no bound
    /// but the total); one more is refused.
    pub max_connections_per_client: usize,
}

impl ConnectionLimits {
    /// Refused connections held at once while their first request is answered: an eighth of
    /// the bound, at least 16. Past it the oldest that has not sent its request is closed.
    pub fn refusal_room(&self) -> usize {
        (self.max_connections / 8).max(16)
    }

    /// Sockets one of `workers` workers holds at most: its share of the bound and the refusal
    /// room, and a little room for connections being closed. actix-server stops accepting
    /// only past this, after the ledger has refused or ended what it must.
    pub fn accepted_per_worker(&self, workers: usize) -> usize {
        (self.max_connections + self.refusal_room()).div_ceil(workers.max(1))
            + CLOSING_ROOM_PER_WORKER
    }

    /// Sockets all `workers` hold at most: what the open-file limit must hold.
    pub fn accepted_at_most(&self, workers: usize) -> usize {
        self.accepted_per_worker(workers) * workers.max(1)
    }
}

/// Serves the `App`s that `app` builds (one per worker) on `listener`, with signals left to the
/// caller: stop the server through its handle. Also returns its [`Connections`], for the stop.
pub fn serve<F, I, S, B>(
    listener: TcpListener,
    settings: ServerSettings,
    app: F,
) -> std::io::Result<(Server, Connections)>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as actix_service::Service<Request>>::Future: 'static,
    B: MessageBody + 'static,
{
    let address = listener.local_addr()?;
    let limits = settings.limits;
    let ledger = Arc::new(ConnectionLedger::new(
        LedgerBounds {
            max_connections: limits.max_connections,
            per_client: limits.max_connections_per_client,
            refusal_room: limits.refusal_room(),
            trusted: settings.trusted_proxies,
        },
        settings.listener,
    ));
    let connections = Connections::new(Arc::clone(&ledger));
    let builder = Server::build()
        .workers(settings.workers)
        .disable_signals()
        .shutdown_timeout(settings.shutdown_timeout.as_secs())
        .max_concurrent_connections(limits.accepted_per_worker(settings.workers));
    let graceful_shutdown = builder.graceful_shutdown_signal();
    let name = format!("petstore-{address}");
    let builder = builder.listen(name, listener, move || {
        let shutdown = graceful_shutdown.clone();
        let http = HttpService::build()
            // Idle keep-alive connections close, and busy ones answer `Connection: close`, as
            // soon as a graceful stop starts.
            .graceful_shutdown_signal(move || {
                let shutdown = shutdown.clone();
                async move { shutdown.notified().await }
            })
            .keep_alive(KeepAlive::from(limits.keep_alive))
            // Also covers a connection that sends nothing at all.
            .client_request_timeout(limits.head_timeout)
            .client_disconnect_timeout(CLIENT_DISCONNECT_TIMEOUT)
            .local_addr(address)
            // Tells the app which connections to answer with a refusal (`refusal.rs`).
            .on_connect_ext(|io: &Tracked<TcpStream>, data| {
                if let Some(refusal) = io.refusal() {
                    data.insert(refusal);
                }
            });
        let app = app()
            .into_factory()
            .map_err(|err| err.into().error_response());
        // Nothing in the app reads the configured host or address (no `url_for`, no
        // `connection_info`), and actix-web offers no public constructor for them.
        let http = http.finish(map_config(app, |()| AppConfig::default()));
        let ledger = Arc::clone(&ledger);
        fn_service(move |io: TcpStream| {
            let peer = io.peer_addr().ok();
            let ticket = ledger.admit(peer.map(|peer| peer.ip()));
            let io = Tracked::new(HeadDeadline::new(io, limits.head_timeout), ticket);
            std::future::ready(Ok((io, Protocol::Http1, peer)))
        })
        .and_then(http)
    })?;
    Ok((builder.run(), connections))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_accept_the_bound_the_refusal_room_and_a_margin_between_them() {
        let limits = ConnectionLimits {
            head_timeout: Duration::from_secs(5),
            keep_alive: Duration::from_secs(5),
            max_connections: 4096,
            max_connections_per_client: 512,
        };
        assert_eq!(limits.refusal_room(), 512);
        assert_eq!(limits.accepted_per_worker(4), 1152 + 16);
        assert_eq!(limits.accepted_per_worker(3), 1536 + 16);
        assert_eq!(limits.accepted_at_most(2), 4096 + 512 + 32);
        let tiny = ConnectionLimits {
            max_connections: 1,
            ..limits
        };
        assert_eq!(tiny.refusal_room(), 16);
        assert_eq!(tiny.accepted_per_worker(2), 9 + 16);
    }
}
