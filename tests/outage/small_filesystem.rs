//! A filesystem of a few megabytes the test owns, to fill up or make read-only: a size-limited
//! tmpfs mounted over a temporary directory (needs root or CAP_SYS_ADMIN, which this project's
//! test machines and CI have). Where it cannot be made, the test fails and says why: a test of
//! a full disk that quietly passed without one would prove nothing.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

pub struct SmallFilesystem {
    dir: TempDir,
}

fn mount(args: &[&str], dir: &Path) -> Result<(), String> {
    let output = Command::new("mount")
        .args(args)
        .arg(dir)
        .output()
        .map_err(|error| format!("cannot run mount: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

impl SmallFilesystem {
    /// A tmpfs of `size` (`mount -o size=`, e.g. `4m`).
    pub fn new(size: &str) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        if let Err(why) = mount(
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ],
            dir.path(),
        ) {
            panic!(
                "\n\nTHIS TEST CANNOT RUN HERE: it needs a small filesystem of its own and \
                 `mount -t tmpfs` failed ({}). Run the tests as root (or with CAP_SYS_ADMIN), \
                 as CI does.\n\n",
                why.trim()
            );
        }
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes the whole filesystem read-only (fails if a file on it is open for writing).
    pub fn remount_read_only(&self) {
        mount(&["-o", "remount,ro"], self.path()).expect("remount read-only");
    }

    /// Fills what is left of the filesystem with `ballast`, a file to delete to free space.
    pub fn fill(&self, ballast: &str) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.path().join(ballast)).expect("ballast file");
        let block = vec![0xA5u8; 64 * 1024];
        loop {
            if file.write_all(&block).is_err() {
                break;
            }
        }
        // What a 64 KiB block did not fit, byte by byte is too slow; 4 KiB at a time is enough.
        while file.write_all(&block[..4096]).is_ok() {}
        let _ = file.sync_all();
    }
}

impl Drop for SmallFilesystem {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}
