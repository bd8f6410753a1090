//! Podman, as the image suite drives it: with the project's `containers.conf`, containers and
//! volumes removed on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The image under test: `PETSTORE_IMAGE`, which `make image-test` sets after `make image`.
pub fn image() -> String {
    std::env::var("PETSTORE_IMAGE").expect(
        "PETSTORE_IMAGE names the image under test: run this suite through `make image-test`",
    )
}

pub fn containers_conf() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/container/containers.conf")
}

pub fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .env("CONTAINERS_CONF", containers_conf())
        .args(args)
        .output()
        .expect("run podman")
}

/// `podman ARGS`, which must succeed; its stdout, trimmed.
pub fn podman_ok(args: &[&str]) -> String {
    let output = podman(args);
    assert!(
        output.status.success(),
        "podman {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// `podman-compose ARGS` in `dir`, whose podman reads the project's `containers.conf`.
pub fn podman_compose(dir: &Path, args: &[&str]) -> Output {
    Command::new("podman-compose")
        .current_dir(dir)
        .env("CONTAINERS_CONF", containers_conf())
        .args(args)
        .output()
        .expect("run podman-compose (`make deps-image` installs it)")
}

/// A name no other test's container, volume or compose project has.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "petstore-test-{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A named volume, removed on drop.
pub struct Volume(pub String);

impl Volume {
    pub fn create() -> Self {
        let name = unique("data");
        podman_ok(&["volume", "create", &name]);
        Self(name)
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        let _ = podman(&["volume", "rm", "--force", &self.0]);
    }
}

/// A container started detached, removed (killed if need be) on drop.
pub struct Container(pub String);

impl Container {
    /// `podman run -d --name NAME ARGS IMAGE COMMAND`.
    pub fn run(args: &[&str], command: &[&str]) -> Self {
        let name = unique("server");
        let image = image();
        let argv = [
            &["run", "-d", "--name", &name][..],
            args,
            &[&image],
            command,
        ]
        .concat();
        podman_ok(&argv);
        Self(name)
    }

    pub fn inspect(&self, format: &str) -> String {
        podman_ok(&["inspect", "--format", format, &self.0])
    }

    pub fn logs(&self) -> String {
        let output = podman(&["logs", &self.0]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// `petstore ARGS` inside the running container: the image's own CLI.
    pub fn petstore(&self, args: &[&str]) -> String {
        podman_ok(&[&["exec", &self.0, "/petstore"][..], args].concat())
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman(&["rm", "--force", "--time", "0", &self.0]);
    }
}
