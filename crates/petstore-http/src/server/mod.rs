//! The HTTP server: actix-web's `HttpServer` rebuilt from its parts (actix-server's workers and
//! actix-http's `HttpService`) so that every connection's I/O goes through [`HeadDeadline`],
//! and with the limits that keep one client from holding the service: a deadline for each
//! request head, the keep-alive time and a bound on open connections.

use std::fmt;
use std::net::TcpListener;
use std::time::Duration;

use actix_http::{HttpService, KeepAlive, Protocol, Request, Response};
use actix_server::Server;
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::body::MessageBody;
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;

use head_deadline::HeadDeadline;

pub(crate) mod drain;
mod head_deadline;

/// How long a connection whose response has been written gets to close after it is told to.
const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How the server runs and what it allows each client.
#[derive(Debug, Clone, Copy)]
pub struct ServerSettings {
    /// Worker threads, each serving its share of the connections.
    pub workers: usize,
    /// On a graceful stop, how long requests in flight may take to finish.
    pub shutdown_timeout: Duration,
    pub limits: ConnectionLimits,
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
    /// Most connections open at once across the workers. Each worker serves up to its share
    /// (this divided by the workers, at least one); further connections wait in the listen
    /// backlog until one closes.
    pub max_connections: usize,
}

impl ConnectionLimits {
    /// Each worker's share of [`max_connections`](Self::max_connections).
    pub fn per_worker(&self, workers: usize) -> usize {
        (self.max_connections / workers.max(1)).max(1)
    }
}

/// Serves the `App`s that `app` builds (one per worker) on `listener`, with signals left to the
/// caller: stop the server through its handle.
pub fn serve<F, I, S, B>(
    listener: TcpListener,
    settings: ServerSettings,
    app: F,
) -> std::io::Result<Server>
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
    let builder = Server::build()
        .workers(settings.workers)
        .disable_signals()
        .shutdown_timeout(settings.shutdown_timeout.as_secs())
        .max_concurrent_connections(limits.per_worker(settings.workers));
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
            .local_addr(address);
        let app = app()
            .into_factory()
            .map_err(|err| err.into().error_response());
        // Nothing in the app reads the configured host or address (no `url_for`, no
        // `connection_info`), and actix-web offers no public constructor for them.
        let http = http.finish(map_config(app, |()| AppConfig::default()));
        fn_service(move |io: TcpStream| {
            let peer = io.peer_addr().ok();
            let io = HeadDeadline::new(io, limits.head_timeout);
            std::future::ready(Ok((io, Protocol::Http1, peer)))
        })
        .and_then(http)
    })?;
    Ok(builder.run())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_worker_serves_its_share_and_at_least_one() {
        let limits = ConnectionLimits {
            head_timeout: Duration::from_secs(5),
            keep_alive: Duration::from_secs(5),
            max_connections: 4096,
        };
        assert_eq!(limits.per_worker(4), 1024);
        assert_eq!(limits.per_worker(3), 1365);
        let tiny = ConnectionLimits {
            max_connections: 1,
            ..limits
        };
        assert_eq!(tiny.per_worker(2), 1);
    }
}
