//! `DatabaseUrl`: which storage backend to use and where it lives, parsed from `DATABASE_URL`.
//! A PostgreSQL URL may carry a password; it is only ever handed to libpq, and every `Display`,
//! `Debug` and error message shows `***` in its place.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use crate::StorageError;

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

/// A libpq connection URL. Its password never leaves this type except towards libpq.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

const REDACTED: &str = "***";

impl PostgresUrl {
    /// The URL with any password replaced by `***`, fit for logs and terminals.
    pub fn redacted(&self) -> String {
        let raw = self.0.as_str();
        let (before_query, query) = match raw.find(['?', '#']) {
            Some(at) => raw.split_at(at),
            None => (raw, ""),
        };
        let mut shown = match userinfo_password_span(before_query) {
            Some((start, end)) => format!("{}{REDACTED}{}", &raw[..start], &before_query[end..]),
            None => before_query.to_owned(),
        };
        let mut rest = query;
        while let Some(at) = rest.find("password=") {
            let value_start = at + "password=".len();
            let is_key_start = at == 0 || matches!(rest.as_bytes()[at - 1], b'?' | b'&');
            let value_len = rest[value_start..]
                .find(['&', '#'])
                .unwrap_or(rest.len() - value_start);
            shown.push_str(&rest[..value_start]);
            if is_key_start {
                shown.push_str(REDACTED);
            } else {
                shown.push_str(&rest[value_start..value_start + value_len]);
            }
            rest = &rest[value_start + value_len..];
        }
        shown.push_str(rest);
        shown
    }

    /// `text` with every occurrence of the password (as written, and percent-decoded) replaced,
    /// for driver messages that might echo part of the URL back.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in self.passwords() {
            text = text.replace(&percent_decode(secret), REDACTED);
            text = text.replace(secret, REDACTED);
        }
        text
    }

    /// The URL libpq gets: with `connect_timeout` added unless the operator already chose one,
    /// so that an unreachable server cannot stall a connection attempt for the OS's TCP timeout.
    pub(crate) fn for_libpq(&self, connect_timeout: Duration) -> String {
        if query_params(&self.0).any(|(key, _)| key == "connect_timeout") {
            return self.0.clone();
        }
        // libpq counts whole seconds; rounding up keeps sub-second settings from meaning "forever" (0).
        let seconds = connect_timeout
            .as_secs()
            .saturating_add(u64::from(connect_timeout.subsec_nanos() > 0))
            .max(1);
        let separator = if self.0.contains('?') { '&' } else { '?' };
        format!("{}{separator}connect_timeout={seconds}", self.0)
    }

    /// The passwords as written in the URL: after `user:` in the userinfo, and any `password=`
    /// query parameter. Empty ones are skipped, as replacing "" would mangle the text.
    fn passwords(&self) -> impl Iterator<Item = &str> {
        let before_query = self.0.split(['?', '#']).next().unwrap_or("");
        let in_userinfo =
            userinfo_password_span(before_query).map(|(start, end)| &before_query[start..end]);
        let in_query = query_params(&self.0)
            .filter(|(key, _)| *key == "password")
            .map(|(_, value)| value);
        in_userinfo
            .into_iter()
            .chain(in_query)
            .filter(|secret| !secret.is_empty())
    }
}

/// Byte range of the password in `scheme://user:password@host…`. The last `@` before the query
/// ends the userinfo, so a password holding an unencoded `@` or `/` is still covered: hiding
/// too much is harmless, showing part of a password is not.
fn userinfo_password_span(before_query: &str) -> Option<(usize, usize)> {
    let authority_start = before_query.find("://")? + "://".len();
    let at = authority_start + before_query[authority_start..].rfind('@')?;
    let colon = authority_start + before_query[authority_start..at].find(':')?;
    Some((colon + 1, at))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn query_params(url: &str) -> impl Iterator<Item = (&str, &str)> {
    url.split_once('?')
        .map(|(_, query)| query.split('#').next().unwrap_or(""))
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl")
            .field(&self.redacted())
            .finish()
    }
}

impl DatabaseUrl {
    /// The URL with any password hidden; the same text `Display` writes.
    pub fn redacted(&self) -> String {
        self.to_string()
    }

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
                Ok(Self::Postgres(PostgresUrl(raw.to_owned())))
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
            let DatabaseUrl::Postgres(url) = parse(raw) else {
                panic!("{raw} is PostgreSQL");
            };
            assert_eq!(url.0, raw);
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
        assert_eq!(url.redacted(), url.to_string());

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
    fn scrub_hides_the_password_in_driver_messages() {
        let DatabaseUrl::Postgres(url) = parse("postgres://app:hunter%232@db/petstore") else {
            panic!("postgres");
        };
        assert_eq!(
            url.scrub("bad token \"hunter%232\", password \"hunter#2\""),
            "bad token \"***\", password \"***\""
        );
    }

    #[test]
    fn a_password_with_an_unencoded_slash_is_still_hidden() {
        let url = parse("postgres://app:pa/ss@db/petstore");
        assert_eq!(url.to_string(), "postgres://app:***@db/petstore");
    }

    #[test]
    fn only_the_password_parameter_is_hidden() {
        let url = parse("postgres://db/p?mypassword=x&password=y#frag");
        assert_eq!(
            url.to_string(),
            "postgres://db/p?mypassword=x&password=***#frag"
        );
    }

    #[test]
    fn connect_timeout_is_added_in_whole_seconds_unless_present() {
        let DatabaseUrl::Postgres(url) = parse("postgres://app@db/petstore") else {
            panic!("postgres");
        };
        assert_eq!(
            url.for_libpq(Duration::from_millis(1500)),
            "postgres://app@db/petstore?connect_timeout=2"
        );
        assert_eq!(
            url.for_libpq(Duration::ZERO),
            "postgres://app@db/petstore?connect_timeout=1"
        );
        let DatabaseUrl::Postgres(url) = parse("postgres://db/p?sslmode=disable") else {
            panic!("postgres");
        };
        assert_eq!(
            url.for_libpq(Duration::from_secs(3)),
            "postgres://db/p?sslmode=disable&connect_timeout=3"
        );
        let DatabaseUrl::Postgres(url) = parse("postgres://db/p?connect_timeout=9") else {
            panic!("postgres");
        };
        assert_eq!(
            url.for_libpq(Duration::from_secs(3)),
            "postgres://db/p?connect_timeout=9"
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
