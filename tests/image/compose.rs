//! The compose files (`deploy/compose/`) as docs/deployment.md has an operator use them, with
//! Debian 12's podman-compose (1.0.3): `compose.yaml` on SQLite run for real with the image under
//! test, in a directory of its own with its `.env` and key secret; with `compose.postgres.yaml`
//! as `compose.override.yaml`, only the podman commands podman-compose would run (`--dry-run`),
//! since the postgres image cannot be pulled here.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use petstore_test_support::{client, send};
use serde_json::json;
use tempfile::TempDir;

use crate::podman::{containers_conf, image, podman, podman_compose, podman_ok, unique};
use crate::wait_for_ok;

/// Podman's default process limit is above this machine's hard limit, so runc cannot set it,
/// and a service that sets any `ulimits` (compose.yaml sets open files) loses the defaults of
/// `containers.conf`: the limit is passed on every `podman run` podman-compose makes. An
/// operator's machine needs nothing of the kind.
const PODMAN_RUN_ARGS: &str = "--podman-run-args=--ulimit nproc=4096:4096";

/// A compose project in a directory of its own, as the steps lay it out; taken down with its
/// volumes and network on drop.
struct Project {
    _dir: TempDir,
    path: PathBuf,
    name: String,
}

impl Project {
    /// `files` are (file in deploy/compose/, name in the project's directory); `.env` holds `env`.
    fn new(files: &[(&str, &str)], env: &str) -> Self {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("petstore");
        std::fs::create_dir(&path).expect("the project's directory");
        let deploy = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/compose");
        for (from, to) in files {
            std::fs::copy(deploy.join(from), path.join(to)).expect("copy a compose file");
        }
        std::fs::write(path.join(".env"), env).expect("write .env");
        Self {
            _dir: dir,
            path,
            name: unique("compose"),
        }
    }

    /// `podman-compose -p NAME ARGS` in the project's directory.
    fn compose(&self, args: &[&str]) -> Output {
        podman_compose(
            &self.path,
            &[&["-p", &self.name, PODMAN_RUN_ARGS][..], args].concat(),
        )
    }

    /// Like [`Project::compose`], which must exit 0; its stdout.
    fn compose_ok(&self, args: &[&str]) -> String {
        let output = self.compose(args);
        assert!(
            output.status.success(),
            "podman-compose {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `sh -c SCRIPT` in the project's directory: a step of the docs as written.
    fn shell(&self, script: &str) {
        let output = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&self.path)
            .env("CONTAINERS_CONF", containers_conf())
            .output()
            .expect("run sh");
        assert!(
            output.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The containers of the project, `service` or all of them, by name.
    fn containers(&self, service: Option<&str>) -> Vec<String> {
        let project = format!("label=io.podman.compose.project={}", self.name);
        let service = service.map(|service| format!("label=com.docker.compose.service={service}"));
        let mut args = vec!["ps", "-a", "--format", "{{.Names}}", "--filter", &project];
        if let Some(service) = &service {
            args.extend(["--filter", service]);
        }
        podman_ok(&args).lines().map(str::to_owned).collect()
    }

    fn logs(&self) -> String {
        self.containers(None)
            .iter()
            .map(|name| {
                let output = podman(&["logs", name]);
                format!(
                    "{name}:\n{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                )
            })
            .collect()
    }

    fn volume(&self, volume: &str) -> String {
        format!("{}_{volume}", self.name)
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self.compose(&["down", "-v", "-t", "0"]);
        // podman-compose 1.0.3 leaves the project's network behind.
        let _ = podman(&[
            "network",
            "rm",
            "--force",
            &format!("{}_default", self.name),
        ]);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// The `.env` of the steps, with this test's image and port.
fn dot_env(port: u16, public_url: &str) -> String {
    format!(
        "PETSTORE_IMAGE={}\nPETSTORE_PORT={port}\nPETSTORE_PUBLIC_URL={public_url}\n",
        image()
    )
}

/// The key secret as the steps make it: the image's `keys secret`, private to its user.
fn make_key_secret(project: &Project) {
    project.shell(&format!(
        "(umask 077 && podman run --rm {} keys secret > key-secret) && \
         chown 10001:10001 key-secret",
        image()
    ));
}

/// The one key among what `podman-compose exec` prints (its own lines around the command's).
fn key_in(output: &str) -> String {
    let keys: Vec<&str> = output
        .lines()
        .filter(|line| line.starts_with("eyJ"))
        .collect();
    assert_eq!(keys.len(), 1, "one key in: {output}");
    keys[0].to_owned()
}

#[actix_web::test]
async fn compose_on_sqlite_serves_on_its_port_under_its_public_url_and_comes_down_clean() {
    let port = free_port();
    // Not the address bound in the container (0.0.0.0:8080): what clients are told to use.
    let public_url = format!("http://localhost:{port}/v1");
    let project = Project::new(
        &[("compose.yaml", "compose.yaml")],
        &dot_env(port, &public_url),
    );
    make_key_secret(&project);

    let up = project.compose_ok(&["up", "-d"]);
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    wait_for_ok(&format!("{base}/readyz"), Duration::from_secs(60), || {
        format!("{up}\n{}", project.logs())
    })
    .await;
    println!(
        "compose on SQLite: ready {:.2?} after `podman-compose up -d` returned",
        started.elapsed()
    );

    // The image's own health check, not a shell form it cannot run.
    let [server] = &project.containers(Some("petstore"))[..] else {
        panic!("one petstore container: {:?}", project.containers(None));
    };
    assert_eq!(
        podman_ok(&[
            "inspect",
            "--format",
            "{{json .Config.Healthcheck.Test}}",
            server
        ]),
        json!(["CMD", "/petstore", "healthcheck"]).to_string()
    );
    podman_ok(&["healthcheck", "run", server]);

    let document = send(client().get(format!("{base}/v1/openapi.json")), None).await;
    assert_eq!(document.status, 200);
    assert_eq!(
        document.json()["servers"][0]["url"],
        public_url,
        "the served servers"
    );

    let key = key_in(&project.compose_ok(&[
        "exec",
        "-T",
        "petstore",
        "/petstore",
        "keys",
        "issue",
        "--name",
        "compose",
    ]));
    let created = send(
        client()
            .post(format!("{base}/v1/pets"))
            .bearer_auth(&key)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"name": "Composed", "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let id = &created.json()["id"];
    let read = send(
        client()
            .get(format!("{base}/v1/pets/{id}"))
            .bearer_auth(&key),
        None,
    )
    .await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.json()["name"], "Composed", "{}", read.body);

    // SIGTERM ends it cleanly within podman-compose's stop timeout.
    project.compose_ok(&["stop"]);
    assert_eq!(
        podman_ok(&["inspect", "--format", "{{.State.ExitCode}}", server]),
        "0",
        "{}",
        project.logs()
    );

    project.compose_ok(&["down", "-v"]);
    assert_eq!(project.containers(None), Vec::<String>::new());
    let volume = project.volume("petstore-data");
    assert!(
        !podman(&["volume", "exists", &volume]).status.success(),
        "{volume} is left after `down -v`"
    );
}

/// The PostgreSQL override, merged by podman-compose as the steps lay it out: the podman
/// commands it would run, each service with its secrets mounted where its settings say.
#[test]
fn compose_with_postgres_override_runs_the_database_first_with_every_secret_mounted() {
    let project = Project::new(
        &[
            ("compose.yaml", "compose.yaml"),
            ("compose.postgres.yaml", "compose.override.yaml"),
        ],
        &dot_env(8080, "https://petstore.example.com/v1"),
    );
    let output = project.compose_ok(&["--dry-run", "up", "-d"]);
    assert!(!output.contains("WARNING"), "{output}");
    let runs: Vec<&str> = output
        .lines()
        .filter(|line| line.starts_with("podman run "))
        .collect();
    let [postgres, petstore] = &runs[..] else {
        panic!("two services: {output}");
    };

    for expected in [
        "-e POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password ",
        "--volume ./postgres-password:/run/secrets/postgres_password:ro,",
        &format!(
            "-v {}:/var/lib/postgresql/data ",
            project.volume("postgres-data")
        ),
        "--network-alias postgres ",
    ] {
        assert!(postgres.contains(expected), "{expected} in {postgres}");
    }
    assert!(
        postgres.ends_with(" docker.io/library/postgres:15"),
        "{postgres}"
    );

    for expected in [
        "-e DATABASE_URL=postgres://petstore@postgres/petstore?passfile=/run/secrets/pgpass ",
        "--volume ./pgpass:/run/secrets/pgpass:ro,",
        "-e PETSTORE_KEY_SECRET_FILE=/run/secrets/key_secret ",
        "--volume ./key-secret:/run/secrets/key_secret:ro,",
        "-e PETSTORE_PUBLIC_URL=https://petstore.example.com/v1 ",
        "--read-only ",
        "-p 8080:8080 ",
    ] {
        assert!(petstore.contains(expected), "{expected} in {petstore}");
    }
    assert!(
        !petstore.contains("--healthcheck-command"),
        "the image's own health check: {petstore}"
    );
    assert!(
        petstore.ends_with(&format!(" {} serve", image())),
        "{petstore}"
    );
}

#[test]
fn compose_refuses_to_start_without_a_public_url() {
    let project = Project::new(
        &[("compose.yaml", "compose.yaml")],
        &format!("PETSTORE_IMAGE={}\n", image()),
    );
    let output = project.compose(&["--dry-run", "up", "-d"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("set PETSTORE_PUBLIC_URL in .env beside the compose file"),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("podman run"),
        "nothing started"
    );
}
