//! The `petstore` binary: parses the command line, sets up logging and runs the command; the
//! wiring lives in the library (`lib.rs`).

use std::process::ExitCode;

use clap::Parser;
use petstore_server::cli::{Cli, Command, KeysCommand};
use petstore_server::{data_moves, healthcheck, keys, logging, migrate, openapi, serve};

/// Every request allocates and frees many small values (the parsed body, headers, the log
/// line) across the workers' threads: mimalloc serves them from per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = match logging::LogFormat::from_env() {
        Ok(format) => format,
        Err(err) => {
            eprintln!("petstore: error: {err}");
            return ExitCode::FAILURE;
        }
    };
    let logs = logging::init(format);
    let result = match cli.command {
        Command::Serve(args) => actix_web::rt::System::new().block_on(serve::run(*args, format)),
        Command::Migrate(args) => actix_web::rt::System::new().block_on(migrate::run(args)),
        Command::Keys(KeysCommand::Issue(args)) => keys::issue(args),
        Command::Keys(KeysCommand::List(args)) => keys::list(args),
        Command::Keys(KeysCommand::Revoke(args)) => keys::revoke(args),
        Command::Keys(KeysCommand::Secret) => keys::print_secret(),
        Command::Openapi(args) => openapi::print(args),
        Command::Healthcheck(args) => healthcheck::run(&args),
        Command::Backup(args) => data_moves::backup(args),
        Command::Restore(args) => data_moves::restore(args),
        Command::Export(args) => data_moves::export(args),
        Command::Import(args) => data_moves::import(args),
    };
    if let (Err(err), logging::LogFormat::Json) = (&result, format) {
        // With JSON logs every line of the stream is JSON, the last word too.
        tracing::error!("petstore: error: {err}");
    }
    // Every log line is written out before the last word.
    drop(logs);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if format == logging::LogFormat::Text {
                eprintln!("petstore: error: {err}");
            }
            ExitCode::FAILURE
        }
    }
}
