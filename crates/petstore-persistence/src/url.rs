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
    /// `sqlite://PATH`, `sqlite:PATH` or a plain path (no `=`, no spaces) — a SQLite file.
    Sqlite(PathBuf),
    /// `postgres://…`, `postgresql://…` or libpq keywords (`host=db dbname=pets …`) — a
    /// PostgreSQL server.
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
            Some("postgres" | "postgresql") => PostgresUrl::parse_url(raw)
                .map(Self::Postgres)
                .map_err(invalid),
            Some("sqlite") => {
                let rest = &raw["sqlite:".len()..];
                sqlite_path(rest.strip_prefix("//").unwrap_or(rest))
            }
            Some(other) => Err(invalid(format!(
                "the scheme `{other}:` is not supported (write `./{other}:…` for a file of that name)"
            ))),
            // libpq's keyword form: `host=db port=5432 user=app password=… dbname=pets`.
            None if raw.contains('=') => PostgresUrl::from_keywords(raw)
                .map(Self::Postgres)
                .map_err(|reason| invalid(format!("as libpq keywords: {reason}"))),
            // A plain path is taken as a SQLite file only when it cannot be anything else
            // mistyped: a name with spaces is more likely a broken connection string than a file.
            None if raw.contains(char::is_whitespace) => Err(invalid(
                "it is neither a URL, libpq keywords nor a plain file path (a file name with \
                 spaces must be written `sqlite://PATH`)",
            )),
            // A bare word (`memory`, `postgres`, `pets`) is more likely a misspelt form than a
            // file meant to be created beside the process.
            None if !raw.contains(['/', '.', ':']) => Err(invalid(format!(
                "`{raw}` is a bare word{}; a SQLite file is written as a path (`./{raw}`, \
                 `data/{raw}.db`) or `sqlite://PATH`",
                match raw.to_ascii_lowercase().as_str() {
                    "memory" => ": for the in-memory store write `memory:`".to_owned(),
                    "postgres" | "postgresql" => {
                        ": a PostgreSQL URL is `postgres://USER@HOST/DATABASE`".to_owned()
                    }
                    "sqlite" => ": a SQLite URL is `sqlite://PATH`".to_owned(),
                    _ => String::new(),
                }
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
    // `sqlite://user:password@host/file` is some other database's URL: refused, so that its
    // password is neither logged as a file name nor used as one.
    if path
        .split('/')
        .next()
        .is_some_and(|first| first.contains('@'))
    {
        return Err(invalid(
            "a SQLite URL names a file, not a user or a server (`user@host`)",
        ));
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
    fn a_bare_word_is_refused_listing_the_forms() {
        let err = parse_err("memory");
        assert!(err.contains("`memory:`"), "{err}");
        assert!(err.contains("sqlite://PATH"), "{err}");
        assert!(parse_err("postgres").contains("postgres://USER@HOST/DATABASE"));
        assert!(parse_err("pets").contains("a bare word"));
        assert_eq!(parse("pets.db"), DatabaseUrl::Sqlite("pets.db".into()));
        assert_eq!(parse("./pets"), DatabaseUrl::Sqlite("./pets".into()));
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
        for raw in ["sqlite:///tmp/a b/pets.db", "data/pets.db", "pets.db"] {
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
            let expected = PostgresUrl::parse_url(raw).expect("a libpq URL");
            assert_eq!(url, DatabaseUrl::Postgres(expected));
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

    /// libpq would take `p` as the password and `ss@db` as the host.
    #[test]
    fn a_password_with_an_unencoded_at_sign_is_refused_saying_how_to_write_it() {
        let err = parse_err("postgres://app:p@ss@db/petstore");
        assert!(err.contains("%40"), "{err}");
        assert!(!err.contains("ss@db"), "{err}");
        assert_eq!(
            parse("postgres://app:p%40ss@db/petstore").to_string(),
            "postgres://app:***@db/petstore"
        );
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
    }

    #[test]
    fn libpq_keywords_are_postgres_with_the_password_hidden() {
        let url = parse("host=db port=5432 user=u password=secret dbname=pets");
        let DatabaseUrl::Postgres(pg) = &url else {
            panic!("{url:?} should be PostgreSQL");
        };
        assert_eq!(
            url.to_string(),
            "host=db port=5432 user=u password=*** dbname=pets"
        );
        assert!(!format!("{url:?}").contains("secret"));
        assert_eq!(pg.scrub("password secret refused"), "password *** refused");

        let quoted = parse(r"host = db  password='it\'s a secret' application_name=''");
        assert_eq!(
            quoted.to_string(),
            "host=db password=*** application_name=''"
        );
        assert!(!format!("{quoted:?}").contains("secret"));
    }

    #[test]
    fn what_is_neither_url_keywords_nor_plain_path_is_refused_without_echoing_it() {
        for raw in [
            "host=db password='unclosed",
            "host=db password=hunter2=x =y",
            "Host=db password=hunter2",
            "host=db password=hunter2 trailing",
        ] {
            let err = parse_err(raw);
            assert!(err.contains("libpq keywords"), "{raw}: {err}");
            assert!(!err.contains("hunter2"), "{raw}: {err}");
        }
        let err = parse_err("db user hunter2");
        assert!(err.contains("neither a URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = parse_err("sqlite://user:hunter2@host/pets.db");
        assert!(err.contains("not a user or a server"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(parse_err("sqlite:user:hunter2@host").contains("not a user"));
        // With an explicit scheme, a file name may hold spaces; an `@` past the first `/` is
        // just part of a file name.
        assert_eq!(
            parse("sqlite:///tmp/a b/x@y.db"),
            DatabaseUrl::Sqlite("/tmp/a b/x@y.db".into())
        );
    }

    #[test]
    fn every_parse_error_says_what_is_accepted() {
        let err = parse_err("redis://cache");
        assert!(err.contains("memory:"), "{err}");
        assert!(err.contains("sqlite://"), "{err}");
        assert!(err.contains("postgres://"), "{err}");
    }
}
