//! Start-up against a PostgreSQL server that answers and refuses: a database or role that does
//! not exist, a wrong password. Waiting cannot fix those, so `serve` ends at once, non-zero, with
//! a message naming the problem, instead of retrying for the whole start-up timeout. A server
//! that does not answer (yet) is waited for, up to that timeout: by `serve` (`instances.rs`)
//! and by `migrate` (here), which so may start beside its database.

use std::io::{BufRead as _, BufReader};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use petstore_persistence::DatabaseUrl;
use petstore_test_support::TestDatabase;

use petstore_test_support::{final_error, petstore, run_petstore, unreachable_postgres_url};

/// Far below the start-up timeout the tests configure (30 s), far above a refused connection.
const AT_ONCE: Duration = Duration::from_secs(5);

/// Runs `petstore serve` on `url`, which must refuse at once; returns the error it ended with
/// and its whole stderr.
fn serve_refused(url: &str) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [
        ("DATABASE_URL".to_owned(), url.to_owned()),
        ("PETSTORE_STARTUP_TIMEOUT".to_owned(), "30s".to_owned()),
    ];
    let started = Instant::now();
    let output = run_petstore(dir.path(), &env, &["serve", "--bind", "127.0.0.1:0"]);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "served on {url}: {stderr}");
    assert!(
        took < AT_ONCE,
        "gave up after {took:?}, as if the server were down: {stderr}"
    );
    assert!(
        stderr.contains("refused the connection"),
        "the message does not say the database refused: {stderr}"
    );
    assert!(
        !stderr.contains("not reachable yet; retrying"),
        "retried: {stderr}"
    );
    let error = final_error(&stderr).unwrap_or_else(|| panic!("no final error: {stderr}"));
    (error, stderr)
}

/// `database`'s URL with its role and password replaced by `userinfo`.
fn as_user(database: &TestDatabase, userinfo: &str) -> String {
    database.url().replacen(
        "postgres://postgres@",
        &format!("postgres://{userinfo}@"),
        1,
    )
}

#[test]
fn a_database_that_does_not_exist_ends_start_up_at_once_naming_it() {
    let database = TestDatabase::create();
    let missing = format!("{}_missing", database.name());
    let url = database.url().replace(database.name(), &missing);
    let (error, stderr) = serve_refused(&url);
    assert!(
        error.contains(&format!("database \"{missing}\" does not exist")),
        "{stderr}"
    );
}

#[test]
fn a_role_that_does_not_exist_ends_start_up_at_once_naming_it() {
    let database = TestDatabase::create();
    let (error, stderr) = serve_refused(&as_user(&database, "ghost_of_petstore"));
    assert!(
        error.contains("role \"ghost_of_petstore\" does not exist"),
        "{stderr}"
    );
}

#[test]
fn a_wrong_password_ends_start_up_at_once_without_showing_it() {
    let database = TestDatabase::create();
    let role = format!("{}_app", database.name());
    // `tests/support/with-postgres.sh` makes members of `password_login` give their password.
    database.execute(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'the-right-one' IN ROLE password_login"
    ));
    let (error, stderr) = serve_refused(&as_user(&database, &format!("{role}:not-the-right-one")));
    assert!(error.contains("password authentication failed"), "{stderr}");
    assert!(
        !stderr.contains("not-the-right-one"),
        "the password leaked: {stderr}"
    );
}

/// Whether `line` is the warning `serve` and `migrate` log for each retry of a database that
/// does not answer yet (JSON logs, as stderr is not a terminal).
fn is_retry_warning(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|line| {
        line["level"] == "WARN"
            && line["message"]
                .as_str()
                .is_some_and(|message| message.contains("database not reachable yet; retrying"))
    })
}

#[test]
fn migrate_gives_up_on_an_unreachable_database_after_the_startup_timeout_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url =
        unreachable_postgres_url().replacen("postgres://petstore@", "postgres://app:hunter2@", 1);
    let shown: DatabaseUrl = url.parse().expect("a PostgreSQL URL");
    let env = [
        ("DATABASE_URL".to_owned(), url.clone()),
        ("PETSTORE_STARTUP_TIMEOUT".to_owned(), "2s".to_owned()),
        ("PETSTORE_CONNECT_TIMEOUT".to_owned(), "1s".to_owned()),
    ];
    let started = Instant::now();

    let output = run_petstore(dir.path(), &env, &["migrate"]);

    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "migrated without a database");
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(15),
        "retried for {elapsed:?}, expected the 2s start-up timeout: {stderr}"
    );
    assert!(
        stderr.lines().any(is_retry_warning),
        "no retry was logged: {stderr}"
    );
    let error = final_error(&stderr).unwrap_or_else(|| panic!("no final error: {stderr}"));
    assert!(
        error.contains(&format!("cannot connect to the database {shown}: "))
            && error.contains("gave up after PETSTORE_STARTUP_TIMEOUT (2s) of retries: "),
        "{error}"
    );
    assert!(!stderr.contains("hunter2"), "the password leaked: {stderr}");
}

/// `petstore migrate` started before its database answers: it retries, and migrates once the
/// database is up. The database "comes up" when a port that refused connections starts
/// forwarding them to the test server.
#[test]
fn migrate_waits_for_a_database_that_comes_up_later() {
    let database = TestDatabase::create();
    let server = database
        .url()
        .split_once('@')
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(address, _)| address.to_owned())
        .expect("the test database's URL has HOST:PORT");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|probe| probe.local_addr())
        .expect("a free port")
        .port();
    let url = database
        .url()
        .replacen(&server, &format!("127.0.0.1:{port}"), 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut migrate = petstore(
        dir.path(),
        &[
            ("DATABASE_URL".to_owned(), url),
            ("PETSTORE_STARTUP_TIMEOUT".to_owned(), "60s".to_owned()),
            ("PETSTORE_CONNECT_TIMEOUT".to_owned(), "1s".to_owned()),
        ],
    )
    .arg("migrate")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start petstore migrate");
    let lines = stderr_lines(&mut migrate);

    let mut stderr = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !stderr.iter().any(|line: &String| is_retry_warning(line)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => stderr.push(line),
            Err(_) => {
                let _ = migrate.kill();
                panic!("no retry within 30s: {}", stderr.join("\n"));
            }
        }
    }
    assert!(
        migrate.try_wait().expect("poll migrate").is_none(),
        "migrate ended instead of waiting: {}",
        stderr.join("\n")
    );

    let _forwarder = Forwarder::start(port, &server);
    let status = wait_for(&mut migrate, Duration::from_secs(60));
    stderr.extend(lines.iter());
    let stderr = stderr.join("\n");
    assert!(status.success(), "migrate failed: {stderr}");
    assert!(stderr.contains(": applied "), "{stderr}");

    let again = run_petstore(
        dir.path(),
        &[("DATABASE_URL".to_owned(), database.url().to_owned())],
        &["migrate"],
    );
    let again_stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{again_stderr}");
    assert!(
        again_stderr.contains("already up to date"),
        "the migrations were not applied to the database: {again_stderr}"
    );
}

/// `child`'s stderr, line by line, read on a thread of its own until it closes.
fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().expect("piped stderr");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Waits for `child` to end, for at most `within`; kills it and fails the test after that.
fn wait_for(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("still running after {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Accepts connections on a local port and relays each to `target`, until dropped.
struct Forwarder {
    port: u16,
    stopping: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
}

impl Forwarder {
    fn start(port: u16, target: &str) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|err| panic!("cannot listen on port {port} again: {err}"));
        let stopping = Arc::new(AtomicBool::new(false));
        let target = target.to_owned();
        let accepting = {
            let stopping = Arc::clone(&stopping);
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let server = TcpStream::connect(&target).expect("reach the test server");
                    relay(&client, &server);
                    relay(&server, &client);
                }
            })
        };
        Self {
            port,
            stopping,
            accepting: Some(accepting),
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees it is to stop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// Copies what `from` sends to `to` on a thread of its own; ends `to`'s writing when `from` ends.
fn relay(from: &TcpStream, to: &TcpStream) {
    let (mut from, mut to) = (
        from.try_clone().expect("clone a socket"),
        to.try_clone().expect("clone a socket"),
    );
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}
