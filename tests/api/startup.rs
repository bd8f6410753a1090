//! Start-up against a PostgreSQL server that answers and refuses: a database or role that does
//! not exist, a wrong password. Waiting cannot fix those, so `serve` ends at once, non-zero, with
//! a message naming the problem, instead of retrying for the whole start-up timeout (an
//! unreachable server is still waited for: `instances.rs`).

use std::time::{Duration, Instant};

use petstore_test_support::TestDatabase;

use petstore_test_support::{final_error, run_petstore};

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
