//! `PostgresUrl`: a libpq connection string, in either of libpq's forms (a `postgres://` URL or
//! `host=db user=app password=...` keywords), whose password is only ever handed to libpq.
//! Every `Display`, `Debug` and error message shows `***` in its place.
//!
//! Handled as text rather than with the `url` crate: libpq URLs may name several hosts
//! (`postgres://h1:5432,h2:5433/db`), which a WHATWG URL parser refuses, and libpq must get the
//! operator's string exactly as written, with our parameters only appended.

use std::fmt;
use std::time::Duration;

use crate::PoolSettings;

/// A libpq connection string. Its password never leaves this type except towards libpq.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    raw: String,
    form: Form,
}

#[derive(Clone, PartialEq, Eq)]
enum Form {
    /// `postgres://user:password@host/db?key=value`
    Url,
    /// `host=db password='a b'`: the pairs as libpq will read them (quotes and escapes undone).
    Keywords(Vec<(String, String)>),
}

const REDACTED: &str = "***";

/// libpq parameters whose value is a secret: the password, and the passphrase of the client's
/// TLS key. (`passfile`, `sslkey` and `sslcert` name files, which are not secrets themselves.)
const SECRET_PARAMETERS: [&str; 2] = ["password", "sslpassword"];

fn is_secret(key: &str) -> bool {
    SECRET_PARAMETERS.contains(&key)
}

const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_PROBES: u32 = 3;

impl PostgresUrl {
    /// Wraps `raw`, which the caller has checked starts with `postgres://` or `postgresql://`.
    pub(crate) fn new(raw: &str) -> Self {
        Self {
            raw: raw.to_owned(),
            form: Form::Url,
        }
    }

    /// Parses libpq's keyword form, `key=value` pairs separated by spaces, a value in single
    /// quotes when it holds spaces (`\'` and `\\` escape inside them). The error names the
    /// problem, never the text, which may hold a password.
    pub(crate) fn from_keywords(raw: &str) -> Result<Self, &'static str> {
        let pairs = keyword_pairs(raw)?;
        if pairs.is_empty() {
            return Err("it holds no `key=value` pair");
        }
        Ok(Self {
            raw: raw.to_owned(),
            form: Form::Keywords(pairs),
        })
    }

    /// The connection string with any password replaced by `***`, fit for logs and terminals.
    pub fn redacted(&self) -> String {
        let Form::Keywords(pairs) = &self.form else {
            return self.redacted_url();
        };
        pairs
            .iter()
            .map(|(key, value)| {
                if is_secret(key) {
                    format!("{key}={REDACTED}")
                } else {
                    format!("{key}={}", quote_keyword_value(value))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn redacted_url(&self) -> String {
        let raw = self.raw.as_str();
        let (before_query, query) = match raw.find(['?', '#']) {
            Some(at) => raw.split_at(at),
            None => (raw, ""),
        };
        let mut shown = match userinfo_password_span(before_query) {
            Some((start, end)) => format!("{}{REDACTED}{}", &raw[..start], &before_query[end..]),
            None => before_query.to_owned(),
        };
        // The query's `key=value` pairs, each secret one's value replaced; a fragment as it is.
        let (query, fragment) = match query.find('#') {
            Some(at) => query.split_at(at),
            None => (query, ""),
        };
        if let Some(pairs) = query.strip_prefix('?') {
            shown.push('?');
            let pairs: Vec<String> = pairs
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if is_secret(key) => format!("{key}={REDACTED}"),
                    _ => pair.to_owned(),
                })
                .collect();
            shown.push_str(&pairs.join("&"));
        }
        shown.push_str(fragment);
        shown
    }

    /// `text` with every occurrence of the password (as written, and percent-decoded) replaced,
    /// for driver messages that might echo part of the URL back.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in self.passwords() {
            text = text.replace(
                percent_encoding::percent_decode_str(secret)
                    .decode_utf8_lossy()
                    .as_ref(),
                REDACTED,
            );
            text = text.replace(secret, REDACTED);
        }
        text
    }

    /// The URL libpq gets, with limits added so that no database trouble can hold a request
    /// forever (each only where the operator has not set that parameter already):
    ///
    /// - `connect_timeout`: an unreachable server fails a connection attempt in time, not after
    ///   the OS's TCP timeout.
    /// - `tcp_user_timeout` and TCP keepalives: a server the network has lost, which can cancel
    ///   nothing, is noticed by the client within seconds, whether a request is being sent
    ///   (unacknowledged data) or its answer awaited (keepalive probes go unanswered).
    ///
    /// (The statement timeout is set per session instead; see `sql/connection.rs`.) Parameters go
    /// before any `#`, which libpq would otherwise read as part of the last value.
    pub(crate) fn for_libpq(&self, settings: &PoolSettings) -> String {
        let (base, fragment) = match (&self.form, self.raw.find('#')) {
            (Form::Url, Some(at)) => self.raw.split_at(at),
            _ => (self.raw.as_str(), ""),
        };
        let mut url = base.trim_end().to_owned();
        let mut add = |key: &str, value: String| {
            if self.params().any(|(given, _)| given == key) {
                return;
            }
            match self.form {
                Form::Url if !url.ends_with(['?', '&']) => {
                    url.push(if url.contains('?') { '&' } else { '?' });
                }
                Form::Url => {}
                Form::Keywords(_) => url.push(' '),
            }
            url.push_str(key);
            url.push('=');
            url.push_str(&value);
        };
        // libpq counts whole seconds; rounding up keeps sub-second settings from meaning "forever" (0).
        let connect_seconds = settings
            .connect_timeout
            .as_secs()
            .saturating_add(u64::from(settings.connect_timeout.subsec_nanos() > 0))
            .max(1);
        add("connect_timeout", connect_seconds.to_string());
        let statement_ms = settings.statement_timeout.as_millis();
        if statement_ms > 0 {
            add("tcp_user_timeout", statement_ms.to_string());
        }
        // A silent peer is probed after 5 s idle, every 2 s; on Linux `tcp_user_timeout` (when
        // set) then decides when it counts as dead, else 3 unanswered probes do.
        add("keepalives", "1".into());
        add("keepalives_idle", KEEPALIVE_IDLE.as_secs().to_string());
        add(
            "keepalives_interval",
            KEEPALIVE_INTERVAL.as_secs().to_string(),
        );
        add("keepalives_count", KEEPALIVE_PROBES.to_string());
        url.push_str(fragment);
        url
    }

    /// The secrets as written in the URL: the password after `user:` in the userinfo, and every
    /// secret parameter (`password=`, `sslpassword=`). Empty ones are skipped, as replacing "" would mangle the text.
    fn passwords(&self) -> impl Iterator<Item = &str> {
        let in_userinfo = match self.form {
            Form::Url => {
                let before_query = self.raw.split(['?', '#']).next().unwrap_or("");
                userinfo_password_span(before_query).map(|(start, end)| &before_query[start..end])
            }
            Form::Keywords(_) => None,
        };
        let in_params = self
            .params()
            .filter(|(key, _)| is_secret(key))
            .map(|(_, value)| value);
        in_userinfo
            .into_iter()
            .chain(in_params)
            .filter(|secret| !secret.is_empty())
    }

    /// The parameters the operator set: the URL's query, or all the keywords.
    fn params(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        match &self.form {
            Form::Url => Box::new(query_params(&self.raw)),
            Form::Keywords(pairs) => Box::new(
                pairs
                    .iter()
                    .map(|(key, value)| (key.as_str(), value.as_str())),
            ),
        }
    }
}

/// libpq's keyword syntax: `key = value` (spaces around `=` allowed), values bare or in single
/// quotes. Keys are lower-case letters and underscores, as all of libpq's are.
fn keyword_pairs(raw: &str) -> Result<Vec<(String, String)>, &'static str> {
    let mut pairs = Vec::new();
    let mut chars = raw.trim().chars().peekable();
    let skip_spaces = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
    };
    while chars.peek().is_some() {
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| c.is_ascii_lowercase() || *c == '_') {
            key.push(c);
        }
        skip_spaces(&mut chars);
        if key.is_empty() || chars.next() != Some('=') {
            return Err("libpq keywords are `key=value` pairs separated by spaces");
        }
        skip_spaces(&mut chars);
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.push(chars.next().ok_or("a quoted value is not closed")?),
                    Some(c) => value.push(c),
                    None => return Err("a quoted value is not closed"),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.push(chars.next().ok_or("a value ends in `\\`")?);
                } else {
                    value.push(c);
                }
            }
        }
        if chars.peek().is_some_and(|c| !c.is_whitespace()) {
            return Err("libpq keywords are `key=value` pairs separated by spaces");
        }
        skip_spaces(&mut chars);
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// A keyword value as libpq reads it back: quoted when empty or holding spaces, quotes or
/// backslashes.
fn quote_keyword_value(value: &str) -> String {
    if !value.is_empty() && !value.contains(|c: char| c.is_whitespace() || c == '\'' || c == '\\') {
        return value.to_owned();
    }
    let escaped = value.replace('\\', "\\\\").replace('\'', "\\'");
    format!("'{escaped}'")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(raw: &str) -> PostgresUrl {
        PostgresUrl::new(raw)
    }

    #[test]
    fn scrub_hides_the_password_in_driver_messages() {
        let url = pg("postgres://app:hunter%232@db/petstore");
        assert_eq!(
            url.scrub("bad token \"hunter%232\", password \"hunter#2\""),
            "bad token \"***\", password \"***\""
        );
    }

    #[test]
    fn a_password_with_an_unencoded_slash_is_still_hidden() {
        let url = pg("postgres://app:pa/ss@db/petstore");
        assert_eq!(url.to_string(), "postgres://app:***@db/petstore");
    }

    #[test]
    fn only_the_password_parameter_is_hidden() {
        let url = pg("postgres://db/p?mypassword=x&password=y#frag");
        assert_eq!(
            url.to_string(),
            "postgres://db/p?mypassword=x&password=***#frag"
        );
    }

    /// The TLS key's passphrase is as secret as the password, in both forms and in driver
    /// messages that echo it.
    #[test]
    fn the_tls_key_passphrase_is_hidden_too() {
        let url = pg("postgres://app:pw@db/p?sslmode=verify-full&sslpassword=k3y-phrase&sslkey=/k");
        assert_eq!(
            url.to_string(),
            "postgres://app:***@db/p?sslmode=verify-full&sslpassword=***&sslkey=/k"
        );
        assert_eq!(
            url.scrub("could not decrypt with k3y-phrase"),
            "could not decrypt with ***"
        );
        let keywords = PostgresUrl::from_keywords("host=db sslpassword='k3y phrase' user=app")
            .expect("keywords");
        assert_eq!(keywords.to_string(), "host=db sslpassword=*** user=app");
        assert_eq!(keywords.scrub("bad k3y phrase"), "bad ***");
    }

    fn settings(connect: Duration, statement: Duration) -> PoolSettings {
        PoolSettings {
            connect_timeout: connect,
            statement_timeout: statement,
            ..PoolSettings::default()
        }
    }

    const LIMITS: &str = "&keepalives=1&keepalives_idle=5&keepalives_interval=2&keepalives_count=3";

    #[test]
    fn connect_timeout_is_added_in_whole_seconds_unless_present() {
        let no_statement_limit = |connect| settings(connect, Duration::ZERO);
        let url = pg("postgres://app@db/petstore");
        assert_eq!(
            url.for_libpq(&no_statement_limit(Duration::from_millis(1500))),
            format!("postgres://app@db/petstore?connect_timeout=2{LIMITS}")
        );
        assert_eq!(
            url.for_libpq(&no_statement_limit(Duration::ZERO)),
            format!("postgres://app@db/petstore?connect_timeout=1{LIMITS}")
        );
        let url = pg("postgres://db/p?sslmode=disable");
        assert_eq!(
            url.for_libpq(&no_statement_limit(Duration::from_secs(3))),
            format!("postgres://db/p?sslmode=disable&connect_timeout=3{LIMITS}")
        );
        let url = pg("postgres://db/p?connect_timeout=9");
        assert_eq!(
            url.for_libpq(&no_statement_limit(Duration::from_secs(3))),
            format!("postgres://db/p?connect_timeout=9{LIMITS}")
        );
    }

    #[test]
    fn the_statement_timeout_bounds_unacknowledged_sends() {
        let url = pg("postgres://db/p");
        assert_eq!(
            url.for_libpq(&settings(
                Duration::from_secs(5),
                Duration::from_millis(2500)
            )),
            format!("postgres://db/p?connect_timeout=5&tcp_user_timeout=2500{LIMITS}")
        );
    }

    #[test]
    fn parameters_go_before_a_fragment_and_after_a_bare_question_mark() {
        let no_limit = settings(Duration::from_secs(5), Duration::ZERO);
        assert_eq!(
            pg("postgres://db/p?sslmode=require#x").for_libpq(&no_limit),
            format!("postgres://db/p?sslmode=require&connect_timeout=5{LIMITS}#x")
        );
        assert_eq!(
            pg("postgres://db/p?").for_libpq(&no_limit),
            format!("postgres://db/p?connect_timeout=5{LIMITS}")
        );
    }

    #[test]
    fn limits_the_operator_set_in_the_url_are_kept() {
        let url = pg("postgres://db/p?keepalives_idle=60");
        let libpq = url.for_libpq(&settings(Duration::from_secs(5), Duration::from_secs(5)));
        assert_eq!(
            libpq,
            "postgres://db/p?keepalives_idle=60\
             &connect_timeout=5&tcp_user_timeout=5000\
             &keepalives=1&keepalives_interval=2&keepalives_count=3"
        );
    }
}
