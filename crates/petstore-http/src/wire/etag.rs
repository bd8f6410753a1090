//! Entity tags (RFC 9110 §8.8.3): the `ETag` a representation goes out with, and the tags a
//! client sends back in `If-Match` and `If-None-Match`.
//!
//! Every tag the service makes is strong and names the *uncompressed* representation. A
//! response the compression middleware gzips carries the tag with [`GZIP_SUFFIX`] inside the
//! quotes (`"abc"` becomes `"abc-gz"`): the gzipped bytes are another representation, and a
//! cache must not mix them up with the plain ones under one strong tag. Both comparisons read
//! `"abc-gz"` as `"abc"`, so a client that stored either form can send it back; the tags the
//! service makes never end in the suffix themselves.

use std::fmt;

use actix_web::http::header::HeaderValue;

/// What a gzipped response adds at the end of its tag's opaque part.
pub(crate) const GZIP_SUFFIX: &str = "-gz";

/// One entity tag: strong (`"abc"`) or weak (`W/"abc"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntityTag {
    weak: bool,
    /// Between the quotes, as sent: `etagc` characters only.
    opaque: String,
}

/// Text that is not an `entity-tag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MalformedTag;

impl EntityTag {
    /// The strong tag `"<opaque>"`. `opaque` is built by the service (`"1.3"`, `"L1-<hash in hex>"`),
    /// so it holds only printable ASCII other than `"` and never ends in [`GZIP_SUFFIX`].
    pub(crate) fn strong(opaque: impl Into<String>) -> Self {
        let opaque = opaque.into();
        debug_assert!(
            opaque.bytes().all(is_etagc) && !opaque.ends_with(GZIP_SUFFIX),
            "`{opaque}` cannot be an entity tag the service makes"
        );
        Self {
            weak: false,
            opaque,
        }
    }

    /// Parses one `entity-tag`: `"opaque"` or `W/"opaque"`, with no space around it.
    pub(crate) fn parse(text: &[u8]) -> Result<Self, MalformedTag> {
        let (weak, opaque) = split(text)?;
        Ok(Self {
            weak,
            // `obs-text` bytes are not UTF-8 of their own; no tag of the service has them, so a
            // lossy copy still compares unequal to every tag it makes.
            opaque: String::from_utf8_lossy(opaque).into_owned(),
        })
    }

    pub(crate) fn is_weak(&self) -> bool {
        self.weak
    }

    /// The opaque part without a gzipped response's [`GZIP_SUFFIX`]: what names the
    /// uncompressed representation.
    pub(crate) fn opaque(&self) -> &str {
        self.opaque
            .strip_suffix(GZIP_SUFFIX)
            .unwrap_or(&self.opaque)
    }

    /// This tag as a gzipped response carries it: [`GZIP_SUFFIX`] added inside the quotes.
    pub(crate) fn gzipped(&self) -> Self {
        Self {
            weak: self.weak,
            opaque: format!("{}{GZIP_SUFFIX}", self.opaque),
        }
    }

    /// Weak comparison (RFC 9110 §8.8.3.2), for `If-None-Match`, with `text`, one `entity-tag`
    /// as a client sends it: the opaque parts equal, whether either tag is weak or not,
    /// [`GZIP_SUFFIX`] aside. `text` is read in place rather than parsed into a tag of its own:
    /// a conditional GET compares every tag it is sent with one.
    pub(crate) fn weakly_named_by(&self, text: &[u8]) -> Result<bool, MalformedTag> {
        let (_weak, opaque) = split(text)?;
        let opaque = opaque
            .strip_suffix(GZIP_SUFFIX.as_bytes())
            .unwrap_or(opaque);
        // An `obs-text` byte makes the text unequal to every tag the service makes.
        Ok(opaque == self.opaque().as_bytes())
    }

    /// The tag as an `ETag` header value.
    pub(crate) fn header_value(&self) -> HeaderValue {
        // Parsed tags hold `etagc` bytes (obs-text replaced by UTF-8, which header values
        // take as opaque bytes) and made ones printable ASCII: always a valid value. The
        // formatted text becomes the value's bytes without a copy.
        HeaderValue::try_from(self.text()).unwrap_or(HeaderValue::from_static("\"\""))
    }

    /// `W/"opaque"` or `"opaque"`, pushed in pieces: an `ETag` is written on every read.
    fn text(&self) -> String {
        let mut text = String::with_capacity(self.opaque.len() + 4);
        if self.weak {
            text.push_str("W/");
        }
        text.push('"');
        text.push_str(&self.opaque);
        text.push('"');
        text
    }
}

impl fmt::Display for EntityTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// One `entity-tag`'s weakness and opaque part (between the quotes), or [`MalformedTag`].
fn split(text: &[u8]) -> Result<(bool, &[u8]), MalformedTag> {
    let (weak, quoted) = match text.strip_prefix(b"W/") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let opaque = quoted
        .strip_prefix(b"\"")
        .and_then(|rest| rest.strip_suffix(b"\""))
        .filter(|opaque| opaque.iter().copied().all(is_etagc))
        .ok_or(MalformedTag)?;
    Ok((weak, opaque))
}

/// `etagc = %x21 / %x23-7E / obs-text`: a visible character other than `"`, or a byte above
/// ASCII.
fn is_etagc(byte: u8) -> bool {
    byte == 0x21 || (0x23..=0x7E).contains(&byte) || byte >= 0x80
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn tag(text: &str) -> EntityTag {
        EntityTag::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn strong_and_weak_tags_parse_and_print_as_sent() {
        for text in [r#""abc""#, r#"W/"abc""#, r#""""#, r#""17.3""#, r#""a,b""#] {
            assert_eq!(tag(text).to_string(), text);
        }
        assert!(tag(r#"W/"x""#).is_weak());
        assert!(!tag(r#""x""#).is_weak());
        assert_eq!(tag(r#"W/"x""#).opaque(), "x");
    }

    #[test]
    fn text_that_is_not_an_entity_tag_is_refused() {
        for text in [
            "abc",
            r#""abc"#,
            r#"abc""#,
            r#"w/"abc""#,
            r#" "abc""#,
            r#""abc" "#,
            r#""a"b""#,
            r#""a b""#,
            "W/",
            "*",
            "",
        ] {
            assert_eq!(
                EntityTag::parse(text.as_bytes()),
                Err(MalformedTag),
                "{text}"
            );
        }
    }

    #[test]
    fn a_gzipped_tag_has_the_suffix_inside_the_quotes() {
        let plain = EntityTag::strong("abc");
        assert_eq!(plain.gzipped().to_string(), r#""abc-gz""#);
        assert_eq!(plain.gzipped().opaque(), "abc");
        assert_eq!(tag(r#"W/"abc""#).gzipped().to_string(), r#"W/"abc-gz""#);
        assert_eq!(plain.header_value(), r#""abc""#);
    }

    #[test]
    fn weak_comparison_ignores_weakness_and_the_gzip_suffix() {
        let current = EntityTag::strong("abc");
        for sent in [r#""abc""#, r#"W/"abc""#, r#""abc-gz""#, r#"W/"abc-gz""#] {
            assert_eq!(current.weakly_named_by(sent.as_bytes()), Ok(true), "{sent}");
        }
        for sent in [r#""ab""#, r#""abc-gz-gz""#, r#""""#, "\"abc\u{e9}\""] {
            assert_eq!(
                current.weakly_named_by(sent.as_bytes()),
                Ok(false),
                "{sent}"
            );
        }
        for malformed in ["abc", r#""abc"#, r#" "abc""#, "*", ""] {
            assert_eq!(
                current.weakly_named_by(malformed.as_bytes()),
                Err(MalformedTag),
                "{malformed}"
            );
        }
    }
}
