//! The `petstore` binary: the composition root. It reads configuration, picks the adapters and
//! hands them to each other; no business rule lives here.

mod cli;
mod key_secret;
mod keys;
mod migrate;
mod openapi;
mod serve;
mod storage;

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use cli::{Cli, Command, KeysCommand};

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
    IssueKey(#[from] petstore_http::KeyError),
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let logs = init_logging();
    let result = match cli.command {
        Command::Serve(args) => actix_web::rt::System::new().block_on(serve::run(args)),
        Command::Migrate(args) => actix_web::rt::System::new().block_on(migrate::run(args)),
        Command::Keys(KeysCommand::Issue(args)) => keys::issue(args),
        Command::Openapi(args) => openapi::print(args),
    };
    // Every log line is written out before the last word.
    drop(logs);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("petstore: error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr (stdout is reserved for what commands print), at `RUST_LOG` or `info`.
///
/// Request threads only format their lines: a logging thread writes them, many lines per
/// `write`, so no request waits on stderr's lock or a system call (one line per request cost
/// 15 % of the server's time when written in place; `docs/benchmarks.md`). Should stderr stop
/// draining (a stuck log collector), lines beyond a large buffer are dropped rather than
/// stalling requests. Dropping the returned guard writes out what is buffered.
fn init_logging() -> tracing_appender::non_blocking::WorkerGuard {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .thread_name("petstore-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    guard
}
