//! `PostgresUrl`: a libpq connection URL whose password is only ever handed to libpq. Every
//! `Display`, `Debug` and error message shows `***` in its place.

use std::fmt;
use std::time::Duration;

/// A libpq connection URL. Its password never leaves this type except towards libpq.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

const REDACTED: &str = "***";

impl PostgresUrl {
    /// Wraps `raw`, which the caller has checked starts with `postgres://` or `postgresql://`.
    pub(crate) fn new(raw: &str) -> Self {
        Self(raw.to_owned())
    }

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

    #[test]
    fn connect_timeout_is_added_in_whole_seconds_unless_present() {
        let url = pg("postgres://app@db/petstore");
        assert_eq!(
            url.for_libpq(Duration::from_millis(1500)),
            "postgres://app@db/petstore?connect_timeout=2"
        );
        assert_eq!(
            url.for_libpq(Duration::ZERO),
            "postgres://app@db/petstore?connect_timeout=1"
        );
        let url = pg("postgres://db/p?sslmode=disable");
        assert_eq!(
            url.for_libpq(Duration::from_secs(3)),
            "postgres://db/p?sslmode=disable&connect_timeout=3"
        );
        let url = pg("postgres://db/p?connect_timeout=9");
        assert_eq!(
            url.for_libpq(Duration::from_secs(3)),
            "postgres://db/p?connect_timeout=9"
        );
    }
}
