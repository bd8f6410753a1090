//! Idempotency keys: the value a client sends in `Idempotency-Key` so that a retried POST is
//! answered with the first attempt's response instead of being carried out again.

use std::time::Duration;

/// A client's idempotency key: 1 to 255 visible ASCII characters. The header may carry it as a
/// Structured Field string (`"a1b2"`, the IETF draft's form) or bare (`a1b2`, what Stripe-style
/// clients send); both are the same key. A comma outside a quoted string separates values, as
/// in every HTTP field (RFC 9110 5.3: `a,b` is the same as the field sent twice), so `a,b`,
/// `a, b` and `"a", "b"` are alike refused as several keys; `"a,b"` is the one key `a,b`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyKeyError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters", max = IdempotencyKey::MAX_LEN)]
    TooLong,
    #[error("must be visible ASCII characters only (no spaces or control characters)")]
    NotVisibleAscii,
    #[error("is a quoted string that is not closed or has a bad escape")]
    BadQuoting,
    #[error(
        "holds several values (a comma outside a quoted string separates them); send one key, \
         quoted if it contains a comma"
    )]
    SeveralValues,
}

impl IdempotencyKey {
    pub const MAX_LEN: usize = 255;

    /// The key a header value names: the contents of a quoted Structured Field string
    /// (`\"` and `\\` unescaped), or the bare value itself.
    pub fn parse(header_value: &str) -> Result<Self, IdempotencyKeyError> {
        let value = match header_value.strip_prefix('"') {
            Some(quoted) => unquote(quoted)?,
            None if header_value.contains(',') => return Err(IdempotencyKeyError::SeveralValues),
            None => header_value.to_owned(),
        };
        Self::from_contents(value)
    }

    /// A key as stored: its contents, as [`as_str`](Self::as_str) gave them, never a header's
    /// quoted form (the key `"q1`, sent as `"\"q1"`, is stored as `"q1`).
    pub fn from_stored(contents: &str) -> Result<Self, IdempotencyKeyError> {
        Self::from_contents(contents.to_owned())
    }

    fn from_contents(value: String) -> Result<Self, IdempotencyKeyError> {
        if value.is_empty() {
            return Err(IdempotencyKeyError::Empty);
        }
        if !value.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(IdempotencyKeyError::NotVisibleAscii);
        }
        if value.len() > Self::MAX_LEN {
            return Err(IdempotencyKeyError::TooLong);
        }
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The inside of an sf-string after its opening quote: up to the closing quote, which must end
/// the value.
fn unquote(quoted: &str) -> Result<String, IdempotencyKeyError> {
    let mut value = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(char) = chars.next() {
        match char {
            '\\' => match chars.next() {
                Some(escaped @ ('"' | '\\')) => value.push(escaped),
                _ => return Err(IdempotencyKeyError::BadQuoting),
            },
            '"' => {
                let rest = chars.as_str();
                return if rest.is_empty() {
                    Ok(value)
                } else if rest.trim_start_matches([' ', '\t']).starts_with(',') {
                    Err(IdempotencyKeyError::SeveralValues)
                } else {
                    Err(IdempotencyKeyError::BadQuoting)
                };
            }
            other => value.push(other),
        }
    }
    Err(IdempotencyKeyError::BadQuoting)
}

/// How long a stored response is replayed; after that the key may be used again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdempotencyRetention(Duration);

impl IdempotencyRetention {
    /// The IETF draft's suggestion and Stripe's practice: a day.
    pub const DEFAULT: Self = Self(Duration::from_secs(24 * 3600));

    pub const fn new(period: Duration) -> Self {
        Self(period)
    }

    pub const fn get(self) -> Duration {
        self.0
    }

    /// Whether a response stored at `stored_at` (seconds since the epoch) is still replayed at
    /// `now`. Times are whole seconds, so a response is kept for at least the retention and
    /// less than a second more, never less.
    pub fn keeps(self, stored_at: i64, now: i64) -> bool {
        let age = now.saturating_sub(stored_at);
        u64::try_from(age).map_or(true, |age| age <= self.0.as_secs())
    }
}

impl Default for IdempotencyRetention {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quoted_and_the_bare_form_are_the_same_key() {
        let bare = IdempotencyKey::parse("order-7f3a").unwrap();
        assert_eq!(IdempotencyKey::parse("\"order-7f3a\"").unwrap(), bare);
        assert_eq!(bare.as_str(), "order-7f3a");
    }

    #[test]
    fn a_stored_key_reads_back_as_itself_in_every_header_form() {
        for header in [
            "order-7f3a",
            "\"order-7f3a\"",
            r#""\"q1""#,
            r#""a\\b""#,
            r#""\"""#,
        ] {
            let key = IdempotencyKey::parse(header).unwrap();
            assert_eq!(
                IdempotencyKey::from_stored(key.as_str()),
                Ok(key),
                "{header}"
            );
        }
    }

    #[test]
    fn a_stored_key_is_checked_like_a_header_key() {
        assert_eq!(
            IdempotencyKey::from_stored(""),
            Err(IdempotencyKeyError::Empty)
        );
        assert_eq!(
            IdempotencyKey::from_stored("two words"),
            Err(IdempotencyKeyError::NotVisibleAscii)
        );
    }

    /// The quoted (Structured Field string) form of a key's `contents`.
    fn quoted(contents: &str) -> String {
        format!(
            "\"{}\"",
            contents.replace('\\', "\\\\").replace('"', "\\\"")
        )
    }

    proptest::proptest! {
        /// Every key: its quoted form, and its bare form where there is one, are that key, and
        /// it reads back from storage as itself.
        #[test]
        fn every_form_of_every_key_is_that_key(contents in "[!-~]{1,255}") {
            let key = IdempotencyKey::parse(&quoted(&contents)).unwrap();
            proptest::prop_assert_eq!(key.as_str(), contents.as_str());
            if !contents.starts_with('"') && !contents.contains(',') {
                proptest::prop_assert_eq!(IdempotencyKey::parse(&contents), Ok(key.clone()));
            }
            proptest::prop_assert_eq!(IdempotencyKey::from_stored(key.as_str()), Ok(key));
        }
    }

    #[test]
    fn a_comma_outside_quotes_separates_values_in_every_form() {
        for value in [
            "a,b",
            "a, b",
            "a ,b",
            r#""a", "b""#,
            r#""a","b""#,
            ",",
            "a,",
        ] {
            assert_eq!(
                IdempotencyKey::parse(value),
                Err(IdempotencyKeyError::SeveralValues),
                "{value:?}"
            );
        }
        assert_eq!(IdempotencyKey::parse(r#""a,b""#).unwrap().as_str(), "a,b");
        // Stored as its contents, it reads back as the same one key.
        assert_eq!(
            IdempotencyKey::from_stored("a,b"),
            IdempotencyKey::parse(r#""a,b""#)
        );
    }

    #[test]
    fn escapes_in_the_quoted_form_are_undone() {
        let key = IdempotencyKey::parse(r#""a\"b\\c""#).unwrap();
        assert_eq!(key.as_str(), r#"a"b\c"#);
    }

    #[test]
    fn refuses_what_is_not_a_key() {
        let too_long = "k".repeat(256);
        for (value, error) in [
            ("", IdempotencyKeyError::Empty),
            ("\"\"", IdempotencyKeyError::Empty),
            ("a b", IdempotencyKeyError::NotVisibleAscii),
            ("\"a b\"", IdempotencyKeyError::NotVisibleAscii),
            ("clé", IdempotencyKeyError::NotVisibleAscii),
            ("a\tb", IdempotencyKeyError::NotVisibleAscii),
            ("\"open", IdempotencyKeyError::BadQuoting),
            ("\"a\"b", IdempotencyKeyError::BadQuoting),
            (r#""a\x""#, IdempotencyKeyError::BadQuoting),
            (too_long.as_str(), IdempotencyKeyError::TooLong),
        ] {
            assert_eq!(IdempotencyKey::parse(value), Err(error), "{value:?}");
        }
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
    }

    #[test]
    fn a_response_is_kept_for_the_retention_and_not_a_second_longer() {
        let day = IdempotencyRetention::DEFAULT;
        assert!(day.keeps(1_000, 1_000));
        assert!(day.keeps(1_000, 1_000 + 86_400));
        assert!(!day.keeps(1_000, 1_000 + 86_401));
        // A clock that went back keeps it.
        assert!(day.keeps(1_000, 900));
    }
}
