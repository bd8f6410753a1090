//! Per-test PostgreSQL databases and control of the throwaway cluster, through `psql` and the
//! commands `tests/support/with-postgres.sh` exports.

use std::net::TcpListener;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

const MISSING_URL: &str = "PostgreSQL tests need TEST_DATABASE_URL; run them with `make test`, \
     which starts a throwaway cluster (or: bash tests/support/with-postgres.sh cargo test ...)";

fn server_url() -> String {
    match std::env::var("TEST_DATABASE_URL") {
        Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
        _ => panic!("{MISSING_URL}"),
    }
}

/// The `psql` to use: the one beside the cluster's server binaries when the script found them.
fn psql() -> String {
    std::env::var("TEST_PSQL").unwrap_or_else(|_| "psql".to_owned())
}

/// Runs one SQL statement as the server URL's (superuser) role.
fn run_sql(url: &str, sql: &str) -> Result<(), String> {
    let output = Command::new(psql())
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
        .output()
        .map_err(|err| format!("cannot run `{}`: {err}", psql()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// `url` with its database name replaced by `database`; the query string is kept.
fn with_database(url: &str, database: &str) -> String {
    let mut url = url::Url::parse(url)
        .unwrap_or_else(|err| panic!("TEST_DATABASE_URL is not a URL ({err}): {url}"));
    url.set_path(database);
    url.into()
}

fn unique_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    format!(
        "petstore_test_{}_{}_{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A database of its own on the test server, dropped (connections and all) on drop.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
    server_url: String,
}

impl TestDatabase {
    /// Creates an empty, uniquely named database on the `TEST_DATABASE_URL` server.
    ///
    /// # Panics
    /// When `TEST_DATABASE_URL` is unset or the database cannot be created.
    pub fn create() -> Self {
        let server_url = server_url();
        let name = unique_name();
        if let Err(err) = run_sql(&server_url, &format!("CREATE DATABASE \"{name}\"")) {
            panic!("cannot create test database {name} on {server_url}: {err}");
        }
        let url = with_database(&server_url, &name);
        Self {
            name,
            url,
            server_url,
        }
    }

    /// A database of its own with the schema already in place: cloned from a template database
    /// that `migrate` (given the template's URL) brings up to date once per test process, as
    /// crates.io's tests do, so each test skips running the migrations. The template is left
    /// on the server (`petstore_test_..._template`); the throwaway cluster goes with it.
    ///
    /// # Panics
    /// When `TEST_DATABASE_URL` is unset or a database cannot be created.
    pub fn migrated(migrate: impl FnOnce(&str)) -> Self {
        // Also serialises the clones: PostgreSQL refuses to copy a template while another
        // session is in it.
        static TEMPLATE: Mutex<Option<String>> = Mutex::new(None);
        let server_url = server_url();
        let mut template = TEMPLATE.lock().unwrap_or_else(PoisonError::into_inner);
        let template = template.get_or_insert_with(|| {
            let name = format!("{}_template", unique_name());
            if let Err(err) = run_sql(&server_url, &format!("CREATE DATABASE \"{name}\"")) {
                panic!("cannot create the template database {name} on {server_url}: {err}");
            }
            migrate(&with_database(&server_url, &name));
            name
        });
        let name = unique_name();
        let sql = format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\"");
        if let Err(err) = run_sql(&server_url, &sql) {
            panic!("cannot create test database {name} from {template} on {server_url}: {err}");
        }
        let url = with_database(&server_url, &name);
        Self {
            name,
            url,
            server_url,
        }
    }

    /// `postgres://` URL of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// This database in libpq's keyword form, `host=... port=... user=... dbname=...`, with
    /// `password` added (the test cluster trusts local connections and ignores it).
    pub fn keyword_dsn(&self, password: &str) -> String {
        let url = url::Url::parse(&self.url).expect("the test database URL parses");
        format!(
            "host={} port={} user={} password={password} dbname={}",
            url.host_str().unwrap_or("localhost"),
            url.port().unwrap_or(5432),
            url.username(),
            self.name
        )
    }

    /// Runs SQL in this database (as the superuser), e.g. to inspect or tamper with rows.
    ///
    /// # Panics
    /// When the statement fails.
    pub fn execute(&self, sql: &str) {
        if let Err(err) = self.try_execute(sql) {
            panic!("SQL failed in {}: {err}\n{sql}", self.name);
        }
    }

    /// Makes every insert into `pets` take `seconds` (an SQL expression: `3`, `random() * 0.02`)
    /// before it can commit, as a slow disk or a busy server would; [`Self::restore_inserts`]
    /// undoes it.
    pub fn slow_down_inserts(&self, seconds: &str) {
        self.execute(&format!(
            "CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_sleep({seconds}); RETURN NEW; END $$; \
             CREATE TRIGGER slow_insert AFTER INSERT ON pets \
             FOR EACH ROW EXECUTE FUNCTION slow_insert();"
        ));
    }

    /// Inserts into `pets` at full speed again, after [`Self::slow_down_inserts`].
    pub fn restore_inserts(&self) {
        self.execute("DROP TRIGGER slow_insert ON pets");
    }

    /// Runs SQL in this database; `Err` holds psql's error output.
    pub fn try_execute(&self, sql: &str) -> Result<(), String> {
        run_sql(&self.url, sql)
    }

    /// The single value `sql` (a query) gives in this database, as psql prints it.
    pub fn query_value(&self, sql: &str) -> String {
        let output = Command::new(psql())
            .args([
                "-X",
                "-q",
                "-tA",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &self.url,
                "-c",
                sql,
            ])
            .output()
            .unwrap_or_else(|err| panic!("cannot run `{}`: {err}", psql()));
        assert!(
            output.status.success(),
            "query failed in {}: {}\n{sql}",
            self.name,
            String::from_utf8_lossy(&output.stderr).trim()
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// How many sessions on this database are running a statement that starts with `prefix`
    /// (case-insensitive), and of those how many wait for a lock: what a test waits for instead
    /// of a fixed time when it needs a request to have reached the database.
    pub fn sessions_running(&self, prefix: &str) -> (u32, u32) {
        let counts = self.query_value(&format!(
            "SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock') \
             FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' \
             AND pid <> pg_backend_pid() AND query ILIKE '{}%'",
            prefix.replace('\'', "''")
        ));
        let (running, waiting) = counts.split_once('|').unwrap_or(("0", "0"));
        (running.parse().unwrap_or(0), waiting.parse().unwrap_or(0))
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        if let Err(err) = run_sql(&self.server_url, &sql) {
            // Panicking in drop would abort a test that is already unwinding; the cluster is
            // thrown away at the end of the run anyway.
            eprintln!("warning: could not drop test database {}: {err}", self.name);
        }
    }
}

/// A `postgres://` URL on which nothing listens: a port just bound and released again.
pub fn unreachable_postgres_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|err| panic!("cannot bind a local port: {err}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|err| panic!("cannot read the bound port: {err}"))
        .port();
    drop(listener);
    format!("postgres://petstore@127.0.0.1:{port}/petstore")
}

/// Exclusive control of the throwaway cluster behind `TEST_DATABASE_URL`, for outage tests:
/// stop it, start it again.
///
/// Stopping the cluster fails every other PostgreSQL test running at that moment, so keep
/// outage tests in a test binary (a file under `tests/`) of their own; within it, holding a
/// `ClusterControl` makes the other outage tests wait.
#[derive(Debug)]
pub struct ClusterControl {
    stop: String,
    start: String,
    _exclusive: MutexGuard<'static, ()>,
}

impl ClusterControl {
    /// Waits until no other test of this process controls the cluster, then takes control.
    ///
    /// # Panics
    /// When the cluster was not started by `tests/support/with-postgres.sh` (which exports
    /// `TEST_PG_STOP_CMD` and `TEST_PG_START_CMD`).
    pub fn acquire() -> Self {
        static EXCLUSIVE: Mutex<()> = Mutex::new(());
        let var = |name: &str| {
            std::env::var(name).unwrap_or_else(|_| {
                panic!(
                    "outage tests need {name}, exported by tests/support/with-postgres.sh when it \
                     starts its own cluster; run them with `make test`"
                )
            })
        };
        let (stop, start) = (var("TEST_PG_STOP_CMD"), var("TEST_PG_START_CMD"));
        Self {
            stop,
            start,
            _exclusive: EXCLUSIVE.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// Stops the server (immediate shutdown: connections are cut as in a crash). It is started
    /// again when the returned guard is dropped, also if the test fails before restarting it.
    pub fn stop(&self) -> StoppedCluster<'_> {
        run_shell(&self.stop);
        StoppedCluster {
            control: self,
            started: false,
        }
    }
}

/// The cluster while it is stopped; see [`ClusterControl::stop`].
#[derive(Debug)]
pub struct StoppedCluster<'a> {
    control: &'a ClusterControl,
    started: bool,
}

impl StoppedCluster<'_> {
    /// Starts the server again and waits until it accepts connections.
    pub fn start(mut self) {
        self.started = true;
        run_shell(&self.control.start);
    }
}

impl Drop for StoppedCluster<'_> {
    fn drop(&mut self) {
        if !self.started {
            self.started = true;
            if let Err(err) = try_run_shell(&self.control.start) {
                eprintln!("warning: could not restart the test cluster: {err}");
            }
        }
    }
}

fn run_shell(command: &str) {
    if let Err(err) = try_run_shell(command) {
        panic!("{err}");
    }
}

fn try_run_shell(command: &str) -> Result<(), String> {
    let output = Command::new("sh")
        .args(["-c", command])
        .output()
        .map_err(|err| format!("cannot run `{command}`: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{command}` failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout).trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_database_swaps_only_the_database_name() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5433/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5433/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@h:1/postgres?sslmode=disable", "t1"),
            "postgres://u:p@h:1/t1?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5433", "t1"),
            "postgres://postgres@127.0.0.1:5433/t1"
        );
    }

    #[test]
    fn names_are_unique_and_valid_identifiers() {
        let a = unique_name();
        let b = unique_name();
        assert_ne!(a, b);
        assert!(a.len() < 63, "PostgreSQL truncates longer names: {a}");
        assert!(a
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
    }

    #[test]
    fn unreachable_url_points_at_a_closed_local_port() {
        let url = unreachable_postgres_url();
        let port: u16 = url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {url}"));
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
