//! `PostgresUrl`: a libpq connection string, in either of libpq's forms (a `postgres://` URL or
//! `host=db user=app password=...` keywords), whose password is only ever handed to libpq.
//! Every `Display`, `Debug` and error message shows `***` in its place.
//!
//! Handled as text rather than with the `url` crate: libpq URLs may name several hosts
//! (`postgres://h1:5432,h2:5433/db`), which a WHATWG URL parser refuses, libpq splits them by
//! rules of its own (`libpq_uri.rs`), and libpq must get the operator's string as written, with
//! our parameters only appended.

use std::fmt;
use std::time::Duration;

use crate::libpq_uri::{self, UriParts, PREFIXES, SECRET_PARAMETERS};
use crate::PoolSettings;

/// A libpq connection string. Its password never leaves this type except towards libpq.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    raw: String,
    form: Form,
}

#[derive(Clone, PartialEq, Eq)]
enum Form {
    /// `postgres://user:password@host/db?key=value`, and where libpq finds its parts.
    Url(UriParts),
    /// `host=db password='a b'`: the pairs as libpq will read them (quotes and escapes undone).
    Keywords(Vec<(String, String)>),
}

const REDACTED: &str = "***";

fn is_secret(key: &str) -> bool {
    SECRET_PARAMETERS.contains(&key)
}

const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_PROBES: u32 = 3;

impl PostgresUrl {
    /// Parses a URL starting `postgres://` or `postgresql://` (in any case: libpq knows only
    /// lower case, so that is what it gets). The error says what to change, never quoting the
    /// URL.
    pub(crate) fn parse_url(raw: &str) -> Result<Self, String> {
        let prefix = PREFIXES
            .iter()
            .find(|prefix| {
                raw.get(..prefix.len())
                    .is_some_and(|given| given.eq_ignore_ascii_case(prefix))
            })
            .ok_or("a PostgreSQL URL starts with `postgres://`")?;
        let raw = format!("{prefix}{}", &raw[prefix.len()..]);
        let parts = libpq_uri::parse(&raw)?;
        Ok(Self {
            raw,
            form: Form::Url(parts),
        })
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
        let pairs = match &self.form {
            Form::Url(parts) => return self.redacted_url(parts),
            Form::Keywords(pairs) => pairs,
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

    /// The URL with the password and each secret parameter's value replaced.
    fn redacted_url(&self, parts: &UriParts) -> String {
        let mut secrets: Vec<_> = parts.password.iter().cloned().collect();
        secrets.extend(
            parts
                .params
                .iter()
                .filter(|param| param.is_secret())
                .map(|param| param.value.clone()),
        );
        secrets.sort_by_key(|range| range.start);
        let mut shown = String::with_capacity(self.raw.len());
        let mut copied = 0;
        for secret in secrets {
            shown.push_str(&self.raw[copied..secret.start]);
            shown.push_str(REDACTED);
            copied = secret.end;
        }
        shown.push_str(&self.raw[copied..]);
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
    /// (The statement timeout is set per session instead; see `sql/engine/connection.rs`.) libpq has
    /// no URL fragments, so a `#` is left where it is, part of whatever holds it.
    pub(crate) fn for_libpq(&self, settings: &PoolSettings) -> String {
        let mut url = self.raw.clone();
        let mut has_query = matches!(&self.form, Form::Url(parts) if parts.has_query);
        let mut add = |key: &str, value: String| {
            if self.params().any(|(given, _)| given == key) {
                return;
            }
            match self.form {
                Form::Url(_) if !has_query => {
                    url.push('?');
                    has_query = true;
                }
                Form::Url(_) if !url.ends_with(['?', '&']) => url.push('&'),
                Form::Url(_) => {}
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
        url
    }

    /// The secrets as written in the URL: the password after `user:` in the userinfo, and every
    /// secret parameter (`password=`, `sslpassword=`, ...). Empty ones are skipped, as
    /// replacing "" would mangle the text.
    fn passwords(&self) -> impl Iterator<Item = &str> {
        let in_userinfo = match &self.form {
            Form::Url(parts) => parts.password.clone().map(|range| &self.raw[range]),
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
            Form::Url(parts) => Box::new(
                parts
                    .params
                    .iter()
                    .map(|param| (param.key.as_str(), &self.raw[param.value.clone()])),
            ),
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
    use percent_encoding::NON_ALPHANUMERIC;

    use super::*;

    fn pg(raw: &str) -> PostgresUrl {
        PostgresUrl::parse_url(raw).unwrap_or_else(|err| panic!("{raw:?}: {err}"))
    }

    /// RFC 3986's reserved characters, `%` and a space.
    const RESERVED: &str = ":/?#[]@!$&'()*+,;=% ";

    /// A password holding `c` twice, and its pieces, none of which may show.
    fn password_with(c: char) -> (String, [&'static str; 3]) {
        (format!("Xy{c}Zw{c}Qv"), ["Xy", "Zw", "Qv"])
    }

    /// What may be shown of `raw`: its `Display` (logs, error messages), its `Debug`, and what
    /// is left of a driver message quoting the password; or why it is refused.
    fn shown(raw: &str, password: &str) -> Result<[String; 3], String> {
        raw.parse::<crate::DatabaseUrl>()
            .map(|url| {
                let echoed = url.scrub(&format!("password \"{password}\" refused"));
                [url.to_string(), format!("{url:?}"), echoed]
            })
            .map_err(|err| err.to_string())
    }

    fn assert_hidden(text: &str, pieces: &[&str], raw: &str) {
        for piece in pieces {
            assert!(!text.contains(piece), "{raw:?} shows {piece:?}: {text}");
        }
    }

    /// `password` written as it is, and percent-encoded.
    fn spellings(password: &str) -> [(String, bool); 2] {
        let encoded = percent_encoding::utf8_percent_encode(password, NON_ALPHANUMERIC);
        [(password.to_owned(), false), (encoded.to_string(), true)]
    }

    /// Checks what `raw` shows: `expected` when it is accepted (the password hidden, the host,
    /// port and database shown); when `refused`, a message naming the encoding of `c` instead,
    /// without the password.
    fn assert_shows(raw: &str, c: char, refused: bool, expected: &str) {
        let (password, pieces) = password_with(c);
        match shown(raw, &password) {
            Ok([display, debug, echoed]) => {
                assert!(!refused, "{raw:?} should be refused, shows {display}");
                assert_eq!(display, expected, "{raw:?}");
                assert_hidden(&debug, &pieces, raw);
                assert_hidden(&echoed, &pieces, raw);
            }
            Err(refusal) => {
                assert!(refused, "{raw:?} refused: {refusal}");
                assert_hidden(&refusal, &pieces, raw);
                let encoding = format!("%{:02X}", u32::from(c));
                assert!(refusal.contains(&encoding), "{raw:?}: {refusal}");
            }
        }
    }

    /// Each reserved character in the password of `user:password@`. libpq takes the first `/`
    /// to end the host (so no `@` before it means no password, and the password becomes the
    /// port) and the first `@` to end the password, and it decodes `%`: written as they are,
    /// those three are refused, saying how to encode them.
    #[test]
    fn no_character_shows_a_password_in_the_userinfo() {
        for c in RESERVED.chars() {
            let (password, _) = password_with(c);
            for (written, encoded) in spellings(&password) {
                let raw =
                    format!("postgres://app:{written}@db.internal:5433/petstore?sslmode=require");
                let refused = !encoded && "/@%".contains(c);
                let expected = "postgres://app:***@db.internal:5433/petstore?sslmode=require";
                assert_shows(&raw, c, refused, expected);
            }
        }
    }

    /// Each reserved character in `?password=`. libpq splits the query at every `&` and `=`,
    /// and decodes `%`; an `@` anywhere but at the end of `user:password@` is refused as in the
    /// userinfo. A `#` is no fragment to libpq: it is part of the password.
    #[test]
    fn no_character_shows_a_password_parameter() {
        for c in RESERVED.chars() {
            let (password, _) = password_with(c);
            for (written, encoded) in spellings(&password) {
                let raw = format!(
                    "postgres://app@db.internal:5433/petstore?password={written}&sslmode=require"
                );
                let refused = !encoded && "&=%@".contains(c);
                let expected =
                    "postgres://app@db.internal:5433/petstore?password=***&sslmode=require";
                assert_shows(&raw, c, refused, expected);
            }
        }
    }

    /// Each reserved character in a quoted keyword value.
    #[test]
    fn no_character_shows_a_keyword_password() {
        for c in RESERVED.chars() {
            let (password, _) = password_with(c);
            let quoted = password.replace('\\', "\\\\").replace('\'', "\\'");
            let raw = format!("host=db.internal port=5433 dbname=petstore password='{quoted}'");
            let expected = "host=db.internal port=5433 dbname=petstore password=***";
            assert_shows(&raw, c, false, expected);
        }
    }

    /// libpq percent-decodes parameter names too.
    #[test]
    fn an_encoded_password_parameter_is_hidden_too() {
        let (display, echoed) = match shown("postgres://db/p?pass%77ord=Xy", "Xy") {
            Ok([display, _, echoed]) => (display, echoed),
            Err(refusal) => panic!("refused: {refusal}"),
        };
        assert_eq!(display, "postgres://db/p?pass%77ord=***");
        assert_eq!(echoed, "password \"***\" refused");
    }

    /// libpq has no fragments, and its prefix is lower case: a `#` or `?` in the password stays
    /// the password's once our parameters are added.
    #[test]
    fn libpq_gets_the_password_as_written() {
        let no_limit = settings(Duration::from_secs(5), Duration::ZERO);
        for raw in ["postgres://app:Xy#Zw@db/p", "postgres://app:Xy?Zw@db/p"] {
            let url: crate::DatabaseUrl = raw.parse().expect(raw);
            let crate::DatabaseUrl::Postgres(url) = url else {
                panic!("{raw} is PostgreSQL");
            };
            assert_eq!(
                url.for_libpq(&no_limit),
                format!("{raw}?connect_timeout=5{LIMITS}")
            );
        }
        let url: crate::DatabaseUrl = "POSTGRES://app:pw@db/p".parse().expect("upper case");
        let crate::DatabaseUrl::Postgres(url) = url else {
            panic!("PostgreSQL");
        };
        assert!(url
            .for_libpq(&no_limit)
            .starts_with("postgres://app:pw@db/p?"));
    }

    #[test]
    fn scrub_hides_the_password_in_driver_messages() {
        let url = pg("postgres://app:hunter%232@db/petstore");
        assert_eq!(
            url.scrub("bad token \"hunter%232\", password \"hunter#2\""),
            "bad token \"***\", password \"***\""
        );
    }

    /// A primary and its standby in one URL: every host is kept as written, the password is
    /// hidden, and our parameters follow the operator's `target_session_attrs`.
    #[test]
    fn a_multi_host_url_keeps_its_hosts_and_hides_its_password() {
        let raw = "postgres://app:s3cret@db1.internal:5432,db2.internal:5433,[::1]/petstore\
                   ?target_session_attrs=read-write";
        let url: crate::DatabaseUrl = raw.parse().expect("a multi-host URL");
        let shown = "postgres://app:***@db1.internal:5432,db2.internal:5433,[::1]/petstore\
                     ?target_session_attrs=read-write";
        assert_eq!(url.to_string(), shown);
        assert!(!format!("{url:?}").contains("s3cret"));
        let crate::DatabaseUrl::Postgres(url) = url else {
            panic!("{raw} is PostgreSQL");
        };
        let no_limit = settings(Duration::from_secs(5), Duration::ZERO);
        assert_eq!(
            url.for_libpq(&no_limit),
            format!("{raw}&connect_timeout=5{LIMITS}")
        );
    }

    /// libpq would read `app:pa` as host and port, and quote `pa` in its error.
    #[test]
    fn a_password_with_an_unencoded_slash_is_refused_saying_how_to_write_it() {
        let err = PostgresUrl::parse_url("postgres://app:pa/ss@db/petstore").expect_err("refused");
        assert!(err.contains("%2F"), "{err}");
        assert!(!err.contains("pa/") && !err.contains("ss@"), "{err}");
        assert_eq!(
            pg("postgres://app:pa%2Fss@db/petstore").to_string(),
            "postgres://app:***@db/petstore"
        );
    }

    #[test]
    fn only_secret_parameters_are_hidden_to_their_end() {
        let url = pg("postgres://db/p?passfile=/pgpass&password=y#z&sslmode=require");
        assert_eq!(
            url.to_string(),
            "postgres://db/p?passfile=/pgpass&password=***&sslmode=require"
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
    fn parameters_go_at_the_end_past_a_hash_and_after_a_bare_question_mark() {
        let no_limit = settings(Duration::from_secs(5), Duration::ZERO);
        assert_eq!(
            pg("postgres://db/p?sslmode=require#x").for_libpq(&no_limit),
            format!("postgres://db/p?sslmode=require#x&connect_timeout=5{LIMITS}")
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
