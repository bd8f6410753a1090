//! Where libpq finds each part of a `postgres://` URL, by libpq's own rules
//! (`conninfo_uri_parse_options` in libpq's `fe-connect.c`), which are not RFC 3986's:
//!
//! - `user:password@` is there only when an `@` comes before the first `/`, and the first `@`
//!   ends it; so an unencoded `/` in a password leaves no password at all (libpq reads
//!   `user:pass` as host and port), and an unencoded `@` moves the rest of it into the host;
//! - the hosts end at the first `/` or `?`, the database name at the next `?`; the query is split
//!   at every `&` and `=`;
//! - `#` means nothing (there are no fragments): it is part of whatever it is in;
//! - every part is percent-decoded, and a `%` that starts no `%XX` is an error.
//!
//! A URL that libpq would misread or refuse while quoting it is refused here first, with a
//! message that names what to encode and never quotes the URL, which may hold a password.

use std::ops::Range;

/// The prefixes libpq recognises, in lower case only.
pub(crate) const PREFIXES: [&str; 2] = ["postgresql://", "postgres://"];

/// libpq's connection parameters whose value is a secret.
pub(crate) const SECRET_PARAMETERS: [&str; 5] = [
    "password",
    "sslpassword",
    "scram_client_key",
    "scram_server_key",
    "oauth_client_secret",
];

/// Every parameter libpq takes in a URL's query (`PQconninfoOptions` as of PostgreSQL 18, and
/// `ssl`, which URLs alone take). libpq refuses any other; so is a piece of a value cut off at an
/// unencoded `&` (`?password=a&b=c` gives a parameter `b`).
const LIBPQ_PARAMETERS: &[&str] = &[
    "service",
    "user",
    "password",
    "passfile",
    "channel_binding",
    "connect_timeout",
    "dbname",
    "host",
    "hostaddr",
    "port",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslcertmode",
    "sslpassword",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslkeylogfile",
    "requirepeer",
    "require_auth",
    "min_protocol_version",
    "max_protocol_version",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "replication",
    "target_session_attrs",
    "load_balance_hosts",
    "scram_client_key",
    "scram_server_key",
    "oauth_issuer",
    "oauth_client_id",
    "oauth_client_secret",
    "oauth_scope",
    "ssl",
];

/// The parts of a URL that matter for showing it: byte ranges into the URL as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UriParts {
    /// The password of `user:password@`, when there is one.
    pub(crate) password: Option<Range<usize>>,
    /// Each `key=value` of the query: the key percent-decoded, the value as written.
    pub(crate) params: Vec<Param>,
    /// Whether the URL has a query (a `?` after its hosts or database name).
    pub(crate) has_query: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Param {
    pub(crate) key: String,
    pub(crate) value: Range<usize>,
}

impl Param {
    pub(crate) fn is_secret(&self) -> bool {
        SECRET_PARAMETERS.contains(&self.key.as_str())
    }
}

/// Finds the parts of `raw`, which starts with one of [`PREFIXES`], as libpq will; or says why
/// libpq would misread or refuse it, without quoting it.
pub(crate) fn parse(raw: &str) -> Result<UriParts, String> {
    let prefix = PREFIXES
        .iter()
        .find(|prefix| raw.starts_with(*prefix))
        .ok_or("a PostgreSQL URL starts with `postgres://` or `postgresql://`")?
        .len();
    let mut parts = UriParts {
        password: None,
        params: Vec::new(),
        has_query: false,
    };
    let mut at = prefix;
    if let Some(end) = raw[prefix..]
        .find(['@', '/'])
        .map(|found| prefix + found)
        .filter(|&end| raw[end..].starts_with('@'))
    {
        let userinfo = &raw[prefix..end];
        match userinfo.split_once(':') {
            Some((user, password)) => {
                check_percent(user, "the user name")?;
                check_percent(password, "the password")?;
                parts.password = Some(end - password.len()..end);
            }
            None => check_percent(userinfo, "the user name")?,
        }
        at = end + 1;
    }
    if raw[at..].contains('@') {
        return Err(
            "it holds an `@` that does not end `user:password@` (libpq takes the first \
                    `@` before the first `/` to end the password): write `/` and `@` inside a \
                    user name or password as %2F and %40, and any other `@` as %40"
                .to_owned(),
        );
    }
    at = hosts(raw, at)?;
    if raw[at..].starts_with('/') {
        let start = at + 1;
        at = raw[start..]
            .find('?')
            .map_or(raw.len(), |found| start + found);
        check_percent(&raw[start..at], "the database name")?;
    }
    if raw[at..].starts_with('?') {
        parts.has_query = true;
        parts.params = params(raw, at + 1)?;
    }
    Ok(parts)
}

/// Checks the comma-separated `host[:port]` list starting at `at` and returns where it ends (at
/// a `/`, a `?` or the end).
fn hosts(raw: &str, mut at: usize) -> Result<usize, String> {
    loop {
        if raw[at..].starts_with('[') {
            let close = raw[at..]
                .find(']')
                .map(|found| at + found)
                .ok_or("an IPv6 host address has no closing `]`")?;
            if close == at + 1 {
                return Err("an IPv6 host address `[]` is empty".to_owned());
            }
            at = close + 1;
            if !raw[at..].is_empty() && !raw[at..].starts_with([':', '/', '?', ',']) {
                return Err(
                    "an IPv6 host address `[...]` is followed by something other than \
                            `:`, `/`, `?` or `,`"
                        .to_owned(),
                );
            }
        } else {
            let end = end_of(raw, at, &[':', '/', '?', ',']);
            check_percent(&raw[at..end], "a host")?;
            at = end;
        }
        if raw[at..].starts_with(':') {
            let end = end_of(raw, at + 1, &['/', '?', ',']);
            check_percent(&raw[at + 1..end], "a port")?;
            at = end;
        }
        if !raw[at..].starts_with(',') {
            return Ok(at);
        }
        at += 1;
    }
}

/// Where the first of `ends` after `from` is, or the end of `raw`.
fn end_of(raw: &str, from: usize, ends: &[char]) -> usize {
    raw[from..]
        .find(ends)
        .map_or(raw.len(), |found| from + found)
}

/// The `key=value` pairs of the query starting at `start`, refusing what libpq would refuse or
/// misread.
fn params(raw: &str, start: usize) -> Result<Vec<Param>, String> {
    let mut params = Vec::new();
    let mut at = start;
    for piece in raw[start..].split('&') {
        let piece_start = at;
        at += piece.len() + 1;
        // libpq passes over a trailing `&` and refuses an empty pair elsewhere, quoting nothing.
        if piece.is_empty() {
            continue;
        }
        let Some((written_key, value)) = piece.split_once('=') else {
            return Err("a query parameter has no `=`: write `&` inside a value as %26".into());
        };
        if value.contains('=') {
            return Err(
                "a query parameter holds a second `=`: write `=` inside a value as %3D".into(),
            );
        }
        check_percent(written_key, "a query parameter's name")?;
        check_percent(value, "a query parameter's value")?;
        let key = percent_encoding::percent_decode_str(written_key)
            .decode_utf8_lossy()
            .into_owned();
        if !LIBPQ_PARAMETERS.contains(&key.as_str()) {
            return Err(
                "a query parameter is not one libpq takes (the piece after an \
                        unencoded `&` inside a value is one): write `&` inside a value as %26"
                    .into(),
            );
        }
        let value_start = piece_start + written_key.len() + 1;
        params.push(Param {
            key,
            value: value_start..value_start + value.len(),
        });
    }
    Ok(params)
}

/// libpq decodes every part, and refuses a `%` that starts no `%XX`, and `%00`, quoting the
/// whole part: `what` names the part instead.
fn check_percent(part: &str, what: &str) -> Result<(), String> {
    let bytes = part.as_bytes();
    for (at, _) in part.match_indices('%') {
        let escape = bytes.get(at + 1..at + 3);
        if !escape.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
            return Err(format!(
                "{what} holds a `%` that starts no `%XX` escape: write `%` itself as %25"
            ));
        }
        if escape == Some(b"00") {
            return Err(format!("{what} holds `%00`, which libpq refuses"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn password(raw: &str) -> Option<&str> {
        let parts = parse(raw).unwrap_or_else(|err| panic!("{raw:?}: {err}"));
        parts.password.map(|range| &raw[range])
    }

    /// What libpq 15 gives for each (`PQconninfoParse`), checked by hand.
    #[test]
    fn finds_the_password_libpq_finds() {
        assert_eq!(password("postgres://app:pa?ss@db/p"), Some("pa?ss"));
        assert_eq!(password("postgres://app:pa#ss@db/p"), Some("pa#ss"));
        assert_eq!(password("postgres://app:a:b@db/p"), Some("a:b"));
        assert_eq!(password("postgresql://:pw@db/p"), Some("pw"));
        assert_eq!(password("postgres://app:@db/p"), Some(""));
        assert_eq!(password("postgres://app@db/p"), None);
        assert_eq!(password("postgres://app:pw@[::1]:5432,h2:2/p"), Some("pw"));
        assert_eq!(password("postgres:///p?host=/tmp"), None);
    }

    #[test]
    fn finds_the_query_after_the_hosts_and_the_database() {
        let raw = "postgres://app:a?b@db:5432/p?sslmode=require&pass%77ord=x#y&";
        let parts = parse(raw).expect("parses");
        assert!(parts.has_query);
        let params: Vec<(&str, &str)> = parts
            .params
            .iter()
            .map(|param| (param.key.as_str(), &raw[param.value.clone()]))
            .collect();
        assert_eq!(params, [("sslmode", "require"), ("password", "x#y")]);
        assert!(!parse("postgres://app:a?b@db/p").expect("parses").has_query);
    }

    #[test]
    fn refuses_what_libpq_misreads_or_quotes_in_its_error() {
        for (raw, expected) in [
            ("postgres://app:pa/ss@db/p", "%2F"),
            ("postgres://app:p@ss@db/p", "%40"),
            ("postgres://db/p?user=a@b", "%40"),
            ("postgres://app:50%off@db/p", "the password holds a `%`"),
            ("postgres://app:a%00@db/p", "`%00`"),
            ("postgres://db%zz/p", "a host holds"),
            ("postgres://db:5x%/p", "a port holds"),
            ("postgres://db/p%", "the database name holds"),
            ("postgres://db/p?password=a&b", "%26"),
            ("postgres://db/p?password=a&b=c", "%26"),
            ("postgres://db/p?password=a=b", "%3D"),
            ("postgres://db/p?password=100%", "value holds a `%`"),
            ("postgres://[::1/p", "no closing `]`"),
            ("postgres://[]/p", "is empty"),
            ("postgres://[::1]x/p", "followed by"),
        ] {
            let err = parse(raw).expect_err(raw);
            assert!(err.contains(expected), "{raw:?}: {err}");
        }
    }
}
