//! `petstore serve`: wires storage, the use cases and the HTTP adapter together and serves.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use petstore_application::{
    CategoryService, EventService, Idempotency, InventoryService, KeyDirectory, OrderService,
    PetService, SystemClock,
};
use petstore_domain::{IdempotencyRetention, KeyScope};
use petstore_http::{
    ApiServers, ConnectionLimits, Connections, HttpState, ServerSettings, ServerUrl, DOCS_PATH,
    METRICS_PATH,
};
use petstore_persistence::DatabaseUrl;
use secrecy::ExposeSecret as _;

use crate::banner::{StartupBanner, StartupKey};
use crate::cli::{Environment, ServeArgs};
use crate::keys::{self, IssuedKey, KeyIssuer, Refresher};
use crate::listen_backlog::{self, API_BACKLOG, METRICS_BACKLOG};
use crate::listener_close::{KeptListener, ListenerClose};
use crate::logging::LogFormat;
use crate::open_files::{self, FileBudget};
use crate::{key_secret, AppError};

/// Lifetime of the key a `memory:` server issues itself at start-up.
const STARTUP_KEY_LIFETIME: Duration = Duration::from_secs(90 * 86_400);

/// Connections the metrics port serves at once: scrapers, not clients.
const METRICS_MAX_CONNECTIONS: usize = 64;

/// The service, bound and ready: built by [`Application::build`], served by
/// [`Application::run_until_stopped`]. `petstore serve` and the in-process tests both use it.
pub struct Application {
    address: SocketAddr,
    metrics_address: Option<SocketAddr>,
    servers: ApiServers,
    limits: ConnectionLimits,
    server: Server,
    metrics_server: Option<Server>,
    shutting_down: Arc<AtomicBool>,
    drain_delay: Duration,
    listener_close: ListenerClose<Connections>,
    key_issuer: KeyIssuer,
    startup_key: Option<IssuedKey>,
    refresher: Refresher,
    delivery_worker: Option<crate::webhooks::worker::DeliveryWorker>,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl Application {
    /// Resolves the key secret, opens storage (migrating it), binds the listener and starts the
    /// HTTP workers. Port 0 picks a free port; [`address`](Self::address) tells which.
    pub async fn build(args: &ServeArgs) -> Result<Self, AppError> {
        // The secret is checked before the database so a misconfigured production start fails
        // fast.
        let secrets = key_secret::resolve(&args.keys, &args.storage.data_dir)?;
        crate::metrics::install();
        let storage = crate::storage::open_storage(&args.storage).await?;
        let registry = Arc::clone(&storage.keys);
        let directory = tokio::task::spawn_blocking(move || {
            KeyDirectory::load(registry, Arc::new(SystemClock))
        })
        .await
        .map_err(|err| AppError::Thread(std::io::Error::other(err)))?
        .map_err(AppError::KeyRegistry)?;
        let unbound = directory.unbound_usable();
        if unbound > 0 {
            tracing::warn!(
                keys = unbound,
                "{unbound} usable API key(s) were issued before tokens were bound: anyone with \
                 the key secret can mint another token for them; rotate them (`petstore keys \
                 list` marks them `unbound`; docs/api.md, Keys issued before tokens were bound)"
            );
        }
        let refresher = keys::spawn_refresher(directory.clone()).map_err(AppError::Thread)?;
        let idempotency = Idempotency::new(
            storage.idempotency,
            Arc::new(SystemClock),
            IdempotencyRetention::new(args.idempotency_ttl),
        );
        let service = PetService::new(storage.pets, Arc::new(SystemClock));
        let orders = OrderService::new(storage.orders, Arc::new(SystemClock))
            .with_open_order_limit(args.max_open_orders_per_key);
        let categories = CategoryService::new(storage.categories, Arc::new(SystemClock));
        let inventory = InventoryService::new(storage.inventory, Arc::new(SystemClock));
        let events = EventService::new(
            Arc::clone(&storage.events),
            Arc::new(SystemClock),
            args.event_retention,
        );
        let exporter = crate::metrics::exporter(storage.pool_metrics);

        let bind_error = |source| AppError::Bind {
            address: args.bind,
            source,
        };
        let listener = listen_backlog::bind(args.bind, API_BACKLOG).map_err(bind_error)?;
        listen_backlog::warn_if_capped();
        let address = listener.local_addr().map_err(bind_error)?;
        // The default public URL is the address actually bound (port 0 becomes the real port).
        let servers = ApiServers::new(
            args.servers
                .public_url
                .clone()
                .unwrap_or_else(|| ServerUrl::for_address(address)),
            args.servers.staging_url.clone(),
        );
        let previous: Vec<&[u8]> = secrets
            .previous
            .iter()
            .map(|secret| secret.expose_secret())
            .collect();
        let webhooks = crate::webhooks::start(
            &args.webhooks,
            args.keys.environment == Environment::Production,
            crate::webhooks::WebhookStorage {
                endpoints: storage.webhooks,
                deliveries: storage.deliveries,
                feed: storage.events,
            },
            secrets.current.expose_secret(),
            &previous,
        )?;
        let state = HttpState::new(
            service,
            directory.clone(),
            secrets.current.expose_secret(),
            &previous,
        )
        .with_servers(&servers)
        .with_body_timeout(args.body_timeout)
        .with_if_match_required(args.require_if_match)
        .with_cors(args.cors_origins.clone())
        .with_orders(orders)
        .with_inventory(inventory)
        .with_categories(categories)
        .with_events(events.clone())
        .with_webhooks(webhooks.service, args.webhooks.address_policy())
        .with_idempotency(idempotency.clone());
        crate::idempotency_purge::spawn(idempotency);
        crate::events_purge::spawn(events, webhooks.deliveries);
        let state = match args.rate_limit {
            Some(limit) => state.with_rate_limit(limit),
            None => state,
        };
        let state = match args.client_rate_limit {
            Some(limit) => state.with_client_rate_limit(limit),
            None => state,
        }
        .with_trusted_proxies(args.trusted_proxies.clone(), args.client_address_header);
        let shutting_down = state.shutdown_flag();
        let workers = args.workers.unwrap_or_else(default_workers);
        let limits = connection_limits(args, workers);
        // `/metrics` on the API's port, or on an address of its own (then only there). In
        // production it is never on the API's port: it names refusal reasons and the build to
        // whoever asks, so without a metrics address of its own it is not served at all.
        let (state, metrics_server, metrics_address) = match args.metrics_bind {
            None if args.keys.environment == Environment::Production => {
                tracing::warn!(
                    "production: /metrics is not served on the API's address; set \
                     PETSTORE_METRICS_BIND (e.g. 0.0.0.0:9090) to scrape it"
                );
                (state, None, None)
            }
            None => (state.with_metrics(exporter), None, None),
            Some(metrics_bind) => {
                let metrics_state = state.clone().with_metrics(exporter);
                let metrics_error = |source| AppError::Bind {
                    address: metrics_bind,
                    source,
                };
                let listener =
                    listen_backlog::bind(metrics_bind, METRICS_BACKLOG).map_err(metrics_error)?;
                let metrics_address = listener.local_addr().map_err(metrics_error)?;
                let settings = ServerSettings {
                    workers: 1,
                    shutdown_timeout: Duration::from_secs(1),
                    limits: ConnectionLimits {
                        max_connections: METRICS_MAX_CONNECTIONS,
                        max_connections_per_client: METRICS_MAX_CONNECTIONS,
                        ..limits
                    },
                    trusted_proxies: args.trusted_proxies.clone(),
                    listener: "metrics",
                };
                let (server, _) = petstore_http::serve(listener, settings, move || {
                    petstore_http::metrics_app(metrics_state.clone())
                })
                .map_err(metrics_error)?;
                (state, Some(server), Some(metrics_address))
            }
        };
        let key_issuer = KeyIssuer::new(directory, Arc::new(secrets.current));
        // No command can reach a registry that lives in this process: it issues the first key,
        // and the only one, so a `store` key (which may do everything), or orders could never
        // be approved.
        let startup_key = match args.storage.database_url()? {
            DatabaseUrl::Memory => {
                Some(key_issuer.issue("startup", KeyScope::Store, Some(STARTUP_KEY_LIFETIME))?)
            }
            DatabaseUrl::Sqlite(_) | DatabaseUrl::Postgres(_) => None,
        };
        // Signals are handled in `run_until_stopped`, so that readiness fails the moment a stop
        // is asked for.
        let settings = ServerSettings {
            workers,
            shutdown_timeout: args.shutdown_timeout,
            limits,
            trusted_proxies: args.trusted_proxies.clone(),
            listener: "api",
        };
        let kept_listener = KeptListener::keep(&listener).map_err(bind_error)?;
        let (server, connections) = petstore_http::serve(listener, settings, move || {
            petstore_http::app(state.clone())
        })
        .map_err(bind_error)?;
        let listener_close = kept_listener.watching(connections, args.shutdown_timeout);
        Ok(Self {
            address,
            metrics_address,
            servers,
            limits,
            server,
            metrics_server,
            shutting_down,
            drain_delay: args.drain_delay,
            listener_close,
            key_issuer,
            startup_key,
            refresher,
            delivery_worker: webhooks.worker,
        })
    }

    /// Issues keys this server knows at once (the `keys issue` command reaches only a
    /// database's registry; this also reaches a `memory:` one).
    pub fn key_issuer(&self) -> KeyIssuer {
        self.key_issuer.clone()
    }

    /// The key a `memory:` server issued itself at start-up.
    pub fn startup_key(&self) -> Option<&IssuedKey> {
        self.startup_key.as_ref()
    }

    /// Where the service listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Where `/metrics` is served when it has an address of its own.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_address
    }

    /// Stops the server (gracefully or not) from anywhere.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until the server is stopped: by SIGTERM or SIGINT, gracefully (`/readyz` fails at
    /// once and every answer closes its connection; after the drain delay no new connections
    /// are completed, those already completed are taken and answered, then the listener closes
    /// and requests in flight finish within the shutdown timeout, creates waiting for their
    /// commit included), or through [`handle`](Self::handle).
    pub async fn run_until_stopped(self) -> Result<(), AppError> {
        tracing::info!(
            address = %self.address,
            servers = ?self.servers,
            max_connections = self.limits.max_connections,
            max_connections_per_client = self.limits.max_connections_per_client,
            head_timeout = ?self.limits.head_timeout,
            keep_alive = ?self.limits.keep_alive,
            "serving"
        );
        let handle = self.server.handle();
        let metrics_handle = self.metrics_server.as_ref().map(Server::handle);
        let shutting_down = Arc::clone(&self.shutting_down);
        let drain_delay = self.drain_delay;
        let listener_close = self.listener_close;
        actix_web::rt::spawn(async move {
            let signal = stop_signal().await;
            shutting_down.store(true, Ordering::Relaxed);
            // Still serving, so that requests a balancer sends before it sees the 503 of
            // `/readyz` are answered rather than refused. A second signal cuts the wait short.
            tracing::info!(signal, ?drain_delay, "draining: /readyz answers 503");
            tokio::select! {
                () = actix_web::rt::time::sleep(drain_delay) => {}
                signal = stop_signal() => tracing::info!(signal, "drain cut short"),
            }
            // Closing the listener would reset the connections waiting in its accept queue.
            tracing::info!("stopping: no new connections; answering those already completed");
            tokio::select! {
                () = listener_close.wait_until_all_answered() => {}
                signal = stop_signal() => tracing::info!(signal, "stop hurried"),
            }
            tracing::info!("stopping: closing the listener; finishing the requests in flight");
            handle.stop(true).await;
            if let Some(metrics_handle) = metrics_handle {
                metrics_handle.stop(true).await;
            }
        });
        if let Some(metrics_server) = self.metrics_server {
            actix_web::rt::spawn(metrics_server);
        }
        let served = self.server.await.map_err(AppError::Serve);
        // Stops refreshing keys (writing their last uses) only once no request can need them.
        drop(self.refresher);
        // Attempts in flight finish (each within its deadline); undelivered ones wait in
        // storage for the next start or another instance.
        drop(self.delivery_worker);
        tracing::info!("stopped");
        served
    }
}

/// One worker per CPU, as actix-web's own server has.
fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
}

/// The configured limits, with the connections bound lowered if the open-file limit cannot
/// hold it and the connections the server accepts beyond it (refused ones being answered,
/// ended ones closing, the metrics port's).
fn connection_limits(args: &ServeArgs, workers: usize) -> ConnectionLimits {
    let limits = |max_connections: usize| ConnectionLimits {
        head_timeout: args.head_timeout,
        keep_alive: args.keep_alive,
        max_connections,
        max_connections_per_client: args.connections_per_client(max_connections),
    };
    let configured = limits(args.max_connections as usize);
    let metrics_connections = match args.metrics_bind {
        Some(_) => ConnectionLimits {
            max_connections: METRICS_MAX_CONNECTIONS,
            ..configured
        }
        .accepted_at_most(1),
        None => 0,
    };
    let beyond_the_bound = configured.accepted_at_most(workers) - configured.max_connections;
    let max_connections = open_files::fit(FileBudget {
        connections: u64::from(args.max_connections),
        other_connections: (metrics_connections + beyond_the_bound) as u64,
        database_connections: u64::from(args.storage.pool_size),
    });
    limits(usize::try_from(max_connections).unwrap_or(usize::MAX))
}

/// Waits for SIGTERM or SIGINT (Ctrl-C) and says which came.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for SIGTERM and SIGINT; stop the server by killing it");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    }
}

/// `petstore serve`, its start-up lines on stdout in the log's `format`.
pub async fn run(args: ServeArgs, format: LogFormat) -> Result<(), AppError> {
    let application = Application::build(&args).await?;
    let address = application.address();
    // stdout carries exactly what a person (or a test) needs to start using the service.
    StartupBanner {
        api_url: format!("http://{address}/v1"),
        public_url: args
            .servers
            .public_url
            .as_ref()
            .map(|url| url.as_str().to_owned()),
        docs_url: format!("http://{address}{DOCS_PATH}"),
        metrics_url: application
            .metrics_address()
            .map(|metrics_address| format!("http://{metrics_address}{METRICS_PATH}")),
        key: match application.startup_key() {
            Some(issued) => StartupKey::Issued(issued.token.clone()),
            None => StartupKey::IssueWith(key_command(&args.storage.data_dir)),
        },
    }
    .print(format);
    application.run_until_stopped().await
}

/// The command that issues a key this server accepts, spelled for the binary that is running.
fn key_command(data_dir: &Path) -> String {
    let program = std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| "petstore".to_owned());
    let mut command = format!("{program} keys issue --name me");
    if data_dir != Path::new("data") && std::env::var_os("PETSTORE_DATA_DIR").is_none() {
        command.push_str(&format!(" --data-dir {}", data_dir.display()));
    }
    command
}
