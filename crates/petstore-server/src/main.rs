//! The `petstore` binary: parses the command line, sets up logging and runs the command; the
//! wiring lives in the library (`lib.rs`).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use petstore_server::cli::{Cli, Command, KeysCommand};
use petstore_server::{keys, migrate, openapi, serve};
use tracing_subscriber::EnvFilter;

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
