//! `PhotoUrl` and `PhotoUrls`: where a pet's photos are, as absolute `https` URLs. The store
//! only keeps and returns them; it never fetches them, so they cannot make the server reach
//! anything.

use std::fmt;

use url::Url;

use super::list_items::ListError;

/// An absolute `https` URL with a host and no user name or password, at most
/// [`MAX_BYTES`](Self::MAX_BYTES) long. Parsed with the `url` crate (the WHATWG URL standard
/// browsers follow) and kept in its serialised form, so what is stored is what a browser would
/// request: the scheme and host lowercased, an international domain name in punycode, and
/// characters a URL cannot hold percent-encoded (`https://Example.com/a b` is refused for its
/// space, `https://Example.com/ä` is kept as `https://example.com/%C3%A4`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PhotoUrl(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhotoUrlError {
    #[error("must be at most {max} bytes long (got {actual})")]
    TooLong { max: usize, actual: usize },
    /// The URL parser would drop these silently (tabs, newlines, surrounding spaces) or encode
    /// them; refused so a client bug shows.
    #[error(
        "must be an https URL without spaces or control characters (U+{:04X} at byte {at})",
        u32::from(*found)
    )]
    Whitespace { found: char, at: usize },
    #[error("must be an absolute https URL ({reason})")]
    Invalid { reason: String },
    #[error("must be an https URL (got the scheme \"{scheme}\")")]
    NotHttps { scheme: String },
    #[error("must be an https URL with a host")]
    NoHost,
    #[error("must be an https URL without a user name or password")]
    UserInfo,
}

impl PhotoUrl {
    /// Longest accepted URL, in bytes of its serialised form (and of what the client sent):
    /// enough for any image host's signed URLs, and what browsers and CDNs reliably carry.
    pub const MAX_BYTES: usize = 2_000;

    pub fn parse(raw: &str) -> Result<Self, PhotoUrlError> {
        check_length(raw.len())?;
        if let Some((at, found)) = raw.char_indices().find(|&(_, c)| is_blank(c)) {
            return Err(PhotoUrlError::Whitespace { found, at });
        }
        let url = Url::parse(raw).map_err(|err| PhotoUrlError::Invalid {
            reason: err.to_string(),
        })?;
        if url.scheme() != "https" {
            return Err(PhotoUrlError::NotHttps {
                scheme: url.scheme().to_owned(),
            });
        }
        if url.host().is_none() {
            return Err(PhotoUrlError::NoHost);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(PhotoUrlError::UserInfo);
        }
        let serialised: String = url.into();
        check_length(serialised.len())?;
        Ok(Self(serialised))
    }

    /// A URL as stored: written by [`parse`](Self::parse), so in the parser's serialised form,
    /// and kept as it is without parsing it again (every read of a pet would). What that form
    /// always is is still checked, so a row changed behind the service's back is noticed: at
    /// most [`MAX_BYTES`](Self::MAX_BYTES), printable ASCII only, `https://`, then a host with
    /// no user name or password.
    pub fn parse_stored(raw: &str) -> Result<Self, PhotoUrlError> {
        check_length(raw.len())?;
        if let Some((at, found)) = raw.char_indices().find(|&(_, c)| !c.is_ascii_graphic()) {
            return Err(if is_blank(found) {
                PhotoUrlError::Whitespace { found, at }
            } else {
                PhotoUrlError::Invalid {
                    reason: "not in its serialised form".to_owned(),
                }
            });
        }
        let Some(rest) = raw.strip_prefix("https://") else {
            let scheme = raw.split_once(':').map_or(raw, |(scheme, _)| scheme);
            return Err(PhotoUrlError::NotHttps {
                scheme: scheme.to_owned(),
            });
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(PhotoUrlError::UserInfo);
        }
        if authority.is_empty() {
            return Err(PhotoUrlError::NoHost);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// Whether `c` is whitespace or a control character: what [`PhotoUrl::parse`] refuses by name.
fn is_blank(c: char) -> bool {
    c.is_whitespace() || c.is_control()
}

fn check_length(bytes: usize) -> Result<(), PhotoUrlError> {
    if bytes > PhotoUrl::MAX_BYTES {
        return Err(PhotoUrlError::TooLong {
            max: PhotoUrl::MAX_BYTES,
            actual: bytes,
        });
    }
    Ok(())
}

impl fmt::Display for PhotoUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A pet's photo URLs in the client's order (the first is the one to show first), at most
/// [`MAX`](Self::MAX); may be empty (no photos). Repeats are kept: the order is the client's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PhotoUrls(Vec<PhotoUrl>);

pub type PhotoUrlsError = ListError<PhotoUrlError>;

impl PhotoUrls {
    pub const MAX: usize = 10;

    /// Refuses more than [`MAX`](Self::MAX) URLs before reading any; otherwise reports every
    /// URL that breaks the rule, by position.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Self, PhotoUrlsError> {
        Self::each(raw, PhotoUrl::parse)
    }

    /// URLs as stored, each read with [`PhotoUrl::parse_stored`].
    pub fn parse_stored<S: AsRef<str>>(raw: &[S]) -> Result<Self, PhotoUrlsError> {
        Self::each(raw, PhotoUrl::parse_stored)
    }

    fn each<S: AsRef<str>>(
        raw: &[S],
        parse: fn(&str) -> Result<PhotoUrl, PhotoUrlError>,
    ) -> Result<Self, PhotoUrlsError> {
        if raw.len() > Self::MAX {
            return Err(ListError::TooMany {
                max: Self::MAX,
                actual: raw.len(),
            });
        }
        let urls = ListError::from_items(raw.iter().map(|url| parse(url.as_ref())))?;
        Ok(Self(urls))
    }

    pub fn as_slice(&self) -> &[PhotoUrl] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_inner(self) -> Vec<PhotoUrl> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ItemError;

    #[test]
    fn keeps_an_https_url_in_its_serialised_form() {
        for (raw, kept) in [
            (
                "https://img.example.com/pets/rex.jpg",
                "https://img.example.com/pets/rex.jpg",
            ),
            (
                "HTTPS://IMG.Example.COM/Rex.JPG?size=2#top",
                "https://img.example.com/Rex.JPG?size=2#top",
            ),
            ("https://example.com", "https://example.com/"),
            ("https://example.com/ä", "https://example.com/%C3%A4"),
            ("https://bücher.example/", "https://xn--bcher-kva.example/"),
            ("https://example.com:8443/a", "https://example.com:8443/a"),
            ("https://192.0.2.7/a.png", "https://192.0.2.7/a.png"),
        ] {
            assert_eq!(PhotoUrl::parse(raw).unwrap().as_str(), kept, "{raw}");
        }
    }

    #[test]
    fn a_stored_url_reads_back_as_parsed_and_a_changed_one_is_noticed() {
        for raw in [
            "HTTPS://IMG.Example.COM/Rex.JPG?size=2#top",
            "https://example.com",
            "https://bücher.example/ä",
            "https://example.com:8443/a",
        ] {
            let parsed = PhotoUrl::parse(raw).unwrap();
            assert_eq!(PhotoUrl::parse_stored(parsed.as_str()), Ok(parsed), "{raw}");
        }
        for (stored, refused) in [
            (
                "http://example.com/a.jpg",
                PhotoUrlError::NotHttps {
                    scheme: "http".to_owned(),
                },
            ),
            ("https:///a.jpg", PhotoUrlError::NoHost),
            ("https://me:pw@example.com/a", PhotoUrlError::UserInfo),
            (
                "https://example.com/a b",
                PhotoUrlError::Whitespace { found: ' ', at: 21 },
            ),
            (
                "https://example.com/ä",
                PhotoUrlError::Invalid {
                    reason: "not in its serialised form".to_owned(),
                },
            ),
        ] {
            assert_eq!(PhotoUrl::parse_stored(stored), Err(refused), "{stored}");
        }
        let long = format!("https://example.com/{}", "a".repeat(PhotoUrl::MAX_BYTES));
        assert!(matches!(
            PhotoUrl::parse_stored(&long),
            Err(PhotoUrlError::TooLong { .. })
        ));
    }

    #[test]
    fn refuses_other_schemes() {
        for (raw, scheme) in [
            ("http://example.com/a.jpg", "http"),
            ("ftp://example.com/a.jpg", "ftp"),
            ("data:image/png;base64,AAAA", "data"),
            ("javascript:alert(1)", "javascript"),
            ("file:///etc/passwd", "file"),
        ] {
            assert_eq!(
                PhotoUrl::parse(raw),
                Err(PhotoUrlError::NotHttps {
                    scheme: scheme.to_owned()
                }),
                "{raw}"
            );
        }
    }

    #[test]
    fn refuses_relative_and_malformed_urls() {
        for raw in [
            "",
            "/pets/rex.jpg",
            "example.com/rex.jpg",
            "https://",
            "https://exa mple",
        ] {
            assert!(
                matches!(
                    PhotoUrl::parse(raw),
                    Err(PhotoUrlError::Invalid { .. } | PhotoUrlError::Whitespace { .. })
                ),
                "{raw:?}"
            );
        }
        let err = PhotoUrl::parse("/pets/rex.jpg").unwrap_err();
        assert_eq!(
            err.to_string(),
            "must be an absolute https URL (relative URL without a base)"
        );
    }

    #[test]
    fn refuses_user_names_and_passwords() {
        for raw in [
            "https://user:secret@example.com/a.jpg",
            "https://user@example.com/a.jpg",
            "https://:secret@example.com/a.jpg",
        ] {
            assert_eq!(PhotoUrl::parse(raw), Err(PhotoUrlError::UserInfo), "{raw}");
        }
    }

    #[test]
    fn refuses_whitespace_and_controls_the_parser_would_drop() {
        for (raw, found, at) in [
            (" https://example.com/", ' ', 0),
            ("https://example.com/\n", '\n', 20),
            ("https://exa\tmple.com/", '\t', 11),
            ("https://example.com/a b", ' ', 21),
            ("https://example.com/\u{85}", '\u{85}', 20),
        ] {
            assert_eq!(
                PhotoUrl::parse(raw),
                Err(PhotoUrlError::Whitespace { found, at }),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn bounds_the_length_as_sent_and_as_kept() {
        let base = "https://example.com/";
        let longest = format!("{base}{}", "a".repeat(PhotoUrl::MAX_BYTES - base.len()));
        assert!(PhotoUrl::parse(&longest).is_ok());
        assert_eq!(
            PhotoUrl::parse(&format!("{longest}a")),
            Err(PhotoUrlError::TooLong {
                max: 2_000,
                actual: 2_001
            })
        );
        // 1,000 bytes sent, 2,960 once each "ä" is percent-encoded (two bytes to six).
        let encoded = format!("{base}{}", "ä".repeat(490));
        assert!(matches!(
            PhotoUrl::parse(&encoded),
            Err(PhotoUrlError::TooLong { actual, .. }) if actual > 2_000
        ));
    }

    #[test]
    fn a_list_holds_up_to_ten_urls_in_order() {
        let urls: Vec<String> = (0..10)
            .map(|n| format!("https://example.com/{n}.jpg"))
            .collect();
        let parsed = PhotoUrls::parse(&urls).unwrap();
        assert_eq!(parsed.as_slice()[3].as_str(), "https://example.com/3.jpg");
        assert!(PhotoUrls::parse::<&str>(&[]).unwrap().is_empty());
        let eleven: Vec<String> = (0..11).map(|n| format!("bad {n}")).collect();
        assert_eq!(
            PhotoUrls::parse(&eleven),
            Err(ListError::TooMany {
                max: 10,
                actual: 11
            })
        );
    }

    #[test]
    fn a_list_reports_every_bad_url_by_position() {
        let err = PhotoUrls::parse(&[
            "https://example.com/a.jpg",
            "http://example.com/b.jpg",
            "https://example.com/c.jpg",
            "https://u:p@example.com/d.jpg",
        ])
        .unwrap_err();
        assert_eq!(
            err,
            ListError::Items(vec![
                ItemError {
                    index: 1,
                    error: PhotoUrlError::NotHttps {
                        scheme: "http".to_owned()
                    }
                },
                ItemError {
                    index: 3,
                    error: PhotoUrlError::UserInfo
                },
            ])
        );
    }
}
