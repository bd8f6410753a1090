//! The built `petstore` binary as tests run it: a server in a process of its own, or one CLI
//! command, always with the test's own data directory and a scrubbed environment.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use crate::backend::SERVER_WORKERS;
use crate::startup_line::StartupLine;

/// The `petstore` binary Cargo built beside the running test or benchmark: a test executable
/// lives in `target/PROFILE/deps/`, the binaries of its package in `target/PROFILE/`. (Only the
/// package's own test targets see `CARGO_BIN_EXE_petstore`; this crate is not one of them.)
/// `PETSTORE_BINARY` names another build instead: `make bench` measures the release build
/// optimised with the committed profile (target/pgo/petstore).
pub fn petstore_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(binary) = std::env::var_os("PETSTORE_BINARY") {
            return PathBuf::from(binary);
        }
        let executable = std::env::current_exe().expect("the test executable's path");
        let profile_dir = executable
            .parent()
            .and_then(Path::parent)
            .expect("the test executable is in target/PROFILE/deps");
        let binary = profile_dir.join(format!("petstore{}", std::env::consts::EXE_SUFFIX));
        assert!(
            binary.is_file(),
            "no petstore binary at {}: run the suites with `cargo test -p petstore-server` (or \
             `make test`), which builds it",
            binary.display()
        );
        binary
    })
}

pub(crate) fn log_sink() -> Stdio {
    if std::env::var_os("TEST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// The configuration every test process shares: the test's own directory, database and a fresh
/// environment (nothing from the developer's shell leaks in).
pub fn petstore(data_dir: &Path, extra_env: &[(String, String)]) -> std::process::Command {
    petstore_at(petstore_binary(), data_dir, extra_env)
}

/// [`petstore`] of another build of the binary (the paired benchmark's baseline).
pub(crate) fn petstore_at(
    binary: &Path,
    data_dir: &Path,
    extra_env: &[(String, String)],
) -> std::process::Command {
    let mut command = std::process::Command::new(binary);
    without_petstore_settings(&mut command);
    command
        .env("PETSTORE_DATA_DIR", data_dir)
        .env("RUST_LOG", "info")
        .envs(extra_env.iter().map(|(k, v)| (k, v)));
    command
}

/// Removes from `command`'s environment every setting petstore reads (`DATABASE_URL` and, by
/// their prefix, all `PETSTORE_*`, including any added later), so nothing from the developer's
/// shell reaches a test's server or CLI.
pub fn without_petstore_settings(command: &mut std::process::Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("PETSTORE_") || name == "DATABASE_URL" {
            command.env_remove(name.as_ref());
        }
    }
}

/// The error a failed command ended with, from its stderr in either log format: the last line's
/// `message` with JSON logs (the default when stderr is not a terminal), or the
/// `petstore: error: ...` line with text logs.
pub fn final_error(stderr: &str) -> Option<String> {
    let last = stderr.lines().rev().find(|line| !line.trim().is_empty())?;
    let message = match serde_json::from_str::<serde_json::Value>(last) {
        Ok(line) if line["level"] == "ERROR" => line["message"].as_str()?.to_owned(),
        Ok(_) => return None,
        Err(_) => last.to_owned(),
    };
    message.starts_with("petstore: error: ").then_some(message)
}

/// Starts `petstore serve` on a free port and waits until it says where it listens.
pub fn start_server(
    data_dir: &Path,
    database_url: &str,
    extra_env: &[(String, String)],
) -> (Child, String) {
    let started = start_server_logging_to(data_dir, database_url, extra_env, log_sink());
    (started.child, started.address)
}

/// A `petstore serve` process that said where it listens.
pub struct StartedServer {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub address: String,
    /// The key a `memory:` server prints at start-up.
    pub startup_key: Option<String>,
    /// `http://127.0.0.1:PORT` of `/metrics` when it has an address of its own.
    pub metrics_address: Option<String>,
}

/// [`start_server`], its log (stderr) going to `log`, with the start-up key if it printed one.
pub fn start_server_logging_to(
    data_dir: &Path,
    database_url: &str,
    extra_env: &[(String, String)],
    log: Stdio,
) -> StartedServer {
    start_binary_logging_to(petstore_binary(), data_dir, database_url, extra_env, log)
}

/// [`start_server_logging_to`] of another build of the binary.
pub(crate) fn start_binary_logging_to(
    binary: &Path,
    data_dir: &Path,
    database_url: &str,
    extra_env: &[(String, String)],
    log: Stdio,
) -> StartedServer {
    let mut child = petstore_at(binary, data_dir, extra_env)
        .args(["serve", "--bind", "127.0.0.1:0", "--workers"])
        .arg(SERVER_WORKERS.to_string())
        .env("DATABASE_URL", database_url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("start petstore serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        // Keep draining stdout for the server's whole life so it never blocks on a full pipe.
        // The key line (or the hint to issue one) is the last of the start-up lines.
        let (mut address, mut metrics) = (None, None);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            match StartupLine::parse(&line) {
                StartupLine::Listening(listening) => address = Some(listening),
                StartupLine::Metrics(listening) => metrics = Some(listening),
                StartupLine::Key(key) => {
                    let _ = sender.send((address.clone(), metrics.clone(), Some(key)));
                }
                StartupLine::IssueKeyHint => {
                    let _ = sender.send((address.clone(), metrics.clone(), None));
                }
                StartupLine::Other => {}
            }
        }
    });
    match receiver.recv_timeout(Duration::from_secs(60)) {
        Ok((Some(address), metrics_address, startup_key)) => StartedServer {
            child,
            address,
            startup_key,
            metrics_address,
        },
        Ok((None, _, _)) | Err(_) => {
            let _ = child.kill();
            let status = child.wait().expect("reap the server");
            panic!("petstore serve did not start ({status}); rerun with TEST_LOG=1 to see why");
        }
    }
}

/// Runs `petstore keys issue ARGS` and returns the key it printed.
pub fn issue_key(data_dir: &Path, extra_env: &[(String, String)], args: &[&str]) -> String {
    issue_key_of(petstore_binary(), data_dir, extra_env, args)
}

/// [`issue_key`] by another build of the binary.
pub(crate) fn issue_key_of(
    binary: &Path,
    data_dir: &Path,
    extra_env: &[(String, String)],
    args: &[&str],
) -> String {
    let output = petstore_at(binary, data_dir, extra_env)
        .args([&["keys", "issue"], args].concat())
        .stdin(Stdio::null())
        .output()
        .expect("run petstore");
    assert!(output.status.success(), "keys issue failed: {output:?}");
    let stdout = String::from_utf8(output.stdout).expect("key is UTF-8");
    let key = stdout.trim_end_matches('\n');
    assert!(
        !key.contains('\n'),
        "stdout holds more than the key: {stdout:?}"
    );
    key.to_owned()
}

pub fn run_petstore(data_dir: &Path, extra_env: &[(String, String)], args: &[&str]) -> Output {
    petstore(data_dir, extra_env)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run petstore")
}
