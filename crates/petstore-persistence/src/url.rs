//! `DatabaseUrl`: which storage backend to use and where it lives, parsed from `DATABASE_URL`.
//! A PostgreSQL URL may carry a password; see `postgres_url.rs` for how it is kept out of sight.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::{PostgresUrl, StorageError};

/// Where pets are stored.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// `memory:` — kept in the process, gone when it exits.
    Memory,
    /// `sqlite://PATH`, `sqlite:PATH` or a plain path — a SQLite database file.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…` — a PostgreSQL server (libpq URL syntax).
    Postgres(PostgresUrl),
}

impl DatabaseUrl {
    /// Replaces the password in text that may have come back from the driver.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match self {
            Self::Postgres(url) => url.scrub(text),
            Self::Memory | Self::Sqlite(_) => text.to_owned(),
        }
    }
}

impl FromStr for DatabaseUrl {
    type Err = StorageError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(invalid("it is empty"));
        }
        if raw == "memory:" {
            return Ok(Self::Memory);
        }
        let scheme = scheme_of(raw).map(str::to_ascii_lowercase);
        match scheme.as_deref() {
            Some("postgres" | "postgresql") => {
                if !raw[scheme.as_deref().map_or(0, str::len)..].starts_with("://") {
                    return Err(invalid("a PostgreSQL URL starts with `postgres://`"));
                }
                Ok(Self::Postgres(PostgresUrl::new(raw)))
            }
            Some("sqlite") => {
                let rest = &raw["sqlite:".len()..];
                sqlite_path(rest.strip_prefix("//").unwrap_or(rest))
            }
            Some(other) => Err(invalid(format!(
                "the scheme `{other}:` is not supported (write `./{other}:…` for a file of that name)"
            ))),
            None => sqlite_path(raw),
        }
    }
}

/// The URL scheme, when `raw` starts with one (`letters:`); single letters are left alone so
/// that nothing resembling a drive letter is mistaken for a scheme.
fn scheme_of(raw: &str) -> Option<&str> {
    let (scheme, _) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && scheme.len() > 1;
    valid.then_some(scheme)
}

fn sqlite_path(path: &str) -> Result<DatabaseUrl, StorageError> {
    if path.is_empty() {
        return Err(invalid("the SQLite URL names no file"));
    }
    if path == ":memory:" {
        // Every pooled connection would get its own empty database.
        return Err(invalid(
            "SQLite's `:memory:` gives each connection its own database; use `memory:` instead",
        ));
    }
    if path.contains('?') {
        return Err(invalid("SQLite URLs take no `?` parameters"));
    }
    Ok(DatabaseUrl::Sqlite(PathBuf::from(path)))
}

fn invalid(reason: impl Into<String>) -> StorageError {
    StorageError::InvalidDatabaseUrl {
        reason: reason.into(),
    }
}

/// The URL as it may be shown: any PostgreSQL password hidden.
impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("memory:"),
            Self::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            Self::Postgres(url) => url.fmt(f),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("Memory"),
            Self::Sqlite(path) => f.debug_tuple("Sqlite").field(&path).finish(),
            Self::Postgres(url) => f.debug_tuple("Postgres").field(url).finish(),
        }
    }
}

impl DatabaseUrl {
    /// The SQLite file, when this is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Self::Sqlite(path) => Some(path),
            Self::Memory | Self::Postgres(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> DatabaseUrl {
        raw.parse()
            .unwrap_or_else(|err| panic!("{raw:?} should parse: {err}"))
    }

    fn parse_err(raw: &str) -> String {
        match raw.parse::<DatabaseUrl>() {
            Ok(url) => panic!("{raw:?} should not parse, got {url:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn memory() {
        assert_eq!(parse("memory:"), DatabaseUrl::Memory);
        assert_eq!(parse(" memory:\n"), DatabaseUrl::Memory);
        assert_eq!(DatabaseUrl::Memory.to_string(), "memory:");
    }

    #[test]
    fn sqlite_spellings() {
        let abs = DatabaseUrl::Sqlite(PathBuf::from("/var/lib/petstore/pets.db"));
        assert_eq!(parse("sqlite:///var/lib/petstore/pets.db"), abs);
        assert_eq!(parse("sqlite:/var/lib/petstore/pets.db"), abs);
        assert_eq!(parse("/var/lib/petstore/pets.db"), abs);
        assert_eq!(parse("SQLite:///var/lib/petstore/pets.db"), abs);
        let rel = DatabaseUrl::Sqlite(PathBuf::from("data/pets.db"));
        assert_eq!(parse("sqlite://data/pets.db"), rel);
        assert_eq!(parse("sqlite:data/pets.db"), rel);
        assert_eq!(parse("data/pets.db"), rel);
        assert_eq!(parse("./memory:"), DatabaseUrl::Sqlite("./memory:".into()));
    }

    #[test]
    fn sqlite_display_parses_back_to_the_same_url() {
        for raw in ["/tmp/a b/pets.db", "data/pets.db", "pets.db"] {
            let url = parse(raw);
            assert_eq!(parse(&url.to_string()), url, "{url}");
        }
        assert_eq!(parse("/tmp/x.db").to_string(), "sqlite:///tmp/x.db");
    }

    #[test]
    fn postgres_keeps_the_url_for_libpq() {
        for raw in [
            "postgres://app@db.internal:5432/petstore",
            "postgresql://app@db.internal/petstore?sslmode=require",
            "postgres:///petstore",
        ] {
            let url = parse(raw);
            assert_eq!(url, DatabaseUrl::Postgres(PostgresUrl::new(raw)));
            assert_eq!(url.to_string(), raw, "nothing to hide");
        }
    }

    #[test]
    fn passwords_never_show() {
        let url = parse("postgres://app:s3cr%40t@db:5432/petstore?sslmode=require");
        assert_eq!(
            url.to_string(),
            "postgres://app:***@db:5432/petstore?sslmode=require"
        );
        assert!(!format!("{url:?}").contains("s3cr"));

        let url = parse("postgresql://app@db/petstore?password=hunter2&application_name=x");
        assert_eq!(
            url.to_string(),
            "postgresql://app@db/petstore?password=***&application_name=x"
        );
        assert!(!format!("{url:?}").contains("hunter2"));
    }

    #[test]
    fn a_password_with_an_at_sign_is_still_hidden() {
        let url = parse("postgres://app:p@ss@db/petstore");
        assert!(!url.to_string().contains("p@ss"), "{url}");
    }

    #[test]
    fn rejects_what_it_cannot_serve_with_a_reason() {
        assert!(parse_err("").contains("empty"));
        assert!(parse_err("   ").contains("empty"));
        assert!(parse_err("sqlite://").contains("names no file"));
        assert!(parse_err("sqlite:").contains("names no file"));
        assert!(parse_err("sqlite::memory:").contains("use `memory:`"));
        assert!(parse_err(":memory:").contains("use `memory:`"));
        assert!(parse_err("sqlite://pets.db?mode=ro").contains("no `?` parameters"));
        assert!(parse_err("postgres:db").contains("postgres://"));
        let err = parse_err("mysql://root:hunter2@db/petstore");
        assert!(err.contains("`mysql:` is not supported"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert_eq!(parse("memory"), DatabaseUrl::Sqlite("memory".into()));
    }

    #[test]
    fn every_parse_error_says_what_is_accepted() {
        let err = parse_err("redis://cache");
        assert!(err.contains("memory:"), "{err}");
        assert!(err.contains("sqlite://"), "{err}");
        assert!(err.contains("postgres://"), "{err}");
    }
}
