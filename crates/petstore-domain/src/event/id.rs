//! An event's id: `evt_` and 32 lowercase hex digits of 128 random bits. Random, not
//! sequential, so that ids say nothing about how many changes others made.

use std::fmt;

const PREFIX: &str = "evt_";
const HEX_DIGITS: usize = 32;

/// An event's id ([`EventId::from_random`] for a new one, [`EventId::parse`] for a stored one).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event id is `evt_` and 32 lowercase hexadecimal digits")]
pub struct EventIdError;

impl EventId {
    /// The id made of 16 random bytes (the caller's random source: the domain does no I/O).
    pub fn from_random(bytes: [u8; 16]) -> Self {
        let mut text = String::with_capacity(PREFIX.len() + HEX_DIGITS);
        text.push_str(PREFIX);
        for byte in bytes {
            text.push(char::from(HEX[usize::from(byte >> 4)]));
            text.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        Self(text)
    }

    pub fn parse(raw: &str) -> Result<Self, EventIdError> {
        let digits = raw.strip_prefix(PREFIX).ok_or(EventIdError)?;
        if digits.len() == HEX_DIGITS && digits.bytes().all(|byte| HEX.contains(&byte)) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(EventIdError)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_id_is_the_prefix_and_the_bytes_in_hex() {
        let id = EventId::from_random([0xab; 16]);
        assert_eq!(id.as_str(), format!("evt_{}", "ab".repeat(16)));
        assert_eq!(EventId::parse(id.as_str()).unwrap(), id);
    }

    #[test]
    fn anything_else_is_refused() {
        for raw in [
            "",
            "evt_",
            "evt_ABABABABABABABABABABABABABABABAB",
            "evt_abababababababababababababababa",
            "ev_abababababababababababababababab",
            "evt_abababababababababababababababag",
        ] {
            assert_eq!(EventId::parse(raw), Err(EventIdError), "{raw}");
        }
    }
}
