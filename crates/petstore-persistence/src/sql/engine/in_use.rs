//! Whether a process has a SQLite database open: every connection in WAL mode holds a read
//! lock on one byte of the `-shm` file (SQLite's "dead man switch", which tells the first
//! connection to open the file from the others) for as long as it is open, so a write lock on
//! that file, tried without waiting, fails exactly while one is. A server holds such a
//! connection from the moment it opened its store (`presence.rs`).

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

use rustix::fs::{fcntl_lock, FlockOperation};

use super::sqlite_file::with_suffix;

/// Whether any process has the database at `path` open in WAL mode. Call it while this process
/// has no connection to that database open: POSIX locks belong to the process, and closing the
/// file here would drop the locks of its own connections on it.
pub(crate) fn is_open_elsewhere(path: &Path) -> io::Result<bool> {
    let shm = with_suffix(path, "-shm");
    let file = match OpenOptions::new().read(true).write(true).open(&shm) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    match fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            fcntl_lock(&file, FlockOperation::NonBlockingUnlock)?;
            Ok(false)
        }
        Err(rustix::io::Errno::AGAIN | rustix::io::Errno::ACCESS) => Ok(true),
        Err(err) => Err(err.into()),
    }
}
