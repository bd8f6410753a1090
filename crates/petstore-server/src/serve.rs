//! `petstore serve`: wires storage, the use cases and the HTTP adapter together and serves.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;

use actix_web::HttpServer;
use petstore_application::{PetService, SystemClock};
use petstore_http::{ApiServers, HttpState, ServerUrl, DOCS_PATH};

use crate::cli::ServeArgs;
use secrecy::ExposeSecret as _;

use crate::{key_secret, AppError};

pub async fn run(args: ServeArgs) -> Result<(), AppError> {
    // The secret is checked before the database so a misconfigured production start fails fast.
    let secret = key_secret::resolve(&args.keys, &args.storage.data_dir)?;
    let repository = crate::storage::open_repository(&args.storage).await?;
    let service = PetService::new(repository, Arc::new(SystemClock));

    let listener = TcpListener::bind(args.bind).map_err(|source| AppError::Bind {
        address: args.bind,
        source,
    })?;
    let address = listener.local_addr().map_err(|source| AppError::Bind {
        address: args.bind,
        source,
    })?;
    // The default public URL is the address actually bound (port 0 becomes the real port).
    let servers = ApiServers::new(
        args.servers
            .public_url
            .unwrap_or_else(|| ServerUrl::for_address(address)),
        args.servers.staging_url,
    );
    let state = HttpState::new(service, secret.expose_secret()).with_servers(&servers);
    let mut server = HttpServer::new(move || petstore_http::app(state.clone()))
        .listen(listener)
        .map_err(|source| AppError::Bind {
            address: args.bind,
            source,
        })?;
    if let Some(workers) = args.workers {
        server = server.workers(workers);
    }
    let server = server.run();

    // stdout carries exactly what a person (or a test) needs to start using the service.
    println!("petstore listening on http://{address}/v1");
    println!("API documentation on http://{address}{DOCS_PATH}");
    println!(
        "issue an API key with: {}",
        key_command(&args.storage.data_dir)
    );
    tracing::info!(%address, ?servers, "serving");
    server.await.map_err(AppError::Serve)
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
