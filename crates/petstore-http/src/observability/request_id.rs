//! `X-Request-Id`: the id that ties a response to its log lines. A client's own id is kept when
//! it is sane (1 to 128 printable ASCII characters), so a caller can follow its request through
//! the service; otherwise the service makes a UUIDv7 (time-ordered, so ids sort by arrival).

use std::cell::Cell;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

/// The header, in requests and responses.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest client id kept.
pub const MAX_LEN: usize = 128;

/// A request's id: the client's, or a new UUIDv7.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(HeaderValue);

impl RequestId {
    /// The client's id from `headers` when it sent exactly one sane one, else a new one.
    pub fn for_request(headers: &HeaderMap) -> Self {
        let mut sent = headers.get_all(&REQUEST_ID);
        match (sent.next(), sent.next()) {
            (Some(value), None) if is_sane(value.as_bytes()) => Self(value.clone()),
            _ => Self::generate(),
        }
    }

    /// A new UUIDv7: 48 bits of Unix milliseconds, then 74 random bits (RFC 9562 section 5.7).
    pub fn generate() -> Self {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| {
                u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
            });
        Self::generate_at(millis)
    }

    /// The UUIDv7 of a request arriving at `millis` (Unix milliseconds).
    fn generate_at(millis: u64) -> Self {
        let mut random = [0_u8; 10];
        random[..8].copy_from_slice(&next_random().to_le_bytes());
        random[8..].copy_from_slice(&next_random().to_le_bytes()[..2]);
        let id = uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid();
        let mut text = [0_u8; uuid::fmt::Hyphenated::LENGTH];
        let text = id.hyphenated().encode_lower(&mut text);
        Self(HeaderValue::from_str(text).expect("hex digits and dashes are a valid header"))
    }

    pub fn header_value(&self) -> &HeaderValue {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Only sane (printable ASCII) values are kept or made.
        self.0.to_str().unwrap_or_default()
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// 1 to [`MAX_LEN`] bytes, each printable ASCII (a space inside is fine, not at either end): what
/// can go into a log line and back into a header unchanged.
fn is_sane(value: &[u8]) -> bool {
    (1..=MAX_LEN).contains(&value.len())
        && value.iter().all(|byte| (0x20..=0x7E).contains(byte))
        && value.first() != Some(&b' ')
        && value.last() != Some(&b' ')
}

thread_local! {
    /// Per-thread SplitMix64 state, seeded once from the operating system: an id needs
    /// uniqueness, not secrecy, and a system call per request would cost more than the rest of
    /// the id.
    static RANDOM_STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut bytes = [0_u8; 8];
    // Without OS randomness, the clock and the thread still make the sequences differ.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = (nanos as u64).to_le_bytes();
    }
    u64::from_le_bytes(bytes)
}

pub(crate) fn next_random() -> u64 {
    RANDOM_STATE.with(|state| {
        let next = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        state.set(next);
        let mut z = next;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(REQUEST_ID, HeaderValue::from_bytes(value).unwrap());
        }
        map
    }

    fn is_uuid_v7(text: &str) -> bool {
        let groups: Vec<&str> = text.split('-').collect();
        groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
            && text.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
            && groups[2].starts_with('7')
            && matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b')
    }

    #[test]
    fn a_sane_client_id_is_kept() {
        for id in [&b"abc-123"[..], b"trace id 42", &[b'x'; MAX_LEN]] {
            assert_eq!(
                RequestId::for_request(&headers(&[id])).as_str().as_bytes(),
                id
            );
        }
    }

    #[test]
    fn a_missing_odd_or_repeated_id_is_replaced_by_a_uuid_v7() {
        for sent in [
            headers(&[]),
            headers(&[b""]),
            headers(&[&[b'x'; MAX_LEN + 1]]),
            headers(&[b"tab\there"]),
            headers(&[b" padded"]),
            headers(&[b"caf\xc3\xa9"]),
            headers(&[b"one", b"two"]),
        ] {
            let id = RequestId::for_request(&sent);
            assert!(is_uuid_v7(id.as_str()), "{id}");
        }
    }

    #[test]
    fn new_ids_differ_and_sort_by_time() {
        let first = RequestId::generate_at(1_800_000_000_000);
        let second = RequestId::generate_at(1_800_000_000_001);
        assert_ne!(first, second);
        assert!(first.as_str() < second.as_str(), "{first} {second}");
        let many: std::collections::HashSet<String> = (0..10_000)
            .map(|_| RequestId::generate().as_str().to_owned())
            .collect();
        assert_eq!(many.len(), 10_000);
    }
}
