//! `petstore serve`: wires storage, the use cases and the HTTP adapter together and serves.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;

use actix_web::dev::{Server, ServerHandle};
use actix_web::HttpServer;
use petstore_application::{PetService, SystemClock};
use petstore_http::{ApiServers, HttpState, ServerUrl, DOCS_PATH};

use secrecy::ExposeSecret as _;

use crate::cli::ServeArgs;
use crate::{key_secret, AppError};

/// The service, bound and ready: built by [`Application::build`], served by
/// [`Application::run_until_stopped`]. `petstore serve` and the in-process tests both use it.
pub struct Application {
    address: SocketAddr,
    servers: ApiServers,
    server: Server,
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
        let secret = key_secret::resolve(&args.keys, &args.storage.data_dir)?;
        let repository = crate::storage::open_repository(&args.storage).await?;
        let service = PetService::new(repository, Arc::new(SystemClock));

        let bind_error = |source| AppError::Bind {
            address: args.bind,
            source,
        };
        let listener = TcpListener::bind(args.bind).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        // The default public URL is the address actually bound (port 0 becomes the real port).
        let servers = ApiServers::new(
            args.servers
                .public_url
                .clone()
                .unwrap_or_else(|| ServerUrl::for_address(address)),
            args.servers.staging_url.clone(),
        );
        let state = HttpState::new(service, secret.expose_secret())
            .with_servers(&servers)
            .with_body_timeout(args.body_timeout);
        let mut server = HttpServer::new(move || petstore_http::app(state.clone()))
            .listen(listener)
            .map_err(bind_error)?;
        if let Some(workers) = args.workers {
            server = server.workers(workers);
        }
        Ok(Self {
            address,
            servers,
            server: server.run(),
        })
    }

    /// Where the service listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops the server (gracefully or not) from anywhere.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until the server is stopped (a signal, or [`handle`](Self::handle)).
    pub async fn run_until_stopped(self) -> Result<(), AppError> {
        tracing::info!(address = %self.address, servers = ?self.servers, "serving");
        self.server.await.map_err(AppError::Serve)
    }
}

/// `petstore serve`.
pub async fn run(args: ServeArgs) -> Result<(), AppError> {
    let application = Application::build(&args).await?;
    let address = application.address();
    // stdout carries exactly what a person (or a test) needs to start using the service.
    println!("petstore listening on http://{address}/v1");
    println!("API documentation on http://{address}{DOCS_PATH}");
    println!(
        "issue an API key with: {}",
        key_command(&args.storage.data_dir)
    );
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
