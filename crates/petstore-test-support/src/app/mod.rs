//! A running service under test, and what a test does with it: requests with its key, keys of
//! its own, and for a process, signals and restarts.

use std::process::{Child, Output};

use awc::http::StatusCode;
use clap::Parser as _;
use petstore_server::cli::{Cli, Command, KeysCommand};
use petstore_test_database::TestDatabase;
use serde_json::Value;
use tempfile::TempDir;

use crate::backend::Backend;
use crate::http::send;
use crate::in_process::InProcessServer;
use crate::process::{issue_key_of, log_sink, run_petstore, start_binary_logging_to};
use builder::{TestAppBuilder, IN_PROCESS_KEY_SECRET};

pub mod builder;

/// A running service with its own data directory and database; stopped on drop.
pub struct TestApp {
    pub backend: Backend,
    /// `http://127.0.0.1:PORT` (no `/v1`).
    pub address: String,
    /// A `write` key (for a `memory:` server in a process of its own, the key it issued itself
    /// at start-up, a `store` key: no other can be issued to it).
    pub api_key: String,
    pub data_dir: TempDir,
    pub database_url: String,
    pub client: awc::Client,
    /// The settings it was started with (`PETSTORE_*` and their values).
    pub(crate) settings: Vec<(String, String)>,
    /// The keys asked for with [`TestAppBuilder::key`], by name.
    pub(crate) keys: Vec<(String, String)>,
    pub(crate) server: Server,
    pub(crate) database: Option<TestDatabase>,
    /// The `petstore` binary a server in a process of its own runs.
    pub(crate) binary: std::path::PathBuf,
}

/// Where a test's service runs.
pub(crate) enum Server {
    Process(Child),
    InProcess(InProcessServer),
}

impl TestApp {
    /// A service to be set up: settings, keys, in this process or not.
    pub fn builder(backend: Backend) -> TestAppBuilder {
        TestAppBuilder::new(backend)
    }

    /// The service in this process, on `backend`, as configured by default.
    pub async fn spawn(backend: Backend) -> Self {
        Self::builder(backend).spawn().await
    }

    /// The built binary in a process of its own, on `backend`, as configured by default.
    pub async fn spawn_process(backend: Backend) -> Self {
        Self::builder(backend).in_a_process().spawn().await
    }

    /// The key issued at start-up under `name` ([`TestAppBuilder::key`]).
    pub fn key(&self, name: &str) -> &str {
        self.keys
            .iter()
            .find(|(issued, _)| issued == name)
            .map(|(_, key)| key.as_str())
            .unwrap_or_else(|| panic!("no key named {name} was asked for"))
    }

    /// A new `store` key (the store's staff: approves and delivers orders, sees every one),
    /// named `staff`. A `memory:` server in a process of its own has one key only, its start-up
    /// key, which is one.
    pub async fn staff_key(&self) -> String {
        match (&self.server, self.database_url.as_str()) {
            (Server::Process(_), "memory:") => self.api_key.clone(),
            _ => {
                self.issue_key(&["--name", "staff", "--scope", "store"])
                    .await
            }
        }
    }

    /// `GET path` with `key` instead of [`api_key`](Self::api_key).
    pub fn get_as(&self, key: &str, path: &str) -> awc::ClientRequest {
        self.client.get(self.url(path)).bearer_auth(key)
    }

    /// `POST path` of JSON with `key` instead of [`api_key`](Self::api_key).
    pub fn post_json_as(&self, key: &str, path: &str) -> awc::ClientRequest {
        self.client
            .post(self.url(path))
            .bearer_auth(key)
            .insert_header(("Content-Type", "application/json"))
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub fn get(&self, path: &str) -> awc::ClientRequest {
        self.client.get(self.url(path)).bearer_auth(&self.api_key)
    }

    pub fn post_json(&self, path: &str) -> awc::ClientRequest {
        self.client
            .post(self.url(path))
            .bearer_auth(&self.api_key)
            .insert_header(("Content-Type", "application/json"))
    }

    /// Creates a pet through the API and returns the created body.
    pub async fn create_pet(&self, body: Value) -> Value {
        let response = send(self.post_json("/v1/pets"), Some(body.to_string())).await;
        assert_eq!(response.status, StatusCode::CREATED, "{:?}", response.body);
        response.json()
    }

    pub async fn list(&self, query: &str) -> Vec<Value> {
        let response = send(self.get(&format!("/v1/pets{query}")), None).await;
        assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
        response.json().as_array().expect("a bare array").clone()
    }

    /// The PostgreSQL database behind a `Backend::Postgres` app, for SQL the test runs itself.
    pub fn postgres(&self) -> &TestDatabase {
        self.database
            .as_ref()
            .expect("only a PostgreSQL-backed app has a PostgreSQL database")
    }

    /// Runs `sql` in the service's SQLite or PostgreSQL database, behind its back: rows as an
    /// older release or an operator left them.
    pub fn execute_sql(&self, sql: &str) {
        use diesel::connection::SimpleConnection as _;
        use diesel::{Connection as _, SqliteConnection};
        match self.backend {
            Backend::Postgres => self.postgres().execute(sql),
            Backend::Sqlite => {
                let path = self
                    .database_url
                    .strip_prefix("sqlite://")
                    .expect("a sqlite:// URL");
                let mut connection = SqliteConnection::establish(path)
                    .unwrap_or_else(|err| panic!("cannot open {path}: {err}"));
                // The service's own writer may hold the lock for a moment.
                connection
                    .batch_execute(&format!("PRAGMA busy_timeout = 5000; {sql}"))
                    .unwrap_or_else(|err| panic!("SQL failed: {err}\n{sql}"));
            }
            Backend::Memory => panic!("a memory: app has no database to run SQL in"),
        }
    }

    /// The secret this server signs and checks keys with.
    pub fn key_secret(&self) -> Vec<u8> {
        if let Some((_, secret)) = self
            .settings
            .iter()
            .find(|(n, _)| n == "PETSTORE_KEY_SECRET")
        {
            return secret.as_bytes().to_vec();
        }
        match &self.server {
            Server::InProcess(_) => IN_PROCESS_KEY_SECRET.as_bytes().to_vec(),
            // The development secret the process generated and keeps in its data directory.
            Server::Process(_) => {
                std::fs::read_to_string(self.data_dir.path().join("dev-key-secret"))
                    .expect("the server kept its development secret")
                    .trim()
                    .as_bytes()
                    .to_vec()
            }
        }
    }

    /// A key this server accepts at once, issued as `petstore keys issue ARGS` would: in process
    /// through the server's own issuer; for a process, by the command itself (the server looks
    /// a correctly signed key it does not know up in the registry on its first request).
    pub async fn issue_key(&self, args: &[&str]) -> String {
        match &self.server {
            Server::Process(_) => {
                issue_key_of(&self.binary, self.data_dir.path(), &self.cli_env(), args)
            }
            Server::InProcess(server) => {
                let argv = [&["petstore", "keys", "issue"][..], args].concat();
                let Command::Keys(KeysCommand::Issue(args)) = Cli::try_parse_from(argv)
                    .expect("valid keys issue arguments")
                    .command
                else {
                    unreachable!("parsed `keys issue` as another command");
                };
                server
                    .key_issuer
                    .issue(&args.name, args.scope, args.expires_in.duration())
                    .expect("issue a key")
                    .token
            }
        }
    }

    /// Runs `petstore keys ARGS` against this server's database.
    pub fn run_keys_command(&self, args: &[&str]) -> Output {
        run_petstore(
            self.data_dir.path(),
            &self.cli_env(),
            &[&["keys"], args].concat(),
        )
    }

    /// The environment of a CLI command run beside this server: its settings and database.
    fn cli_env(&self) -> Vec<(String, String)> {
        let mut env = self.settings.clone();
        env.push(("DATABASE_URL".to_owned(), self.database_url.clone()));
        env
    }
}

/// What only a server in a process of its own can do.
impl TestApp {
    fn process(&mut self) -> &mut Child {
        match &mut self.server {
            Server::Process(child) => child,
            Server::InProcess(_) => panic!("only an app started in_a_process has a process"),
        }
    }

    /// The server's process id, e.g. to read its memory use from `/proc`.
    pub fn server_pid(&self) -> u32 {
        match &self.server {
            Server::Process(child) => child.id(),
            Server::InProcess(_) => panic!("only an app started in_a_process has a process"),
        }
    }

    /// Kills the server without warning (SIGKILL) and starts a new one on the same data.
    pub fn kill_and_restart(&mut self) {
        self.process().kill().expect("kill the server");
        self.restart();
    }

    /// Sends the server SIGTERM (a graceful stop); call [`TestApp::restart`] afterwards.
    pub fn terminate(&self) {
        self.signal("-TERM");
    }

    /// Sends the server SIGKILL, e.g. from a task running next to the server's clients; call
    /// [`TestApp::restart`] afterwards.
    pub fn kill_9(&self) {
        self.signal("-9");
    }

    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([signal, &self.server_pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} failed: {status}");
    }

    /// Waits for the server process to end and returns how it ended.
    pub fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        self.process().wait().expect("reap the server")
    }

    /// Waits for the server to end (after [`TestApp::kill_9`] or [`TestApp::terminate`]) and
    /// starts a new one on the same data.
    pub fn restart(&mut self) {
        self.process().wait().expect("reap the server");
        let started = start_binary_logging_to(
            &self.binary,
            self.data_dir.path(),
            &self.database_url,
            &self.settings,
            log_sink(),
        );
        self.server = Server::Process(started.child);
        self.address = started.address;
        // A `memory:` server forgot its keys with everything else.
        if let Some(key) = started.startup_key {
            self.api_key = key;
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Server::Process(child) = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
