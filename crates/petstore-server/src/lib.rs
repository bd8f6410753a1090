//! The composition root of petstore, as a library: configuration (`cli`), wiring of the adapters
//! ([`Application`]) and the commands of the `petstore` binary. Tests start the service
//! in-process through [`Application::build`]; the binary (`main.rs`) only parses the command
//! line, sets up logging and runs a command.

mod banner;
pub mod cli;
pub mod data_moves;
mod durations;
mod events_purge;
pub mod healthcheck;
mod idempotency_purge;
mod key_secret;
pub mod keys;
mod listen_backlog;
mod listener_close;
pub mod logging;
pub mod metrics;
pub mod migrate;
mod open_files;
pub mod openapi;
mod process_metrics;
mod random;
pub mod serve;
mod storage;
pub mod webhooks;

use std::net::SocketAddr;

pub use serve::Application;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    KeySecret(#[from] key_secret::KeySecretError),
    #[error(transparent)]
    Storage(#[from] petstore_persistence::StorageError),
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server stopped with an error: {0}")]
    Serve(#[source] std::io::Error),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    IssueKey(#[from] keys::IssueError),
    #[error("the key registry failed: {0}")]
    KeyRegistry(#[source] petstore_application::RepositoryError),
    #[error("cannot start a thread: {0}")]
    Thread(#[source] std::io::Error),
    #[error("unhealthy: {0}")]
    Unhealthy(String),
    #[error(transparent)]
    DataMove(#[from] data_moves::DataMoveError),
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
}
