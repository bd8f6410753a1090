//! What every JSON request body goes through before a resource reads its fields: one object,
//! no member given twice, and whole numbers however JSON spells them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::json_value::{BorrowedStr, JsonValue, Members};
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
/// ambiguous, so it is refused rather than silently keeping the last one). One pass: the
/// members are collected and checked for repeats as they are read.
pub(crate) fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    object_members::<Value>(body).map(|members| {
        members
            .into_iter()
            .map(|(name, value)| (name.into_owned(), value))
            .collect()
    })
}

/// [`json_object`]'s members as [`JsonValue`]s, which borrow their strings from `body`: for a
/// body whose members are turned into domain values at once.
pub(crate) fn json_members(body: &[u8]) -> Result<Members<'_>, ApiError> {
    object_members::<JsonValue<'_>>(body).map(Members)
}

/// A member name and its value, as [`object_members`] collects them.
type Member<'de, V> = (Cow<'de, str>, V);

/// The members of the object `body` holds, in order, each value read as a `V`; or the 400 that
/// says why the body is not one object with each member given once.
fn object_members<'de, V: Deserialize<'de>>(
    body: &'de [u8],
) -> Result<Vec<Member<'de, V>>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::malformed_json(
            "request body is empty; expected a JSON object",
        ));
    }
    // Read from bytes, serde_json checks each string is UTF-8 with a call of its own; a body
    // checked whole in one scan is read as text, which it does not check again. A body that is
    // not UTF-8 is read as bytes, so its refusal says where, as serde_json words it.
    let parsed: Result<Body<'de, V>, _> = match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    };
    let parsed = parsed.map_err(|err| {
        ApiError::malformed_json(format!("request body is not valid JSON: {err}"))
    })?;
    match parsed {
        Body::NotAnObject => Err(ApiError::malformed_json(
            "request body must be a JSON object",
        )),
        // Reported only once the whole body parsed: a syntax error anywhere comes first.
        Body::Object {
            repeated: Some(key),
            ..
        } => Err(ApiError::validation(format!(
            "field `{key}` is given more than once"
        ))),
        Body::Object {
            fields,
            repeated: None,
        } => Ok(fields),
    }
}

/// A whole request body as JSON: an object with the first member name given twice, if any,
/// or any other JSON value, read through to its end (so its syntax is checked) and dropped.
enum Body<'de, V> {
    Object {
        fields: Vec<Member<'de, V>>,
        repeated: Option<String>,
    },
    NotAnObject,
}

/// Members up to this many are checked for a repeat by reading the ones before; past it, by a
/// set of the names, so a body of many members costs no more than a set's lookups.
const NAMES_READ_THROUGH: usize = 16;

/// Whether `name` is among `fields`' names, with `names` the set of them once there are many
/// (made here from `fields` the first time; the caller adds each name it keeps after that).
fn given_before<'de, V>(
    fields: &[Member<'de, V>],
    names: &mut Option<HashSet<Cow<'de, str>>>,
    name: &str,
) -> bool {
    if fields.len() < NAMES_READ_THROUGH {
        return fields.iter().any(|(given, _)| given == name);
    }
    names
        .get_or_insert_with(|| fields.iter().map(|(given, _)| given.clone()).collect())
        .contains(name)
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Body<'de, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BodyVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for BodyVisitor<V> {
            type Value = Body<'de, V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                let mut names = None;
                let mut repeated = None;
                while let Some(BorrowedStr(key)) = map.next_key()? {
                    let value: V = map.next_value()?;
                    if repeated.is_none() && given_before(&fields, &mut names, &key) {
                        repeated = Some(key.into_owned());
                    } else {
                        if let Some(names) = names.as_mut() {
                            names.insert(key.clone());
                        }
                        fields.push((key, value));
                    }
                }
                Ok(Body::Object { fields, repeated })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Body::NotAnObject)
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Body::NotAnObject)
            }
        }

        deserializer.deserialize_any(BodyVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(body: &str) -> String {
        json_object(body.as_bytes())
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn keeps_every_member_of_an_object() {
        let fields = json_object(br#"{"name": "Rex", "tags": ["a"], "nested": {"x": 1}}"#).unwrap();
        assert_eq!(fields.len(), 3);
        assert_eq!(fields["name"], "Rex");
        assert_eq!(fields["nested"]["x"], 1);
    }

    #[test]
    fn a_syntax_error_after_a_repeated_member_is_reported_as_the_syntax_error() {
        let message = refusal(r#"{"name": "Rex", "name": "Max", }"#);
        assert!(message.contains("not valid JSON"), "{message}");
    }

    #[test]
    fn a_broken_array_is_not_valid_json_rather_than_not_an_object() {
        let message = refusal("[1, 2");
        assert!(message.contains("not valid JSON"), "{message}");
        assert_eq!(refusal("[1, 2]"), "request body must be a JSON object");
    }

    #[test]
    fn a_body_that_is_not_utf8_is_refused_saying_where() {
        let message = json_members(b"{\"name\": \"R\xffx\"}")
            .unwrap_err()
            .message()
            .to_owned();
        assert_eq!(
            message,
            "request body is not valid JSON: invalid unicode code point at line 1 column 12"
        );
        let members = json_members("{\"name\": \"Rüx\"}".as_bytes()).unwrap();
        assert_eq!(
            members.get("name"),
            Some(&JsonValue::String(Cow::Borrowed("Rüx")))
        );
    }

    #[test]
    fn names_the_first_member_given_twice() {
        let message = refusal(r#"{"a": 1, "b": 2, "b": 3, "a": 4}"#);
        assert_eq!(message, "field `b` is given more than once");
    }

    #[test]
    fn names_the_first_repeat_in_an_object_of_many_members() {
        let mut members: Vec<String> = (0..100).map(|n| format!("\"m{n}\": {n}")).collect();
        members.insert(60, "\"m20\": 0".to_owned());
        members.push("\"m5\": 0".to_owned());
        let body = format!("{{{}}}", members.join(", "));
        assert_eq!(refusal(&body), "field `m20` is given more than once");
        members.remove(60);
        members.pop();
        let body = format!("{{{}}}", members.join(", "));
        assert_eq!(json_object(body.as_bytes()).unwrap().len(), 100);
    }

    #[test]
    fn members_borrow_from_the_body_and_keep_its_order() {
        let members = json_members(br#"{"name": "Rex", "tags": ["a", "b"], "n": 1}"#).unwrap();
        assert_eq!(members.keys().collect::<Vec<_>>(), ["name", "tags", "n"]);
        assert!(matches!(
            members.get("name"),
            Some(JsonValue::String(Cow::Borrowed("Rex")))
        ));
        assert_eq!(
            refusal_of_members(r#"{"a": 1, "a": 2}"#),
            "field `a` is given more than once"
        );
        assert_eq!(
            refusal_of_members("[]"),
            "request body must be a JSON object"
        );
    }

    fn refusal_of_members(body: &str) -> String {
        json_members(body.as_bytes())
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn members_repeated_inside_a_nested_object_are_the_field_parsers_concern() {
        assert!(json_object(br#"{"a": {"x": 1, "x": 2}}"#).is_ok());
    }
}
