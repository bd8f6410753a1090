//! A SQLite server's database file seen from beside the server: a read held open on it, as a
//! backup, a `.dump` or an operator's `sqlite3` session holds one, and its WAL file's length and
//! generation.

use std::path::{Path, PathBuf};

use diesel::connection::SimpleConnection as _;
use diesel::{Connection as _, SqliteConnection};

/// Bytes of one WAL frame: a 4 KiB page and its 24-byte header.
const WAL_FRAME_BYTES: u64 = 4096 + 24;

/// Bytes of the WAL file's own header.
const WAL_HEADER_BYTES: u64 = 32;

/// A read transaction on a connection of its own: `BEGIN`, one `SELECT count(*) FROM pets`, and
/// nothing more until [`end`](Self::end). Until then SQLite keeps every page that read may
/// still need.
pub struct HeldRead(SqliteConnection);

impl HeldRead {
    pub fn begin(database: &Path) -> Self {
        let path = database.to_str().expect("a UTF-8 path");
        let mut connection = SqliteConnection::establish(path)
            .unwrap_or_else(|error| panic!("cannot open {path}: {error}"));
        connection
            .batch_execute("BEGIN; SELECT count(*) FROM pets;")
            .expect("a read transaction");
        Self(connection)
    }

    pub fn end(mut self) {
        self.0.batch_execute("COMMIT").expect("end the read");
    }
}

/// The WAL file beside `database`.
pub fn wal_of(database: &Path) -> PathBuf {
    let mut wal = database.as_os_str().to_owned();
    wal.push("-wal");
    PathBuf::from(wal)
}

/// The frames the WAL file of `database` has room for (its length, not what is still to be
/// checkpointed).
pub fn wal_pages(database: &Path) -> u64 {
    std::fs::metadata(wal_of(database))
        .map_or(0, |meta| meta.len().saturating_sub(WAL_HEADER_BYTES))
        / WAL_FRAME_BYTES
}

/// The WAL header's checkpoint sequence number and salts: they change each time the WAL starts
/// over from its beginning.
pub fn wal_generation(database: &Path) -> Vec<u8> {
    let header = std::fs::read(wal_of(database)).unwrap_or_default();
    header.get(12..24).map(<[u8]>::to_vec).unwrap_or_default()
}
