//! A SQLite server's database file seen from beside the server: a read held open on it, as a
//! backup, a `.dump` or an operator's `sqlite3` session holds one. Its WAL file's length and
//! generation are `petstore_test_database::wal`'s, named here too.

use std::path::Path;

use diesel::connection::SimpleConnection as _;
use diesel::{Connection as _, SqliteConnection};
pub use petstore_test_database::wal::{wal_generation, wal_of, wal_pages};

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
