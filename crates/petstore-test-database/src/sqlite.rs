//! `TestSqliteFile`: a SQLite database path in a temporary directory removed on drop.

use std::path::{Path, PathBuf};

/// A path for a SQLite database inside a fresh temporary directory. The file itself is not
/// created; it sits one directory down (`…/data/petstore.db`), in a directory that exists, as an
/// explicit path's directory must (opening never creates one).
#[derive(Debug)]
pub struct TestSqliteFile {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl TestSqliteFile {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("petstore-sqlite-")
            .tempdir()
            .unwrap_or_else(|err| panic!("cannot create a temporary directory: {err}"));
        let data = dir.path().join("data");
        std::fs::create_dir(&data)
            .unwrap_or_else(|err| panic!("cannot create {}: {err}", data.display()));
        let path = data.join("petstore.db");
        Self { dir, path }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `sqlite://` URL of the database file.
    pub fn url(&self) -> String {
        format!("sqlite://{}", self.path.display())
    }

    /// The temporary directory holding everything.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Default for TestSqliteFile {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_is_inside_a_directory_that_goes_away_on_drop() {
        let file = TestSqliteFile::new();
        let dir = file.dir().to_path_buf();
        assert!(file.path().starts_with(&dir));
        assert!(!file.path().exists(), "only the path, no file yet");
        assert_eq!(file.url(), format!("sqlite://{}", file.path().display()));
        drop(file);
        assert!(!dir.exists());
    }
}
