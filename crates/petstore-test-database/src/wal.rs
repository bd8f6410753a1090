//! A SQLite database's WAL file seen from beside whoever writes it: where it is, how long it
//! is, and how often it was started over.

use std::path::{Path, PathBuf};

/// Bytes of one WAL frame: a 4 KiB page and its 24-byte header.
const WAL_FRAME_BYTES: u64 = 4096 + 24;

/// Bytes of the WAL file's own header.
const WAL_HEADER_BYTES: u64 = 32;

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

/// The WAL header's checkpoint sequence number, which each start-over moves on by one (0 while
/// there is no WAL file).
pub fn wal_restarts(database: &Path) -> u32 {
    wal_generation(database)
        .get(..4)
        .and_then(|sequence| sequence.try_into().ok())
        .map_or(0, u32::from_be_bytes)
}
