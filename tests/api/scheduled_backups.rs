//! Backups on a schedule, as the Kubernetes sidecar runs them: `petstore backup --to-dir DIR
//! --every DURATION --keep N` beside a serving SQLite server. Each backup is whole and serves,
//! only the newest N stay, a failed backup is logged and the next one taken on time, and
//! SIGTERM ends it cleanly.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::Text;
use serde_json::{json, Value};

use petstore_test_support::{
    client, eventually_blocking, petstore, run_petstore, send, start_server, Backend, TestApp,
};

/// How long a test waits for what a schedule of one backup a second does within a few seconds.
const WITHIN: Duration = Duration::from_secs(30);

/// A running `petstore backup --every`, killed if a test ends without stopping it.
struct Schedule(Child);

impl Drop for Schedule {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `petstore backup --to-dir DIR --every 1s --keep KEEP` on `database_url`, its JSON log going
/// to `log`.
fn start_schedule(
    data_dir: &Path,
    database_url: &str,
    secret: &str,
    dir: &Path,
    keep: &str,
    log: &Path,
) -> Schedule {
    let env = [
        ("DATABASE_URL".to_owned(), database_url.to_owned()),
        ("PETSTORE_KEY_SECRET".to_owned(), secret.to_owned()),
        ("PETSTORE_LOG_FORMAT".to_owned(), "json".to_owned()),
    ];
    petstore(data_dir, &env)
        .args(["backup", "--to-dir"])
        .arg(dir)
        .args(["--every", "1s", "--keep", keep])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(log).expect("create the log file"))
        .spawn()
        .map(Schedule)
        .expect("start petstore backup --every")
}

/// The log's lines whose message is `message`.
fn logged(log: &Path, message: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .expect("read the log")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|_| json!({"line": line})))
        .filter(|line| line["message"] == message)
        .collect()
}

/// Waits until the log has at least `count` lines of `message` and returns them.
fn wait_for_lines(log: &Path, message: &str, count: usize) -> Vec<Value> {
    eventually_blocking(WITHIN, &format!("{count} log lines `{message}`"), || {
        let lines = logged(log, message);
        if lines.len() >= count {
            Ok(lines)
        } else {
            Err(std::fs::read_to_string(log).unwrap_or_default())
        }
    })
}

/// SIGTERM, and the exit that follows.
fn terminate(schedule: &mut Schedule) -> std::process::ExitStatus {
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &schedule.0.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    eventually_blocking(WITHIN, "the schedule to exit after SIGTERM", || {
        schedule
            .0
            .try_wait()
            .expect("ask the schedule's status")
            .ok_or("still running")
    })
}

/// The names of the files in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the backup directory")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn file_name_of(line: &Value) -> String {
    let file = PathBuf::from(line["file"].as_str().expect("a `file` field"));
    file.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

#[derive(QueryableByName)]
struct Answer {
    #[diesel(sql_type = Text)]
    answer: String,
}

/// What `PRAGMA integrity_check` says of the SQLite file at `path` (`ok` when sound).
fn integrity_of(path: &Path) -> String {
    let mut conn = SqliteConnection::establish(path.to_str().expect("a UTF-8 path"))
        .unwrap_or_else(|err| panic!("cannot open {}: {err}", path.display()));
    diesel::sql_query("SELECT integrity_check AS answer FROM pragma_integrity_check()")
        .load::<Answer>(&mut conn)
        .expect("integrity check")
        .into_iter()
        .map(|row| row.answer)
        .collect::<Vec<_>>()
        .join("; ")
}

#[actix_web::test]
async fn scheduled_backups_are_whole_and_serve_the_newest_n_stay_and_sigterm_ends_them() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    let secret = String::from_utf8(app.key_secret()).expect("a UTF-8 secret");
    let pet = app
        .create_pet(json!({"name": "Kept", "categoryId": 1}))
        .await;
    let dir = app.data_dir.path().join("backups");
    std::fs::create_dir(&dir).expect("create the backup directory");
    let log = app.data_dir.path().join("backups.log");
    let mut schedule = start_schedule(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &dir,
        "2",
        &log,
    );

    // Three backups, so that one beyond --keep 2 was taken and the oldest removed.
    wait_for_lines(&log, "removed an old backup", 1);
    let status = terminate(&mut schedule);
    assert!(status.success(), "{status}");
    let written = logged(&log, "backup written; it passed its integrity check");
    assert!(written.len() >= 3, "{written:?}");
    assert!(
        !logged(&log, "stopped backing up").is_empty(),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    // Exactly the two newest backups stay, and nothing else was left in the directory.
    let newest: Vec<String> = written[written.len() - 2..]
        .iter()
        .map(file_name_of)
        .collect();
    assert_eq!(names_in(&dir), newest);
    let removed: Vec<String> = logged(&log, "removed an old backup")
        .iter()
        .map(file_name_of)
        .collect();
    let older: Vec<String> = written[..written.len() - 2]
        .iter()
        .map(file_name_of)
        .collect();
    assert_eq!(
        removed, older,
        "each backup beyond the newest two was removed"
    );

    for name in &newest {
        let backup = dir.join(name);
        assert_eq!(integrity_of(&backup), "ok", "{name}");
        // A server started on a copy of it serves the pet and the key of the backed-up one.
        let copy = app.data_dir.path().join(format!("serving-{name}"));
        std::fs::copy(&backup, &copy).expect("copy the backup");
        let database = format!("sqlite://{}", copy.display());
        let env = [("PETSTORE_KEY_SECRET".to_owned(), secret.clone())];
        let (mut server, address) = start_server(app.data_dir.path(), &database, &env);
        let got = send(
            client()
                .get(format!("{address}/v1/pets/{}", pet["id"]))
                .bearer_auth(&app.api_key),
            None,
        )
        .await;
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(got.status.as_u16(), 200, "{name}: {}", got.body);
        assert_eq!(got.json()["name"], "Kept", "{name}");
    }

    // Started again, it first says which backups the directory holds: the image has no shell
    // to list them with.
    let log_again = app.data_dir.path().join("backups-again.log");
    let mut again = start_schedule(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &dir,
        "2",
        &log_again,
    );
    let kept = wait_for_lines(&log_again, "backups kept", 1);
    assert!(terminate(&mut again).success());
    assert_eq!(kept[0]["files"], newest.join(", "), "{kept:?}");
    assert_eq!(kept[0]["count"], 2, "{kept:?}");
}

#[test]
fn a_failed_scheduled_backup_is_logged_and_the_next_one_is_taken_on_time() {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", data_dir.path().join("pets.db").display());
    let env = [("DATABASE_URL".to_owned(), database.clone())];
    let migrated = run_petstore(data_dir.path(), &env, &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let secret = "9c4e2b7a1f0d83e6b5a4c3d2e1f00718293a4b5c6d7e8f90a1b2c3d4e5f60718";
    // Not there yet: a volume not mounted, say.
    let dir = data_dir.path().join("backups");
    let log = data_dir.path().join("backups.log");
    let mut schedule = start_schedule(data_dir.path(), &database, secret, &dir, "5", &log);

    let failed = wait_for_lines(&log, "backup failed; nothing was removed", 2);
    assert_eq!(failed[0]["level"], "ERROR", "{failed:?}");
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|error| error.contains("cannot write the backup")),
        "{failed:?}"
    );
    assert!(
        schedule.0.try_wait().expect("status").is_none(),
        "a failed backup does not end the schedule"
    );

    std::fs::create_dir(&dir).expect("create the backup directory");
    let written = wait_for_lines(&log, "backup written; it passed its integrity check", 1);
    let name = file_name_of(&written[0]);
    assert_eq!(integrity_of(&dir.join(&name)), "ok", "{name}");
    let status = terminate(&mut schedule);
    assert!(status.success(), "{status}");
}
