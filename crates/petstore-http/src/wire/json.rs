//! What every JSON request body goes through before a resource reads its fields: one object,
//! no member given twice, and whole numbers however JSON spells them.

use std::collections::HashSet;
use std::fmt;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// Why a JSON number is not a whole int64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotWholeI64 {
    Fraction,
    OutOfRange,
}

/// A JSON number's value when it is whole and within int64, however written (`3`, `3.0`,
/// `-1e3`): what JSON Schema's `integer` admits.
pub(crate) fn whole_i64(number: &serde_json::Number) -> Result<i64, NotWholeI64> {
    if let Some(value) = number.as_i64() {
        return Ok(value);
    }
    if number.is_u64() {
        return Err(NotWholeI64::OutOfRange);
    }
    let float = number.as_f64().unwrap_or(f64::NAN);
    if float.fract() != 0.0 || !float.is_finite() {
        return Err(NotWholeI64::Fraction);
    }
    // Whole floats strictly between -2^63 and 2^63 convert exactly. -2^63 itself is left out:
    // an integer literal just below the range (`-9223372036854775809`) parses to that float,
    // and must be refused rather than read as i64::MIN; i64::MIN written as an integer is
    // taken above, by `as_i64`.
    if !(float > -9.223_372_036_854_776e18 && float < 9.223_372_036_854_776e18) {
        return Err(NotWholeI64::OutOfRange);
    }
    Ok(float as i64)
}

/// A request body parsed as one JSON object with no member given twice (`{"a":1,"a":2}` is
/// ambiguous, so it is refused rather than silently keeping the last one).
pub(crate) fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::malformed_json(
            "request body is empty; expected a JSON object",
        ));
    }
    let value: Value = serde_json::from_slice(body).map_err(|err| {
        ApiError::malformed_json(format!("request body is not valid JSON: {err}"))
    })?;
    let Value::Object(fields) = value else {
        return Err(ApiError::malformed_json(
            "request body must be a JSON object",
        ));
    };
    // The body parsed once already, so this second pass cannot fail on syntax.
    if let Ok(FirstDuplicateKey(Some(key))) = serde_json::from_slice(body) {
        return Err(ApiError::validation(format!(
            "field `{key}` is given more than once"
        )));
    }
    Ok(fields)
}

/// Deserializes a JSON object only to find the first key that appears twice in it.
struct FirstDuplicateKey(Option<String>);

impl<'de> Deserialize<'de> for FirstDuplicateKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;

        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = FirstDuplicateKey;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut seen = HashSet::new();
                let mut duplicate = None;
                while let Some((key, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                    if duplicate.is_none() && !seen.insert(key.clone()) {
                        duplicate = Some(key);
                    }
                }
                Ok(FirstDuplicateKey(duplicate))
            }
        }

        deserializer.deserialize_map(KeysVisitor)
    }
}
