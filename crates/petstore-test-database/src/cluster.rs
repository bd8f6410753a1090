//! PostgreSQL clusters of a test's own, started from the server binaries on the machine: a
//! primary (`initdb`) and streaming standbys of it (`pg_basebackup -R`), for tests that stop,
//! promote or fail over a server. Each lives in a temporary directory and is stopped and removed
//! on drop, also when the test fails.
//!
//! The binaries are found as `tests/support/with-postgres.sh` finds them (the directory of its
//! `PG_CTL`, `initdb` on `PATH`, else the newest `/usr/lib/postgresql/*/bin`). PostgreSQL refuses
//! to run as root, so as root the servers run as the unprivileged `postgres` user.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use tempfile::TempDir;

/// A running PostgreSQL cluster on `127.0.0.1`, trusting local connections, stopped (immediate
/// shutdown) and deleted on drop.
#[derive(Debug)]
pub struct PostgresCluster {
    binaries: PathBuf,
    dir: TempDir,
    data: PathBuf,
    port: u16,
    running: AtomicBool,
}

impl PostgresCluster {
    /// A new cluster (`initdb`), started with `settings` (`name=value`, given as `-c` options:
    /// they are this server's only, and a base backup of it does not copy them).
    ///
    /// # Panics
    /// When the binaries are missing or the cluster cannot be created or started.
    pub fn primary(settings: &[&str]) -> Self {
        let cluster = Self::unstarted("primary");
        run(cluster.as_server_user(cluster.binary("initdb")).args([
            "-D".as_ref(),
            cluster.data.as_os_str(),
            "-U".as_ref(),
            "postgres".as_ref(),
            "-A".as_ref(),
            "trust".as_ref(),
            "-E".as_ref(),
            "UTF8".as_ref(),
            "--locale=C".as_ref(),
            "--no-sync".as_ref(),
        ]));
        cluster.start(settings);
        cluster
    }

    /// A streaming standby of `primary`: a base backup with the recovery settings written
    /// (`pg_basebackup -R`), started with `cluster_name` set to `name` (the name the primary's
    /// `synchronous_standby_names` knows it by) and `settings`.
    ///
    /// # Panics
    /// When the backup or the start fails.
    pub fn standby_of(primary: &Self, name: &str, settings: &[&str]) -> Self {
        let cluster = Self::unstarted(name);
        run(cluster
            .as_server_user(cluster.binary("pg_basebackup"))
            .args(["-h", "127.0.0.1", "-U", "postgres", "-p"])
            .arg(primary.port.to_string())
            .arg("-D")
            .arg(&cluster.data)
            .args(["-R", "-X", "stream", "--checkpoint=fast", "--no-sync"]));
        let name = format!("cluster_name={name}");
        cluster.start(&[&[name.as_str()][..], settings].concat());
        cluster
    }

    fn unstarted(name: &str) -> Self {
        let binaries = binaries();
        let dir = tempfile::Builder::new()
            .prefix(&format!("petstore-pg-{name}."))
            .tempdir()
            .unwrap_or_else(|err| panic!("cannot create a temporary directory: {err}"));
        if let Some((uid, gid)) = server_user() {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .unwrap_or_else(|err| panic!("cannot give {:?} to postgres: {err}", dir.path()));
        }
        let data = dir.path().join("data");
        Self {
            binaries,
            dir,
            data,
            port: free_port(),
            running: AtomicBool::new(false),
        }
    }

    fn start(&self, settings: &[&str]) {
        let mut options = format!(
            "-p {} -k '{}' -c listen_addresses=127.0.0.1",
            self.port,
            self.dir.path().display()
        );
        for setting in settings {
            let (name, value) = setting
                .split_once('=')
                .unwrap_or_else(|| panic!("a setting is `name=value`: {setting}"));
            assert!(!value.contains('\''), "no quote in a setting: {setting}");
            options.push_str(&format!(" -c {name}='{value}'"));
        }
        let started = self
            .pg_ctl()
            .arg("-l")
            .arg(self.log_path())
            .args(["-o", &options, "-w", "-t", "60", "start"])
            .output();
        self.running.store(true, Ordering::SeqCst);
        if let Err(err) = check(started, "pg_ctl start") {
            panic!("{err}\nthe server's log:\n{}", self.log());
        }
    }

    /// The port the server listens on, on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE` (the superuser; local connections are
    /// trusted).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// What `sql` gives in `database`, as `psql -tA` prints it (rows on lines, columns split by
    /// `|`); `Err` holds psql's error output.
    pub fn try_query(&self, database: &str, sql: &str) -> Result<String, String> {
        let output = Command::new(self.binary("psql"))
            .args(["-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(self.url(database))
            .args(["-c", sql])
            .output()
            .map_err(|err| format!("cannot run psql: {err}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
        }
    }

    /// [`Self::try_query`], panicking when the statement fails.
    pub fn query(&self, database: &str, sql: &str) -> String {
        self.try_query(database, sql)
            .unwrap_or_else(|err| panic!("SQL failed on port {}: {err}\n{sql}", self.port))
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`): its sessions are cut as in a
    /// crash, and nothing is written on the way out.
    pub fn stop_immediately(&self) {
        self.running.store(false, Ordering::SeqCst);
        let stopped = self
            .pg_ctl()
            .args(["-m", "immediate", "-w", "stop"])
            .output();
        check(stopped, "pg_ctl stop").unwrap_or_else(|err| panic!("{err}"));
    }

    /// Promotes a standby to a primary (`pg_ctl promote`), waiting until it accepts writes.
    pub fn promote(&self) {
        let promoted = self.pg_ctl().args(["-w", "-t", "60", "promote"]).output();
        if let Err(err) = check(promoted, "pg_ctl promote") {
            panic!("{err}\nthe server's log:\n{}", self.log());
        }
    }

    /// The server's log so far, for a failing test's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn pg_ctl(&self) -> Command {
        let mut command = self.as_server_user(self.binary("pg_ctl"));
        command.arg("-D").arg(&self.data);
        command
    }

    fn binary(&self, name: &str) -> PathBuf {
        self.binaries.join(name)
    }

    /// `program` run as the `postgres` user when this process is root, else as it is.
    fn as_server_user(&self, program: PathBuf) -> Command {
        if server_user().is_some() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }
}

impl Drop for PostgresCluster {
    fn drop(&mut self) {
        if self.running.swap(false, Ordering::SeqCst) {
            // Panicking in drop would abort a test that is already unwinding.
            let stopped = self
                .pg_ctl()
                .args(["-m", "immediate", "-w", "stop"])
                .output();
            if let Err(err) = check(stopped, "pg_ctl stop") {
                eprintln!("warning: {err}");
            }
        }
    }
}

fn run(command: &mut Command) {
    let program = format!("{:?}", command.get_program());
    check(command.output(), &program).unwrap_or_else(|err| panic!("{err}"));
}

fn check(output: std::io::Result<std::process::Output>, what: &str) -> Result<(), String> {
    let output = output.map_err(|err| format!("cannot run {what}: {err}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim(),
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

/// The uid and gid of `postgres` when this process is root (and so must run the servers as
/// that user), else `None`.
fn server_user() -> Option<(u32, u32)> {
    let id = |args: &[&str]| -> Option<u32> {
        let output = Command::new("id").args(args).output().ok()?;
        String::from_utf8_lossy(&output.stdout).trim().parse().ok()
    };
    if id(&["-u"])? != 0 {
        return None;
    }
    let uid = id(&["-u", "postgres"]).unwrap_or_else(|| {
        panic!("running as root, but there is no `postgres` user to run PostgreSQL as")
    });
    Some((uid, id(&["-g", "postgres"]).unwrap_or(uid)))
}

/// The directory of the server binaries (`initdb`, `pg_ctl`, `pg_basebackup`, `psql`).
fn binaries() -> PathBuf {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let from_script = std::env::var_os("PG_CTL")
        .map(PathBuf::from)
        .and_then(|pg_ctl| pg_ctl.parent().map(Path::to_path_buf));
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("initdb"))
            .find(|initdb| initdb.is_file())
            .and_then(|initdb| std::fs::canonicalize(initdb).ok())
            .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
    });
    let newest_installed = || {
        let versions = std::fs::read_dir("/usr/lib/postgresql").ok()?;
        versions
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let version: u32 = entry.file_name().to_str()?.parse().ok()?;
                Some((version, entry.path().join("bin")))
            })
            .filter(|(_, dir)| has_server(dir))
            .max_by_key(|(version, _)| *version)
            .map(|(_, dir)| dir)
    };
    from_script
        .filter(|dir| has_server(dir))
        .or(on_path.filter(|dir| has_server(dir)))
        .or_else(newest_installed)
        .unwrap_or_else(|| {
            panic!(
                "PostgreSQL server binaries not found; install them with: apt-get install -y \
                 postgresql"
            )
        })
}

/// A local port nothing listens on: one just bound and released again.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|err| panic!("cannot bind a local port: {err}"));
    listener
        .local_addr()
        .unwrap_or_else(|err| panic!("cannot read the bound port: {err}"))
        .port()
}
