//! The container image (`make image`), run as an operator would (`make image-test`): a
//! read-only root file system, state only in a `/data` volume, the key secret from a mounted
//! file, keys issued with the image's own CLI, the README's walk-through through the published
//! port, SIGTERM ending in exit 0 within the drain delay and shutdown timeout, and the data
//! still there for the next container. On a SQLite volume and on the throwaway PostgreSQL. The
//! compose files with podman-compose: `compose.rs`.

mod compose;
mod podman;

use std::path::Path;
use std::time::{Duration, Instant};

use petstore_test_support::{
    client, eventually, run_readme_walk_through, send, try_send, TestDatabase, WalkThroughTarget,
};
use podman::{containers_conf, image, podman_ok, Container, Volume};
use serde_json::{json, Value};
use tempfile::TempDir;

const DRAIN_DELAY: Duration = Duration::from_secs(1);
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
const SECRET: &str = "6b1f0c2e9d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c";

/// The key secret as a Kubernetes Secret or a compose secret gives it: a file, mounted read-only.
fn secret_dir() -> TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("key-secret");
    std::fs::write(&file, SECRET).expect("write the secret");
    // The image's user (10001) reads it through the mount, and no one else may.
    set_mode(dir.path(), 0o755);
    set_mode(&file, 0o400);
    std::os::unix::fs::chown(&file, Some(10001), Some(10001)).expect("chown the secret");
    dir
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The options every container of the suite runs with: read-only root, the secret mounted,
/// the drain and shutdown timeout short enough for a test.
fn server_options(secrets: &TempDir) -> Vec<String> {
    vec![
        "--read-only".into(),
        "-v".into(),
        format!("{}:/run/secrets:ro", secrets.path().display()),
        "-e".into(),
        "PETSTORE_KEY_SECRET_FILE=/run/secrets/key-secret".into(),
        "-e".into(),
        format!("PETSTORE_DRAIN_DELAY={}s", DRAIN_DELAY.as_secs()),
        "-e".into(),
        format!("PETSTORE_SHUTDOWN_TIMEOUT={}s", SHUTDOWN_TIMEOUT.as_secs()),
    ]
}

/// `podman run --rm OPTIONS IMAGE ARGS`: one command of the image's CLI, which must succeed.
fn run_once(options: &[String], args: &[&str]) {
    let image = image();
    podman_ok(&[&["run", "--rm"][..], &as_strs(options), &[&image], args].concat());
}

fn as_strs(options: &[String]) -> Vec<&str> {
    options.iter().map(String::as_str).collect()
}

/// Polls `url` until it answers 200, for at most `within`; `context` says why not (logs).
pub(crate) async fn wait_for_ok(url: &str, within: Duration, context: impl Fn() -> String) {
    eventually(
        within,
        &format!("{url} to answer 200"),
        async || match try_send(client().get(url), None).await {
            Ok(response) if response.status == 200 => Ok(()),
            Ok(response) => Err(Unanswered(response.status.to_string(), &context)),
            Err(error) => Err(Unanswered(error, &context)),
        },
    )
    .await;
}

/// What a poll of [`wait_for_ok`] saw, with the `context` (logs) read only if a failure
/// message shows it.
struct Unanswered<'a, C>(String, &'a C);

impl<C: Fn() -> String> std::fmt::Debug for Unanswered<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n{}", self.0, (self.1)())
    }
}

/// Polls `/healthz` until it answers 200, for at most 30 s.
async fn wait_until_healthy(base: &str, container: &Container) {
    wait_for_ok(&format!("{base}/healthz"), Duration::from_secs(30), || {
        container.logs()
    })
    .await;
}

/// A directory holding a `petstore` that runs the image's own CLI in `container`, for the
/// walk-through.
fn cli_of(container: &Container) -> TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    let wrapper = dir.path().join("petstore");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nCONTAINERS_CONF='{}' exec podman exec -i '{}' /petstore \"$@\"\n",
            containers_conf().display(),
            container.0
        ),
    )
    .expect("write the wrapper");
    set_mode(&wrapper, 0o755);
    dir
}

/// The image's own settings, as built.
#[test]
fn the_image_runs_as_an_unprivileged_user_with_its_labels_and_health_check() {
    let image = image();
    let inspected: Value =
        serde_json::from_str(&podman_ok(&["image", "inspect", &image])).expect("JSON");
    let inspected = &inspected[0];
    let config = &inspected["Config"];
    assert_eq!(config["User"], "10001:10001", "{config}");
    assert_eq!(config["StopSignal"], "SIGTERM", "{config}");
    assert_eq!(config["Entrypoint"], json!(["/petstore"]), "{config}");
    assert_eq!(
        inspected["Healthcheck"]["Test"],
        json!(["CMD", "/petstore", "healthcheck"]),
        "{config}"
    );
    assert!(config["Volumes"]["/data"].is_object(), "{config}");
    for label in ["version", "revision", "source", "licenses", "created"] {
        let value = &config["Labels"][format!("org.opencontainers.image.{label}")];
        assert!(
            value.as_str().is_some_and(|value| !value.is_empty()),
            "label {label}: {config}"
        );
    }
    assert_eq!(config["Labels"]["org.opencontainers.image.licenses"], "MIT");

    // Labels of this build, not of the one whose layers podman's cache kept.
    let created = config["Labels"]["org.opencontainers.image.created"]
        .as_str()
        .expect("created");
    let age = std::time::SystemTime::now()
        .duration_since(humantime::parse_rfc3339(created).expect("created is RFC 3339"))
        .unwrap_or_default();
    assert!(
        age < Duration::from_secs(3600),
        "created {created}, {age:?} ago: `make image-test` builds the image first"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run git");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let revision = config["Labels"]["org.opencontainers.image.revision"]
        .as_str()
        .expect("revision");
    // `-dirty` when the tree had changes not committed.
    assert_eq!(
        revision.trim_end_matches("-dirty"),
        head,
        "the image is not of the commit checked out"
    );
}

#[actix_web::test]
async fn on_a_sqlite_volume_it_serves_stops_cleanly_and_the_next_container_finds_the_data() {
    let secrets = secret_dir();
    let volume = Volume::create();
    let data = format!("{}:/data", volume.0);
    let mut options = server_options(&secrets);
    options.extend(["-v".into(), data]);

    run_once(&options, &["migrate"]);

    let published = [&as_strs(&options)[..], &["-p", "127.0.0.1::8080"]].concat();
    let starting = Instant::now();
    let server = Container::run(&published, &[]);
    assert_eq!(server.inspect("{{.HostConfig.ReadonlyRootfs}}"), "true");
    let base = format!("http://{}", podman_ok(&["port", &server.0, "8080/tcp"]));
    wait_until_healthy(&base, &server).await;
    let started_after = starting.elapsed();
    podman_ok(&["healthcheck", "run", &server.0]);

    // The walk-through first: it expects a store of its own (Rex is pet 1).
    let cli = cli_of(&server);
    let working_dir = tempfile::tempdir().expect("a directory");
    run_readme_walk_through(&WalkThroughTarget {
        base: &base,
        bin_dir: cli.path(),
        working_dir: working_dir.path(),
        env: &[],
    });

    let key = server.petstore(&["keys", "issue", "--name", "image-test"]);
    let created = send(
        client()
            .post(format!("{base}/v1/pets"))
            .bearer_auth(&key)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"name": "Kept", "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let stopping = Instant::now();
    podman_ok(&["stop", "--time", "30", &server.0]);
    let stopped_after = stopping.elapsed();
    assert_eq!(
        server.inspect("{{.State.ExitCode}}"),
        "0",
        "{}",
        server.logs()
    );
    assert!(
        stopped_after >= DRAIN_DELAY && stopped_after < DRAIN_DELAY + SHUTDOWN_TIMEOUT,
        "stopped after {stopped_after:?}"
    );
    drop(server);
    println!(
        "image on SQLite: `podman run` to the first 200 of /healthz in {started_after:.2?}; \
         SIGTERM to exit 0 in {stopped_after:.2?} (drain delay {DRAIN_DELAY:?})"
    );

    let next = Container::run(&published, &[]);
    let base = format!("http://{}", podman_ok(&["port", &next.0, "8080/tcp"]));
    wait_until_healthy(&base, &next).await;
    let listed = send(
        client()
            .get(format!("{base}/v1/pets?limit=100"))
            .bearer_auth(&key),
        None,
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let names: Vec<Value> = listed
        .json()
        .as_array()
        .expect("an array")
        .iter()
        .map(|pet| pet["name"].clone())
        .collect();
    assert!(names.contains(&json!("Kept")), "{names:?}");
}

#[actix_web::test]
async fn on_postgresql_it_migrates_serves_and_stops_cleanly() {
    let secrets = secret_dir();
    let database = TestDatabase::create();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut options = server_options(&secrets);
    // The throwaway cluster listens on the host's loopback only.
    options.extend([
        "--network".into(),
        "host".into(),
        "-e".into(),
        format!("DATABASE_URL={}", database.url()),
        "-e".into(),
        format!("PETSTORE_BIND=127.0.0.1:{port}"),
    ]);

    run_once(&options, &["migrate"]);
    assert_eq!(
        database.query_value("SELECT count(*) FROM pets"),
        "0",
        "the image's migrate created the tables"
    );

    let server = Container::run(&as_strs(&options), &[]);
    let base = format!("http://127.0.0.1:{port}");
    wait_until_healthy(&base, &server).await;
    let cli = cli_of(&server);
    let working_dir = tempfile::tempdir().expect("a directory");
    run_readme_walk_through(&WalkThroughTarget {
        base: &base,
        bin_dir: cli.path(),
        working_dir: working_dir.path(),
        env: &[],
    });

    podman_ok(&["stop", "--time", "30", &server.0]);
    assert_eq!(
        server.inspect("{{.State.ExitCode}}"),
        "0",
        "{}",
        server.logs()
    );
}
