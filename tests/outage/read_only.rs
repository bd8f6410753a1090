//! A SQLite file made read-only under a running server, then writable again. The tests run as
//! root, for whom file permissions stop no write, so the server runs as `nobody` then (as
//! itself otherwise) and the file is `chmod 444`: what an operator, a backup tool or a
//! mis-set deployment does. Connections already open keep their write access, so the file is
//! made read-only right after start-up, before the pool has opened its connections.

use std::cell::Cell;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::future::join_all;

use crate::storage_faults::{call, Server};
use petstore_test_support::{eventually, petstore, StartupLine};

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.starts_with(b"0\n"))
}

/// `petstore ARGS` in `dir`, as `nobody` when the tests run as root.
fn command(dir: &Path, args: &[&str]) -> std::process::Command {
    let mut command = petstore(dir, &[]);
    command.args(args).stdin(Stdio::null());
    if is_root() {
        command.uid(NOBODY).gid(NOBODY);
    }
    command
}

/// Creates the database (migrated) as the user the server runs as.
fn migrate(dir: &Path) {
    let migrated = command(dir, &["migrate"]).output().expect("migrate");
    assert!(migrated.status.success(), "{migrated:?}");
}

fn start(dir: &Path) -> Server {
    start_logging_to(dir, Stdio::null())
}

/// [`start`], the server's log (JSON lines) going to `log`.
fn start_logging_to(dir: &Path, log: Stdio) -> Server {
    migrate(dir);
    let issued = command(dir, &["keys", "issue", "--name", "read-only"])
        .output()
        .expect("keys issue");
    assert!(issued.status.success(), "{issued:?}");
    let key = String::from_utf8(issued.stdout).expect("UTF-8 key");
    let mut child = command(dir, &["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("start petstore serve");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("petstore serve said where it listens")
            .expect("a line");
        if let Some(address) = StartupLine::listening_address(&line) {
            break address;
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    Server {
        child,
        address,
        key: key.trim().to_owned(),
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Creates and lists (pages of 100, read on pooled connections) until `stop`; a 500 or any
/// status but 200, 201 and 503 fails the test, and every 503 must say the storage is read-only.
async fn keep_busy(server: &Server, create: bool, stop: &Cell<bool>) {
    while !stop.get() {
        let answer = if create {
            call(server, "POST", "/v1/pets").await
        } else {
            call(server, "GET", "/v1/pets?limit=100").await
        };
        match answer.status {
            200 | 201 => {}
            503 => {
                let message = answer.body["message"].as_str().unwrap_or_default();
                assert!(message.contains("read-only"), "{}", answer.body);
                assert_eq!(answer.retry_after.as_deref(), Some("1"));
                actix_web::rt::time::sleep(Duration::from_millis(5)).await;
            }
            other => panic!("answered {other}: {}", answer.body),
        }
    }
}

#[actix_web::test]
async fn a_database_made_read_only_answers_503_and_writes_resume_within_a_second() {
    let dir = tempfile::tempdir().expect("data directory");
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
    }
    let server = start(dir.path());
    let database = dir.path().join("petstore.db");
    set_mode(&database, 0o444);

    let stop = Cell::new(false);
    let load = join_all((0..16).map(|n| keep_busy(&server, n % 2 == 0, &stop)));
    let scenario = async {
        eventually(
            Duration::from_secs(5),
            "a create refused as read-only",
            async || match call(&server, "POST", "/v1/pets").await.status {
                503 => Ok(()),
                other => Err(other),
            },
        )
        .await;
        let read = call(&server, "GET", "/v1/pets").await;
        assert_eq!(read.status, 200, "reads keep working: {}", read.body);
        let ready = call(&server, "GET", "/readyz").await;
        assert_eq!(ready.status, 503, "{}", ready.body);
        assert!(
            ready.body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("read-only"),
            "{}",
            ready.body
        );

        set_mode(&database, 0o644);
        let writable = Instant::now();
        eventually(
            Duration::from_secs(1),
            "creates stored again",
            async || match call(&server, "POST", "/v1/pets").await.status {
                201 => Ok(()),
                other => Err(other),
            },
        )
        .await;
        let healed = writable.elapsed();
        eprintln!("creates stored again {healed:?} after the file was writable");
        // No connection opened read-only is left in the pool to fail a later write.
        for _ in 0..100 {
            let answer = call(&server, "POST", "/v1/pets").await;
            assert_eq!(answer.status, 201, "{}", answer.body);
        }
        stop.set(true);
    };
    futures_util::future::join(load, scenario).await;
}

/// Followed by its trace id, the request that met the fault leads to the line that says what
/// happened, though the storage work was done on another thread (the writer's, a reader's, the
/// blocking pool's): requests with a `traceparent` of their own each, reads and creates from 16
/// clients, until the fault is logged; its one ERROR line carries one of those traces, and that
/// request's own line has the same trace and span.
#[actix_web::test]
async fn the_fault_is_logged_in_the_trace_of_the_request_that_met_it() {
    let dir = tempfile::tempdir().expect("data directory");
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
    }
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let server = start_logging_to(dir.path(), Stdio::from(log));
    set_mode(&dir.path().join("petstore.db"), 0o444);

    let fault_line = || {
        let log = std::fs::read_to_string(&log_path).expect("read the log");
        let lines: Vec<serde_json::Value> = log
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let fault = lines.iter().find(|line| {
            line["level"] == "ERROR"
                && line["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("cannot be written"))
        });
        fault.cloned().map(|fault| (fault, lines))
    };
    let sent = Cell::new(0_u64);
    let stop = Cell::new(false);
    let client = |n: u64| {
        let (sent, stop, server) = (&sent, &stop, &server);
        async move {
            while !stop.get() {
                sent.set(sent.get() + 1);
                let trace_id = format!("7e57{n:012x}{:016x}", sent.get());
                let traceparent = format!("00-{trace_id}-00f067aa0ba902b7-01");
                let client = petstore_test_support::client();
                let (request, body) = if n % 2 == 0 {
                    let request = client
                        .post(format!("{}/v1/pets", server.address))
                        .insert_header(("Content-Type", "application/json"));
                    (request, Some(r#"{"name":"Rex","categoryId":1}"#.to_owned()))
                } else {
                    (
                        client.get(format!("{}/v1/pets?limit=100", server.address)),
                        None,
                    )
                };
                let request = request
                    .bearer_auth(&server.key)
                    .insert_header(("traceparent", traceparent));
                let status = petstore_test_support::send(request, body).await.status;
                assert!(
                    matches!(status.as_u16(), 200 | 201 | 503),
                    "answered {status}"
                );
            }
        }
    };
    let load = join_all((0..16).map(client));
    let watch = async {
        let made_read_only = Instant::now();
        eventually(
            Duration::from_secs(10),
            "the fault's line in the log",
            async || fault_line().map(drop).ok_or("no such line"),
        )
        .await;
        stop.set(true);
        made_read_only.elapsed()
    };
    let (_, took) = futures_util::future::join(load, watch).await;
    eprintln!("the fault was logged {took:?} after the file was made read-only");

    let (fault, lines) = fault_line().expect("the fault's line");
    // Met by one request, the line is in that request's span; met by a group of creates the
    // writer stored together, it names every one's trace.
    let traces: Vec<&str> = match fault["span"]["trace_id"].as_str() {
        Some(trace_id) => vec![trace_id],
        None => fault["linked_trace_ids"]
            .as_array()
            .unwrap_or_else(|| panic!("the fault's line names no trace: {fault}"))
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect(),
    };
    assert!(!traces.is_empty(), "{fault}");
    for trace_id in &traces {
        assert!(
            trace_id.starts_with("7e57"),
            "not one of the test's traces: {fault}"
        );
        let request = lines
            .iter()
            .find(|line| line["message"] == "request" && line["trace_id"] == *trace_id)
            .unwrap_or_else(|| panic!("no request line of trace {trace_id}: {fault}"));
        assert_eq!(request["status"], 503, "{request}");
        if traces.len() == 1 {
            assert_eq!(
                request["span_id"], fault["span"]["span_id"],
                "met in that request's own span: {fault} {request}"
            );
        }
    }
}

#[test]
fn starting_on_a_read_only_file_is_refused_with_a_message_that_says_so() {
    let dir = tempfile::tempdir().expect("data directory");
    if is_root() {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
    }
    migrate(dir.path());
    let issued = command(dir.path(), &["keys", "issue", "--name", "read-only"])
        .output()
        .expect("keys issue");
    assert!(issued.status.success(), "{issued:?}");
    set_mode(&dir.path().join("petstore.db"), 0o444);
    let mut child = command(dir.path(), &["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start petstore serve");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started on a file it cannot write");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read stderr");
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("cannot be written"), "{stderr}");
}
