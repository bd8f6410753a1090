//! Starts the service on a free port against a fresh database, and talks to it over real HTTP.
//!
//! - [`TestApp::spawn`]: the library's `Application`, in this process (on a thread with its own
//!   runtime): what most tests need, and fast.
//! - [`TestApp::spawn_process`] / [`TestApp::spawn_with_env`]: the built `petstore` binary in a
//!   process of its own, for what only a process has: `kill -9`, configuration from the
//!   environment, its own memory figures.
//!
//! Set `TEST_LOG=1` to see the servers' logs.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use awc::http::header::HeaderMap;
use awc::http::StatusCode;
use clap::Parser as _;
use petstore_persistence::PoolSettings;
use petstore_server::cli::{Cli, Command, KeysCommand, ServeArgs};
use petstore_server::keys::KeyIssuer;
use petstore_server::Application;
use petstore_test_support::TestDatabase;
use serde_json::Value;
use tempfile::TempDir;

pub const PETSTORE: &str = env!("CARGO_BIN_EXE_petstore");

/// Worker threads of every test server (and of the benchmark's bare actix-web ceiling).
pub const SERVER_WORKERS: usize = 2;

/// Where a test server keeps its pets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

/// The key secret of in-process servers (a process gets a development secret of its own).
const IN_PROCESS_KEY_SECRET: &str = "in-process-test-server-key-secret-0123456789";

/// A running service with its own data directory and database; stopped on drop.
pub struct TestApp {
    pub backend: Backend,
    /// `http://127.0.0.1:PORT` (no `/v1`).
    pub address: String,
    pub api_key: String,
    pub data_dir: TempDir,
    pub database_url: String,
    pub client: awc::Client,
    extra_env: Vec<(String, String)>,
    server: Server,
    _database: Option<TestDatabase>,
}

/// Where a test's service runs.
enum Server {
    Process(Child),
    InProcess(InProcessServer),
}

/// Storage for a test: the database URL and what keeps the database alive.
fn test_storage(backend: Backend, data_dir: &Path) -> (String, Option<TestDatabase>) {
    match backend {
        Backend::Memory => ("memory:".to_owned(), None),
        Backend::Sqlite => (
            format!("sqlite://{}", data_dir.join("pets.db").display()),
            None,
        ),
        Backend::Postgres => {
            let database = TestDatabase::migrated(|url| {
                let url = url.parse().expect("a PostgreSQL URL");
                petstore_persistence::migrate(&url, &PoolSettings::default())
                    .expect("migrate the template database");
            });
            (database.url().to_owned(), Some(database))
        }
    }
}

impl TestApp {
    /// The service in this process, on `backend`.
    pub async fn spawn(backend: Backend) -> Self {
        Self::spawn_with_args(backend, &[]).await
    }

    /// The service in this process, on `backend`, with `petstore serve` options added.
    pub async fn spawn_with_args(backend: Backend, extra_args: &[&str]) -> Self {
        let data_dir = tempfile::tempdir().expect("temporary data directory");
        let (database_url, database) = test_storage(backend, data_dir.path());
        let dir = data_dir.path().to_str().expect("UTF-8 temporary directory");
        let workers = SERVER_WORKERS.to_string();
        let args = [
            "petstore",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--workers",
            &workers,
            "--database-url",
            &database_url,
            "--data-dir",
            dir,
            "--key-secret",
            IN_PROCESS_KEY_SECRET,
            "--env",
            "development",
        ];
        let Command::Serve(args) = Cli::try_parse_from(args.iter().chain(extra_args))
            .expect("valid serve arguments")
            .command
        else {
            unreachable!("parsed `serve` as another command");
        };
        let (server, address) = InProcessServer::start(args);
        let mut app = Self {
            backend,
            address,
            api_key: String::new(),
            data_dir,
            database_url,
            client: client(),
            extra_env: Vec::new(),
            server: Server::InProcess(server),
            _database: database,
        };
        app.api_key = app.issue_key(&["--name", "tests"]).await;
        app
    }

    /// The built binary in a process of its own, on `backend`.
    pub async fn spawn_process(backend: Backend) -> Self {
        Self::spawn_with_env(backend, &[]).await
    }

    /// The built binary in a process of its own, with `env` added to its environment.
    pub async fn spawn_with_env(backend: Backend, env: &[(&str, &str)]) -> Self {
        let data_dir = tempfile::tempdir().expect("temporary data directory");
        let (database_url, database) = test_storage(backend, data_dir.path());
        let extra_env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let started =
            start_server_logging_to(data_dir.path(), &database_url, &extra_env, log_sink());
        let mut app = Self {
            backend,
            address: started.address,
            api_key: String::new(),
            data_dir,
            database_url,
            client: client(),
            extra_env,
            server: Server::Process(started.child),
            _database: database,
        };
        app.api_key = match started.startup_key {
            Some(key) => key,
            None => app.issue_key(&["--name", "tests"]).await,
        };
        app
    }

    fn process(&mut self) -> &mut Child {
        match &mut self.server {
            Server::Process(child) => child,
            Server::InProcess(_) => panic!("only a TestApp::spawn_process app has a process"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// Kills the server without warning (SIGKILL) and starts a new one on the same data.
    pub fn kill_and_restart(&mut self) {
        self.process().kill().expect("kill the server");
        self.restart();
    }

    /// Sends the server SIGTERM (a graceful stop); call [`TestApp::restart`] afterwards.
    pub fn terminate(&self) {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &self.server_pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed: {status}");
    }

    /// Waits for the server process to end and returns how it ended.
    pub fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        self.process().wait().expect("reap the server")
    }

    /// Sends the server SIGKILL, e.g. from a task running next to the server's clients; call
    /// [`TestApp::restart`] afterwards.
    pub fn kill_9(&self) {
        let status = std::process::Command::new("kill")
            .args(["-9", &self.server_pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -9 failed: {status}");
    }

    /// Waits for the server to end (after [`TestApp::kill_9`]) and starts a new one on the same
    /// data.
    pub fn restart(&mut self) {
        self.process().wait().expect("reap the server");
        let started = start_server_logging_to(
            self.data_dir.path(),
            &self.database_url,
            &self.extra_env,
            log_sink(),
        );
        self.server = Server::Process(started.child);
        self.address = started.address;
        // A `memory:` server forgot its keys with everything else.
        if let Some(key) = started.startup_key {
            self.api_key = key;
        }
    }

    /// The server's process id, e.g. to read its memory use from `/proc`.
    pub fn server_pid(&self) -> u32 {
        match &self.server {
            Server::Process(child) => child.id(),
            Server::InProcess(_) => panic!("only a TestApp::spawn_process app has a process"),
        }
    }

    /// The PostgreSQL database behind a `Backend::Postgres` app, for SQL the test runs itself.
    pub fn postgres(&self) -> &TestDatabase {
        self._database
            .as_ref()
            .expect("only a PostgreSQL-backed app has a PostgreSQL database")
    }

    /// The secret this server signs and checks keys with.
    pub fn key_secret(&self) -> Vec<u8> {
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
                let mut env = self.extra_env.clone();
                env.push(("DATABASE_URL".to_owned(), self.database_url.clone()));
                issue_key(self.data_dir.path(), &env, args)
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
        let mut env = self.extra_env.clone();
        env.push(("DATABASE_URL".to_owned(), self.database_url.clone()));
        run_petstore(self.data_dir.path(), &env, &[&["keys"], args].concat())
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
}

impl TestApp {
    /// Every pet reached from `first` by following `Link: <...>; rel="next"` headers.
    pub async fn list_following_next_links(&self, first: &str) -> Vec<Value> {
        let mut pages = NextLinks::from(first);
        let mut pets = Vec::new();
        while let Some(page) = pages.next_page(self).await {
            pets.extend(page.pets);
        }
        pets
    }
}

/// Walks a listing page by page along its `Link: <...>; rel="next"` headers.
pub struct NextLinks {
    next: Option<String>,
    pages: usize,
}

/// One page of a listing, and when its request was sent.
pub struct Page {
    pub pets: Vec<Value>,
    pub sent: Instant,
}

impl NextLinks {
    pub fn from(first: &str) -> Self {
        Self {
            next: Some(first.to_owned()),
            pages: 0,
        }
    }

    /// The next page (asserting a 200), or `None` after the page without a `next` link.
    pub async fn next_page(&mut self, app: &TestApp) -> Option<Page> {
        let path = self.next.take()?;
        let sent = Instant::now();
        let response = send(app.get(&path), None).await;
        assert_eq!(response.status, StatusCode::OK, "{path}: {}", response.body);
        self.next = response.header("link").map(next_link_target);
        self.pages += 1;
        assert!(self.pages <= 1_000, "next links never end");
        let pets = response.json().as_array().expect("a bare array").clone();
        Some(Page { pets, sent })
    }
}

/// The target of a `Link: <TARGET>; rel="next"` header.
pub fn next_link_target(link: &str) -> String {
    assert!(link.ends_with(r#"rel="next""#), "not a next link: {link}");
    let start = link.find('<').expect("a link target") + 1;
    let end = link.find('>').expect("a link target");
    let target = &link[start..end];
    assert!(
        target.starts_with("/v1/pets?"),
        "next link leaves the listing: {target}"
    );
    target.to_owned()
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Server::Process(child) = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The library's `Application` on a thread with an actix runtime of its own, so the test's
/// runtime and the server's never wait on each other. Stopped (and its storage closed) on drop.
struct InProcessServer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    key_issuer: KeyIssuer,
}

impl InProcessServer {
    fn start(args: ServeArgs) -> (Self, String) {
        init_test_log();
        let (ready, started) = mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let application = match Application::build(&args).await {
                    Ok(application) => application,
                    Err(error) => {
                        let _ = ready.send(Err(error.to_string()));
                        return;
                    }
                };
                let handle = application.handle();
                let _ = ready.send(Ok((application.address(), application.key_issuer())));
                actix_web::rt::spawn(async move {
                    let _ = stopped.await;
                    handle.stop(false).await;
                });
                let _ = application.run_until_stopped().await;
            });
        });
        let (address, key_issuer) = match started.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok((address, key_issuer))) => (format!("http://{address}"), key_issuer),
            Ok(Err(error)) => panic!("the service did not start: {error}"),
            Err(_) => panic!("the service did not start within a minute"),
        };
        let server = Self {
            stop: Some(stop),
            thread: Some(thread),
            key_issuer,
        };
        (server, address)
    }
}

impl Drop for InProcessServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// With `TEST_LOG` set, in-process servers log to the test's output.
fn init_test_log() {
    static INIT: std::sync::Once = std::sync::Once::new();
    if std::env::var_os("TEST_LOG").is_some() {
        INIT.call_once(|| {
            let _ = tracing_subscriber::fmt()
                .with_env_filter("info")
                .with_test_writer()
                .try_init();
        });
    }
}

/// A response read whole, so tests can assert on status, headers and body together.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl TestResponse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("body is not JSON ({err}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Asserts the spec's `Error` shape: JSON, exactly `code`, `message`, `status`, with `status`
    /// equal to the HTTP status. Returns the message.
    pub fn assert_error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        let content_type = self.header("content-type").unwrap_or_default();
        assert!(
            content_type.starts_with("application/json"),
            "error content type {content_type:?}, body {:?}",
            self.body
        );
        let body = self.json();
        let object = body.as_object().expect("error body is an object");
        let mut keys: Vec<_> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["code", "message", "status"], "{body}");
        assert_eq!(body["status"], u64::from(status), "{body}");
        assert_eq!(body["code"], code, "{body}");
        let message = body["message"].as_str().expect("message is a string");
        assert!(!message.is_empty());
        message.to_owned()
    }
}

/// The status of `GET {address}/v1/pets?limit=1` with `key`, asked again every 20 ms until
/// `done` says so or `within` has passed; the last status and how long it took.
pub async fn poll_list_status(
    address: &str,
    key: &str,
    within: Duration,
    done: impl Fn(u16) -> bool,
) -> (u16, Duration) {
    let started = Instant::now();
    loop {
        let request = client()
            .get(format!("{address}/v1/pets?limit=1"))
            .bearer_auth(key);
        let status = send(request, None).await.status.as_u16();
        if done(status) || started.elapsed() >= within {
            return (status, started.elapsed());
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The claims of a key, decoded (a test reads them; the server checks them).
pub fn claims_of(key: &str) -> Value {
    use base64::Engine as _;
    let payload = key.split('.').nth(1).expect("a JWT has a payload");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON")
}

pub async fn send(request: awc::ClientRequest, body: Option<String>) -> TestResponse {
    try_send(request, body)
        .await
        .unwrap_or_else(|error| panic!("no answer from the server: {error}"))
}

/// Like [`send`], but a request that gets no whole answer (the server died) is an `Err`.
pub async fn try_send(
    request: awc::ClientRequest,
    body: Option<String>,
) -> Result<TestResponse, String> {
    let result = match body {
        Some(body) => request.send_body(body).await,
        None => request.send().await,
    };
    let mut response = result.map_err(|error| error.to_string())?;
    let bytes = response
        .body()
        .limit(16 * 1024 * 1024)
        .await
        .map_err(|error| error.to_string())?;
    Ok(TestResponse {
        status: response.status(),
        headers: response.headers().clone(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

pub fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish()
}

fn log_sink() -> Stdio {
    if std::env::var_os("TEST_LOG").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// The configuration every test process shares: the test's own directory, database and a fresh
/// environment (nothing from the developer's shell leaks in).
pub fn petstore(data_dir: &Path, extra_env: &[(String, String)]) -> std::process::Command {
    let mut command = std::process::Command::new(PETSTORE);
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
    let mut child = petstore(data_dir, extra_env)
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
            if let Some(rest) = line.strip_prefix("petstore listening on ") {
                address = Some(rest.trim_end_matches("/v1").to_owned());
            } else if let Some(rest) = line.strip_prefix("metrics on ") {
                metrics = Some(rest.trim_end_matches("/metrics").to_owned());
            } else if let Some(key) = line.split_once("API key (write").map(|(_, rest)| rest) {
                let key = key.rsplit(' ').next().unwrap_or_default().to_owned();
                let _ = sender.send((address.clone(), metrics.clone(), Some(key)));
            } else if line.starts_with("issue an API key with") {
                let _ = sender.send((address.clone(), metrics.clone(), None));
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
    let output = run_petstore(data_dir, extra_env, &[&["keys", "issue"], args].concat());
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

pub fn temp_path(dir: &TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// Declares each scenario `async fn NAME(app: TestApp)` once and runs it against each backend
/// listed, as tests named `BACKEND::NAME`: on an in-process server, or with `process` first, on
/// the binary in a process of its own (for `kill -9` and restarts). The matrix itself is
/// `petstore_test_support::on_backends!`, shared with the persistence suites.
#[macro_export]
macro_rules! on_backends {
    (process [$($backend:ident),* $(,)?] $($scenario:ident),+ $(,)?) => {
        petstore_test_support::on_backends!(
            #[actix_web::test] $crate::helpers::spawn_process_named, [$($backend),*] $($scenario),+
        );
    };
    ([$($backend:ident),* $(,)?] $($scenario:ident),+ $(,)?) => {
        petstore_test_support::on_backends!(
            #[actix_web::test] $crate::helpers::spawn_named, [$($backend),*] $($scenario),+
        );
    };
}

/// [`TestApp::spawn`] on the backend called `name`.
pub async fn spawn_named(name: &str) -> TestApp {
    TestApp::spawn(backend_named(name)).await
}

/// [`TestApp::spawn_process`] on the backend called `name`.
pub async fn spawn_process_named(name: &str) -> TestApp {
    TestApp::spawn_process(backend_named(name)).await
}

pub fn backend_named(name: &str) -> Backend {
    match name {
        "memory" => Backend::Memory,
        "sqlite" => Backend::Sqlite,
        "postgres" => Backend::Postgres,
        other => panic!("unknown backend {other}"),
    }
}
