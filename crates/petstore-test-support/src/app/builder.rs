//! How a [`TestApp`] is set up: its backend, its settings, its keys, and where it runs.

use clap::Parser as _;
use petstore_server::cli::{Cli, Command};

use super::{Server, TestApp};
use crate::backend::{test_storage, Backend, SERVER_WORKERS};
use crate::http::client;
use crate::in_process::InProcessServer;
use crate::process::{log_sink, petstore_binary, start_binary_logging_to};

/// The key secret of in-process servers unless a test sets one (a process generates a
/// development secret of its own and keeps it in its data directory).
pub(crate) const IN_PROCESS_KEY_SECRET: &str = "in-process-test-server-key-secret-0123456789";

/// A [`TestApp`] to be started: [`TestApp::builder`], then the settings, then
/// [`TestAppBuilder::spawn`].
#[must_use]
pub struct TestAppBuilder {
    backend: Backend,
    settings: Vec<(String, String)>,
    in_a_process: bool,
    keys: Vec<(String, Vec<String>)>,
    binary: Option<std::path::PathBuf>,
}

impl TestAppBuilder {
    pub(crate) fn new(backend: Backend) -> Self {
        Self {
            backend,
            settings: Vec::new(),
            in_a_process: false,
            keys: Vec::new(),
            binary: None,
        }
    }

    /// A setting, named by its environment variable (`PETSTORE_POOL_TIMEOUT`): a process gets it
    /// in its environment, as an operator would set it; an in-process server gets the `serve`
    /// option of the same name (`--pool-timeout`), which is how the CLI documents them as one.
    pub fn setting(mut self, name: &str, value: &str) -> Self {
        assert!(
            name.starts_with("PETSTORE_"),
            "{name} is not a petstore setting"
        );
        self.settings.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Runs the built `petstore` binary in a process of its own, for what only a process has:
    /// `kill -9` and restarts, settings read from the environment, its own memory and output.
    pub fn in_a_process(mut self) -> Self {
        self.in_a_process = true;
        self
    }

    /// Runs `binary` instead of the `petstore` Cargo built beside the running test (implies
    /// [`in_a_process`](Self::in_a_process)): the paired benchmark runs two builds side by side.
    pub fn binary(mut self, binary: std::path::PathBuf) -> Self {
        self.binary = Some(binary);
        self.in_a_process = true;
        self
    }

    /// Another key, issued at start-up as `petstore keys issue --name NAME ARGS` and read back
    /// with [`TestApp::key`]. (Every app also has [`TestApp::api_key`], a `write` key.)
    pub fn key(mut self, name: &str, args: &[&str]) -> Self {
        let args = args.iter().map(|arg| (*arg).to_owned()).collect();
        self.keys.push((name.to_owned(), args));
        self
    }

    /// Starts the service on a free port against a fresh database, and issues its keys.
    pub async fn spawn(self) -> TestApp {
        let data_dir = tempfile::tempdir().expect("temporary data directory");
        let (database_url, database) = test_storage(self.backend, data_dir.path());
        let binary = self
            .binary
            .unwrap_or_else(|| petstore_binary().to_path_buf());
        let (server, address, startup_key) = if self.in_a_process {
            let started = start_binary_logging_to(
                &binary,
                data_dir.path(),
                &database_url,
                &self.settings,
                log_sink(),
            );
            let server = Server::Process(started.child);
            (server, started.address, started.startup_key)
        } else {
            let dir = data_dir.path().to_str().expect("UTF-8 temporary directory");
            let (server, address) =
                InProcessServer::start(serve_args(&self.settings, &database_url, dir));
            (Server::InProcess(server), address, None)
        };
        let mut app = TestApp {
            backend: self.backend,
            address,
            api_key: String::new(),
            data_dir,
            database_url,
            client: client(),
            settings: self.settings,
            keys: Vec::new(),
            server,
            database,
            binary,
        };
        app.api_key = match startup_key {
            Some(key) => key,
            None => app.issue_key(&["--name", "tests"]).await,
        };
        for (name, args) in self.keys {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let key = app
                .issue_key(&[&["--name", &name][..], &args].concat())
                .await;
            app.keys.push((name, key));
        }
        app
    }
}

/// `petstore serve` for an in-process server, each setting given as its option.
fn serve_args(
    settings: &[(String, String)],
    database_url: &str,
    data_dir: &str,
) -> petstore_server::cli::ServeArgs {
    let workers = SERVER_WORKERS.to_string();
    let mut argv: Vec<String> = [
        "petstore",
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--workers",
        &workers,
        "--database-url",
        database_url,
        "--data-dir",
        data_dir,
    ]
    .map(str::to_owned)
    .to_vec();
    let is_set = |name: &str| settings.iter().any(|(set, _)| set == name);
    if !is_set("PETSTORE_KEY_SECRET") {
        argv.extend(["--key-secret".to_owned(), IN_PROCESS_KEY_SECRET.to_owned()]);
    }
    if !is_set("PETSTORE_ENV") {
        argv.extend(["--env".to_owned(), "development".to_owned()]);
    }
    for (name, value) in settings {
        argv.push(option_of(name));
        argv.push(value.clone());
    }
    match Cli::try_parse_from(&argv) {
        Ok(Cli {
            command: Command::Serve(args),
            ..
        }) => *args,
        Ok(_) => unreachable!("parsed `serve` as another command"),
        Err(error) => panic!("{argv:?} are not valid serve options: {error}"),
    }
}

/// The `serve` option that a setting's environment variable stands for:
/// `PETSTORE_POOL_TIMEOUT` -> `--pool-timeout`.
fn option_of(variable: &str) -> String {
    let name = variable
        .strip_prefix("PETSTORE_")
        .unwrap_or(variable)
        .to_ascii_lowercase()
        .replace('_', "-");
    format!("--{name}")
}

#[cfg(test)]
mod tests {
    use super::option_of;

    #[test]
    fn a_setting_is_the_option_of_the_same_name() {
        assert_eq!(option_of("PETSTORE_POOL_TIMEOUT"), "--pool-timeout");
        assert_eq!(option_of("PETSTORE_ENV"), "--env");
    }
}
