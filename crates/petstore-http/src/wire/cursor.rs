//! The `cursor` of `listPets`: an opaque, tamper-evident keyset position.
//!
//! A cursor is base64url (no padding) of 25 bytes: a format version (1), the last id of the
//! previous page (8 bytes, big-endian) and the first 16 bytes of an HMAC-SHA-256 over the version,
//! the id and the page's `status` filter. So a cursor changed in any character, forged, or reused
//! with another `status` is refused with 400 instead of silently starting a page somewhere else
//! (a client bug then shows up at once). `limit` is deliberately not covered: a client may change
//! its page size while paging.
//!
//! The HMAC key is derived from the API key secret (HMAC-SHA-256 of the secret over a fixed
//! label), so every instance sharing that secret accepts the others' cursors and no second secret
//! has to be configured; the label keeps cursor tags and key signatures from ever being the same
//! computation. Rotating the secret invalidates outstanding cursors as well as keys.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use petstore_domain::{PetId, PetStatus};
use sha2::Sha256;

use crate::error::ApiError;

type HmacSha256 = Hmac<Sha256>;

/// Format version, first byte of every cursor (the id, then the tag); a new format gets a new
/// number.
const VERSION: u8 = 1;
/// Bytes of the HMAC kept in a cursor: 128 bits, far beyond guessing (RFC 2104 section 5).
const TAG_LEN: usize = 16;
/// Bytes of a cursor of [`VERSION`], the shortest of all: version, id, tag.
const CURSOR_LEN: usize = 1 + 8 + TAG_LEN;
/// The format of a cursor in name order: the id, then the folded name, then the tag.
const NAMED_VERSION: u8 = 2;
/// The longest cursor text taken: far beyond one naming a pet's longest folded name.
const CURSOR_TEXT_MAX: usize = 2048;
/// What the cursor key is derived for (domain separation from the key signatures).
const KEY_LABEL: &[u8] = b"petstore/listPets/cursor/v1";

/// Issues cursors with a key derived from the current API key secret, and checks them with that
/// key or one derived from a previous secret (so pagination survives a secret rotation).
///
/// Each key is kept as an HMAC already keyed: a cursor's MAC starts from a copy of it instead of
/// hashing the key's padded blocks again.
#[derive(Clone)]
pub struct CursorCodec {
    key: HmacSha256,
    previous_keys: Vec<HmacSha256>,
}

impl fmt::Debug for CursorCodec {
    // Never print key material.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorCodec").finish_non_exhaustive()
    }
}

impl CursorCodec {
    pub fn new(key_secret: &[u8]) -> Self {
        Self {
            key: mac_with_key(&derive_key(key_secret)),
            previous_keys: Vec::new(),
        }
    }

    /// Also accepts cursors issued under these previous secrets.
    pub fn with_previous_secrets(mut self, previous: &[&[u8]]) -> Self {
        self.previous_keys = previous
            .iter()
            .map(|secret| mac_with_key(&derive_key(secret)))
            .collect();
        self
    }

    /// The cursor of the page after `after`, valid only with the same `status` filter.
    pub fn encode(&self, after: PetId, status: Option<PetStatus>) -> String {
        self.encode_filtered(after, status, &[])
    }

    /// The id a cursor issued by [`encode`](Self::encode) for `status` carries, or a 400
    /// `invalid_parameter`.
    pub fn decode(&self, raw: &str, status: Option<PetStatus>) -> Result<PetId, ApiError> {
        self.decode_filtered(raw, status, &[])
    }

    /// [`encode`](Self::encode) for a listing with more filters than `status`, `filters` being
    /// their bytes (empty: `status` alone, the same cursor as `encode`'s).
    pub(crate) fn encode_filtered(
        &self,
        after: PetId,
        status: Option<PetStatus>,
        filters: &[u8],
    ) -> String {
        self.encode_scoped(after.get(), &pet_scope(status, filters))
    }

    /// [`decode`](Self::decode) for a cursor of [`encode_filtered`](Self::encode_filtered).
    pub(crate) fn decode_filtered(
        &self,
        raw: &str,
        status: Option<PetStatus>,
        filters: &[u8],
    ) -> Result<PetId, ApiError> {
        self.decode_scoped(raw, &pet_scope(status, filters))
            .map(PetId::new)
            .ok_or_else(invalid)
    }

    /// A cursor after `after` for another listing, bound to `scope` (which names the listing
    /// and its filters; a pet listing's scope is its one status byte, so other listings start
    /// theirs with a byte no status has).
    pub(crate) fn encode_scoped(&self, after: i64, scope: &[u8]) -> String {
        self.seal(after, None, scope)
    }

    /// The position a cursor issued by [`encode_scoped`](Self::encode_scoped) for `scope`
    /// carries, if it is one.
    pub(crate) fn decode_scoped(&self, raw: &str, scope: &[u8]) -> Option<i64> {
        match self.open(raw, scope)? {
            (after, None) => Some(after),
            (_, Some(_)) => None,
        }
    }

    /// A cursor at a position of two numbers (`first`, then `second`), bound to `scope`: the
    /// event feed's (commit, sequence). Carried in the named format, the second number as its
    /// decimal text, so no third format is needed; the scope keeps it from passing as a name
    /// cursor and the other way round.
    pub(crate) fn encode_position(&self, first: i64, second: i64, scope: &[u8]) -> String {
        self.seal(first, Some(&second.to_string()), scope)
    }

    /// The position a cursor of [`encode_position`](Self::encode_position) for `scope`
    /// carries, if it is one.
    pub(crate) fn decode_position(&self, raw: &str, scope: &[u8]) -> Option<(i64, i64)> {
        match self.open(raw, scope)? {
            (first, Some(second)) => Some((first, second.parse().ok()?)),
            (_, None) => None,
        }
    }

    /// The cursor of a page in name order after the pet `after`, whose folded name is `name`:
    /// the name travels in the cursor, so a rename of that pet meanwhile does not move where
    /// the next page starts. Valid only with the same `status` and `filters`.
    pub(crate) fn encode_named(
        &self,
        after: PetId,
        name: &str,
        status: Option<PetStatus>,
        filters: &[u8],
    ) -> String {
        self.seal(after.get(), Some(name), &pet_scope(status, filters))
    }

    /// The position (folded name, id) a cursor of [`encode_named`](Self::encode_named) for
    /// `status` and `filters` carries, or a 400 `invalid_parameter`.
    pub(crate) fn decode_named(
        &self,
        raw: &str,
        status: Option<PetStatus>,
        filters: &[u8],
    ) -> Result<(PetId, String), ApiError> {
        match self.open(raw, &pet_scope(status, filters)) {
            Some((after, Some(name))) => Ok((PetId::new(after), name)),
            _ => Err(invalid()),
        }
    }

    /// A cursor's text: its format version, `after`, the name (in format [`NAMED_VERSION`]
    /// only), then the truncated HMAC of all of it and `scope`.
    fn seal(&self, after: i64, name: Option<&str>, scope: &[u8]) -> String {
        let name = name.map(str::as_bytes);
        let mut bytes = Vec::with_capacity(CURSOR_LEN + name.map_or(0, <[u8]>::len));
        bytes.push(if name.is_some() {
            NAMED_VERSION
        } else {
            VERSION
        });
        bytes.extend_from_slice(&after.to_be_bytes());
        bytes.extend_from_slice(name.unwrap_or_default());
        let tag = Self::mac(&self.key, after, name, scope)
            .finalize()
            .into_bytes();
        bytes.extend_from_slice(&tag[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// What a cursor of [`seal`](Self::seal) for `scope` carries, if it is one signed with the
    /// current key or a previous one.
    fn open(&self, raw: &str, scope: &[u8]) -> Option<(i64, Option<String>)> {
        if raw.len() > CURSOR_TEXT_MAX {
            return None;
        }
        // The decoder refuses non-canonical encodings (stray trailing bits), so two different
        // strings never decode to the same bytes: changing any character changes what is checked.
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        if bytes.len() < CURSOR_LEN {
            return None;
        }
        let (signed, tag) = bytes.split_at(bytes.len() - TAG_LEN);
        let after = i64::from_be_bytes(signed[1..9].try_into().ok()?);
        let name = match (signed[0], &signed[9..]) {
            (VERSION, []) => None,
            (NAMED_VERSION, name) => Some(std::str::from_utf8(name).ok()?),
            _ => return None,
        };
        let signed_by = |key: &HmacSha256| {
            Self::mac(key, after, name.map(str::as_bytes), scope)
                .verify_truncated_left(tag)
                .is_ok()
        };
        (signed_by(&self.key) || self.previous_keys.iter().any(signed_by))
            .then(|| (after, name.map(str::to_owned)))
    }

    /// The HMAC of a cursor: its version, `after`, the name with its length (named cursors
    /// only), and `scope`.
    fn mac(key: &HmacSha256, after: i64, name: Option<&[u8]>, scope: &[u8]) -> HmacSha256 {
        let mut mac = key.clone();
        mac.update(&[if name.is_some() {
            NAMED_VERSION
        } else {
            VERSION
        }]);
        mac.update(&after.to_be_bytes());
        if let Some(name) = name {
            mac.update(&(name.len() as u64).to_be_bytes());
            mac.update(name);
        }
        mac.update(scope);
        mac
    }
}

fn derive_key(key_secret: &[u8]) -> [u8; 32] {
    let mut mac = mac_with_key(key_secret);
    mac.update(KEY_LABEL);
    mac.finalize().into_bytes().into()
}

fn mac_with_key(key: &[u8]) -> HmacSha256 {
    <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes a key of any length")
}

/// A pet listing's scope: its status byte, then the other filters' bytes.
fn pet_scope(status: Option<PetStatus>, filters: &[u8]) -> Vec<u8> {
    let mut scope = Vec::with_capacity(1 + filters.len());
    scope.push(status_byte(status));
    scope.extend_from_slice(filters);
    scope
}

/// One byte per filter: 0 for none, else the status's place in `PetStatus::ALL` plus one (so
/// issued cursors stay valid as long as new statuses are added at the end).
fn status_byte(status: Option<PetStatus>) -> u8 {
    status
        .and_then(|status| PetStatus::ALL.iter().position(|&known| known == status))
        .and_then(|place| u8::try_from(place + 1).ok())
        .unwrap_or(0)
}

fn invalid() -> ApiError {
    ApiError::invalid_parameter(
        "query parameter `cursor` is not a cursor this service issued for this listing (it was \
         altered, or belongs to another `status` filter); follow the `Link: rel=\"next\"` \
         header of the previous page",
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn a_position_round_trips_only_with_its_own_scope() {
        let codec = CursorCodec::new(b"a secret long enough for the test");
        let raw = codec.encode_position(i64::MIN, 42, b"\xFDkey-a");
        assert_eq!(
            codec.decode_position(&raw, b"\xFDkey-a"),
            Some((i64::MIN, 42))
        );
        assert_eq!(codec.decode_position(&raw, b"\xFDkey-b"), None);
        assert_eq!(codec.decode_scoped(&raw, b"\xFDkey-a"), None);
        let plain = codec.encode_scoped(7, b"\xFDkey-a");
        assert_eq!(codec.decode_position(&plain, b"\xFDkey-a"), None);
    }

    const SECRET: &[u8] = b"test secret, thirty-two bytes...";

    fn codec() -> CursorCodec {
        CursorCodec::new(SECRET)
    }

    #[track_caller]
    fn assert_refused(result: Result<PetId, ApiError>) {
        let err = result.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter);
        assert!(err.message().contains("`cursor`"), "{}", err.message());
    }

    #[test]
    fn round_trips_any_id_with_any_filter() {
        let filters = [
            None,
            Some(PetStatus::Available),
            Some(PetStatus::Pending),
            Some(PetStatus::Sold),
        ];
        for id in [1, 42, i64::MAX, -3, 0] {
            for status in filters {
                let cursor = codec().encode(PetId::new(id), status);
                assert_eq!(cursor.len(), 34, "{cursor}");
                assert_eq!(codec().decode(&cursor, status).unwrap().get(), id);
            }
        }
    }

    #[test]
    fn changing_any_character_is_refused() {
        let cursor = codec().encode(PetId::new(41), Some(PetStatus::Sold));
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for position in 0..cursor.len() {
            for replacement in alphabet.chars() {
                let mut altered: Vec<char> = cursor.chars().collect();
                if altered[position] == replacement {
                    continue;
                }
                altered[position] = replacement;
                let altered: String = altered.into_iter().collect();
                assert_refused(codec().decode(&altered, Some(PetStatus::Sold)));
            }
        }
    }

    #[test]
    fn a_named_cursor_round_trips_its_name_and_id_and_nothing_else_passes() {
        let filters = b"S-name-re";
        for name in ["rex", "", "zoë 🐕", "a,b&c=d"] {
            let cursor = codec().encode_named(PetId::new(12), name, None, filters);
            assert_eq!(
                codec().decode_named(&cursor, None, filters).unwrap(),
                (PetId::new(12), name.to_owned())
            );
            let refused = |result: Result<(PetId, String), ApiError>| {
                assert_eq!(result.unwrap_err().code(), ErrorCode::InvalidParameter);
            };
            refused(codec().decode_named(&cursor, Some(PetStatus::Sold), filters));
            refused(codec().decode_named(&cursor, None, b"S-name-r"));
            refused(codec().decode_named(&cursor, None, filters).and_then(|_| {
                let mut altered = cursor.clone().into_bytes();
                altered[3] = if altered[3] == b'A' { b'B' } else { b'A' };
                codec().decode_named(&String::from_utf8(altered).unwrap(), None, filters)
            }));
            // An id cursor is no named cursor, and the other way round.
            assert_refused(codec().decode_filtered(&cursor, None, filters));
            let by_id = codec().encode_filtered(PetId::new(12), None, filters);
            refused(codec().decode_named(&by_id, None, filters));
        }
        let long = "x".repeat(CURSOR_TEXT_MAX);
        assert!(codec().decode_named(&long, None, filters).is_err());
    }

    #[test]
    fn another_status_filter_is_refused() {
        for (issued, used) in [
            (None, Some(PetStatus::Sold)),
            (Some(PetStatus::Sold), None),
            (Some(PetStatus::Sold), Some(PetStatus::Pending)),
        ] {
            let cursor = codec().encode(PetId::new(7), issued);
            assert_refused(codec().decode(&cursor, used));
        }
    }

    #[test]
    fn cursors_of_a_previous_secret_are_accepted_during_a_rotation() {
        let old = CursorCodec::new(b"the secret before the rotation!!").encode(PetId::new(7), None);
        let rotated = codec().with_previous_secrets(&[b"the secret before the rotation!!"]);
        assert_eq!(rotated.decode(&old, None).unwrap(), PetId::new(7));
        assert_refused(rotated.decode(&old, Some(PetStatus::Sold)));
        assert_refused(codec().decode(&old, None));
        let fresh = rotated.encode(PetId::new(9), None);
        assert_eq!(
            codec().decode(&fresh, None).unwrap(),
            PetId::new(9),
            "signed with the current"
        );
    }

    #[test]
    fn another_secret_and_forged_cursors_are_refused() {
        let foreign =
            CursorCodec::new(b"some other secret of enough bytes").encode(PetId::new(7), None);
        assert_refused(codec().decode(&foreign, None));
        // The previous, unsigned format (`v1:<id>`), and a right-length cursor with no valid tag.
        let unsigned = URL_SAFE_NO_PAD.encode("v1:5");
        let mut forged = [0_u8; CURSOR_LEN];
        forged[0] = VERSION;
        forged[8] = 5;
        let forged = URL_SAFE_NO_PAD.encode(forged);
        for raw in ["", "!!!", "5", unsigned.as_str(), forged.as_str()] {
            assert_refused(codec().decode(raw, None));
        }
    }

    #[test]
    fn truncated_or_extended_cursors_are_refused() {
        let cursor = codec().encode(PetId::new(9), None);
        assert_refused(codec().decode(&cursor[..cursor.len() - 1], None));
        assert_refused(codec().decode(&format!("{cursor}A"), None));
        assert_refused(codec().decode(&format!("{cursor}="), None));
    }
}
