//! Storage faults on SQLite, on a small filesystem of the test's own (`small_filesystem.rs`):
//! a full disk under a stream of creates, and a database its server cannot write.

use std::fs::File;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::small_filesystem::SmallFilesystem;
use petstore_test_support::{
    client, eventually, issue_key, petstore, start_server_logging_to, try_send,
};

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) address: String,
    pub(crate) key: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn database_url(fs: &SmallFilesystem) -> String {
    format!("sqlite://{}", fs.path().join("petstore.db").display())
}

/// Creates the database (migrated) on the small filesystem.
fn migrate(fs: &SmallFilesystem) {
    let migrated = petstore(fs.path(), &[])
        .arg("migrate")
        .env("DATABASE_URL", database_url(fs))
        .output()
        .expect("migrate");
    assert!(migrated.status.success(), "{migrated:?}");
}

pub(crate) fn start(fs: &SmallFilesystem, log: &File) -> Server {
    migrate(fs);
    let key = issue_key(fs.path(), &[], &["--name", "faults"]);
    // The storage probe says at DEBUG each time it finds too little room to resume writes.
    let probe_lines = [(
        "RUST_LOG".to_owned(),
        "info,petstore_persistence=debug".to_owned(),
    )];
    let started = start_server_logging_to(
        fs.path(),
        &database_url(fs),
        &probe_lines,
        Stdio::from(log.try_clone().expect("log file")),
    );
    Server {
        child: started.child,
        address: started.address,
        key,
    }
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) retry_after: Option<String>,
}

pub(crate) async fn call(server: &Server, method: &str, path: &str) -> Answer {
    let client = client();
    let url = format!("{}{path}", server.address);
    let (request, body) = match method {
        "POST" => (
            client
                .post(url)
                .insert_header(("Content-Type", "application/json")),
            Some(json!({"name": "Rex", "categoryId": 1}).to_string()),
        ),
        _ => (client.get(url), None),
    };
    let response = try_send(request.bearer_auth(&server.key), body)
        .await
        .unwrap_or_else(|error| panic!("no answer to {method} {path}: {error}"));
    Answer {
        status: response.status.as_u16(),
        body: serde_json::from_str(&response.body).unwrap_or(Value::Null),
        retry_after: response.header("retry-after").map(str::to_owned),
    }
}

/// Creates pets in a loop until `stop`; returns the ids acknowledged (201) and panics on a 500
/// or any other status than 201 and 503.
async fn keep_creating(server: &Server, stop: &std::cell::Cell<bool>) -> Vec<i64> {
    let mut stored = Vec::new();
    while !stop.get() {
        let answer = call(server, "POST", "/v1/pets").await;
        match answer.status {
            201 => stored.push(answer.body["id"].as_i64().expect("an id")),
            503 => {
                assert_eq!(
                    answer.body["code"], "service_unavailable",
                    "{}",
                    answer.body
                );
                assert_eq!(answer.retry_after.as_deref(), Some("1"));
                // Nothing a client should act on would follow from a path or SQL.
                let message = answer.body["message"].as_str().unwrap_or_default();
                assert!(
                    !message.contains('/') && !message.contains("SQL"),
                    "{message}"
                );
                actix_web::rt::time::sleep(Duration::from_millis(5)).await;
            }
            other => panic!("a create answered {other}: {}", answer.body),
        }
    }
    stored
}

/// Waits up to `within` for a create to be stored again after room was freed, then checks that
/// `more` creates are stored too (the freed room is not taken back at once) and that the
/// instance is ready.
pub(crate) async fn stored_again(server: &Server, within: Duration, more: usize) {
    eventually(within, "creates stored again", async || {
        match call(server, "POST", "/v1/pets").await.status {
            201 => Ok(()),
            other => Err(other),
        }
    })
    .await;
    for _ in 0..more {
        let answer = call(server, "POST", "/v1/pets").await;
        assert_eq!(answer.status, 201, "{}", answer.body);
    }
    let ready = call(server, "GET", "/readyz").await;
    assert_eq!(ready.status, 200, "{}", ready.body);
}

/// `Ok` for a create refused because the storage is full; otherwise what it was answered.
pub(crate) fn refused_as_full(answer: Answer) -> Result<(), String> {
    let message = answer.body["message"].as_str().unwrap_or_default();
    if answer.status == 503 && message.contains("storage is full") {
        Ok(())
    } else {
        Err(format!("{} {}", answer.status, answer.body))
    }
}

/// How many times the storage probe has found too little free space to resume writes.
fn times_the_probe_held_writes_back(log_path: &std::path::Path) -> usize {
    std::fs::read_to_string(log_path)
        .expect("server log")
        .lines()
        .filter(|line| line.contains("not enough free space yet"))
        .count()
}

#[actix_web::test]
async fn a_full_disk_answers_503_keeps_reads_and_heals_once_space_is_freed() {
    let fs = SmallFilesystem::new("24m");
    let logs = tempfile::tempdir().expect("log directory");
    let log_path = logs.path().join("server.log");
    let log = File::create(&log_path).expect("log file");
    let server = start(&fs, &log);
    let first = call(&server, "POST", "/v1/pets").await;
    assert_eq!(first.status, 201, "{}", first.body);

    let stop = std::cell::Cell::new(false);
    let writers = join_all((0..16).map(|_| keep_creating(&server, &stop)));
    let scenario = async {
        fs.fill("ballast");
        eventually(
            Duration::from_secs(10),
            "a create refused as full",
            async || refused_as_full(call(&server, "POST", "/v1/pets").await),
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
                .contains("full"),
            "{}",
            ready.body
        );
        // Under the same stream of creates, the probe's rounds are where writes would resume
        // too early and the WAL regrow into freed space: a few of them hold writes back first.
        eventually(
            Duration::from_secs(10),
            "the probe holding writes back three times",
            async || match times_the_probe_held_writes_back(&log_path) {
                enough if enough >= 3 => Ok(()),
                so_far => Err(so_far),
            },
        )
        .await;
        // Not all of it: 10 MiB, a little more than the 8 MiB writes wait for.
        let ballast = fs.path().join("ballast");
        let size = std::fs::metadata(&ballast).expect("ballast").len();
        File::options()
            .write(true)
            .open(&ballast)
            .and_then(|file| file.set_len(size.saturating_sub(10 * 1024 * 1024)))
            .expect("free 10 MiB");
        let freed = Instant::now();
        stored_again(&server, Duration::from_secs(5), 50).await;
        eprintln!(
            "creates stored again {:?} after space was freed",
            freed.elapsed()
        );
        stop.set(true);
    };
    let (stored, ()) = futures_util::future::join(writers, scenario).await;
    let stored: Vec<i64> = stored.into_iter().flatten().collect();
    assert!(!stored.is_empty());

    // Nothing acknowledged is lost.
    for ids in stored.chunks(100) {
        let query: Vec<String> = ids.iter().map(|id| format!("id={id}")).collect();
        let page = call(
            &server,
            "GET",
            &format!("/v1/pets?limit=100&{}", query.join("&")),
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        let found = page.body.as_array().map_or(0, Vec::len);
        assert_eq!(found, ids.len(), "acknowledged pets missing: {}", page.body);
    }
    let metrics = try_send(client().get(format!("{}/metrics", server.address)), None)
        .await
        .expect("metrics answer");
    assert!(
        metrics
            .body
            .contains("petstore_storage_faults_total{fault=\"full\"} 1"),
        "the episode is counted once:\n{}",
        metrics.body
    );
    assert!(
        metrics
            .body
            .contains("petstore_storage_fault{fault=\"full\"} 0"),
        "{}",
        metrics.body
    );
    drop(server);
    let log = std::fs::read_to_string(&log_path).expect("server log");
    let episodes = log
        .lines()
        .filter(|line| line.contains("\"level\":\"ERROR\"") && line.contains("storage is full"))
        .count();
    assert_eq!(
        episodes, 1,
        "one ERROR per episode, not per request:\n{log}"
    );
    assert!(log.contains("storage works again"), "{log}");
}

#[test]
fn a_database_the_server_cannot_write_is_refused_at_start_up() {
    let fs = SmallFilesystem::new("4m");
    // Creates the database (migrated) and a key, then nothing holds it open.
    migrate(&fs);
    issue_key(fs.path(), &[], &["--name", "faults"]);
    // As root, file permissions do not stop the server; a read-only filesystem does.
    fs.remount_read_only();
    let mut child = petstore(fs.path(), &[])
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("DATABASE_URL", database_url(&fs))
        .stdin(Stdio::null())
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
            panic!("the server started on a database it cannot write");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read stderr");
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("cannot be written"), "{stderr}");
}
