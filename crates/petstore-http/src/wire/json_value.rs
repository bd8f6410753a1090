//! `JsonValue`: a JSON value read from a request body that borrows its strings and member
//! names from the body wherever they hold no escape. A pet's body is read through it: its
//! members are looked at once and turned into domain values, so copying each string into a
//! `serde_json::Value` of its own (and each object into a sorted map) was work done only to be
//! thrown away.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Number;

/// A JSON value, its strings borrowed from the text it was read from when they can be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JsonValue<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<JsonValue<'a>>),
    Object(Members<'a>),
}

impl JsonValue<'_> {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

/// An object's members in the order given. A name given twice is found as its last value, as
/// `serde_json::Map` keeps it; a request body's own members are refused when repeated, before
/// anything reads them (`wire::json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Members<'a>(pub(crate) Vec<(Cow<'a, str>, JsonValue<'a>)>);

impl<'a> Members<'a> {
    pub(crate) fn get(&self, name: &str) -> Option<&JsonValue<'a>> {
        self.0
            .iter()
            .rev()
            .find(|(member, _)| member == name)
            .map(|(_, value)| value)
    }

    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.0.iter().any(|(member, _)| member == name)
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(member, _)| member.as_ref())
    }
}

/// A string, borrowed when the text holds it as it is (no escape in it).
pub(crate) struct BorrowedStr<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for BorrowedStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;

        impl<'de> Visitor<'de> for StrVisitor {
            type Value = BorrowedStr<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(StrVisitor)
    }
}

impl<'de> Deserialize<'de> for JsonValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;

        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = JsonValue<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(JsonValue::Null)
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<Self::Value, E> {
                Ok(JsonValue::Bool(value))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
                Ok(JsonValue::Number(value.into()))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
                Ok(JsonValue::Number(value.into()))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
                // JSON text has no NaN or infinity, so every number read from it is finite.
                Number::from_f64(value)
                    .map(JsonValue::Number)
                    .ok_or_else(|| E::custom("a number that is not finite"))
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(JsonValue::String(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(JsonValue::String(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(JsonValue::String(Cow::Owned(text)))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(JsonValue::Array(items))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(BorrowedStr(name)) = map.next_key()? {
                    members.push((name, map.next_value()?));
                }
                Ok(JsonValue::Object(Members(members)))
            }
        }

        deserializer.deserialize_any(ValueVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> JsonValue<'_> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn reads_every_kind_of_value_as_serde_json_does() {
        let text = r#"{"a": null, "b": true, "c": -3, "d": 18446744073709551615, "e": 2.5,
                       "f": 1e3, "g": "text", "h": [1, "x"], "i": {"j": {}}}"#;
        let JsonValue::Object(members) = parse(text) else {
            panic!("an object");
        };
        let reference: serde_json::Value = serde_json::from_str(text).unwrap();
        for name in ["a", "b", "c", "d", "e", "f", "g"] {
            let expected = &reference[name];
            let got = match members.get(name).unwrap() {
                JsonValue::Null => serde_json::Value::Null,
                JsonValue::Bool(value) => (*value).into(),
                JsonValue::Number(number) => number.clone().into(),
                JsonValue::String(text) => text.as_ref().into(),
                other => panic!("{name}: {other:?}"),
            };
            assert_eq!(&got, expected, "{name}");
        }
        assert_eq!(
            members.get("h"),
            Some(&JsonValue::Array(vec![
                JsonValue::Number(1.into()),
                JsonValue::String("x".into())
            ]))
        );
        let Some(JsonValue::Object(inner)) = members.get("i") else {
            panic!("an object");
        };
        assert_eq!(inner.get("j"), Some(&JsonValue::Object(Members::default())));
        assert_eq!(members.keys().collect::<Vec<_>>().len(), 9);
    }

    #[test]
    fn borrows_strings_without_escapes_and_unescapes_the_others() {
        let JsonValue::Array(items) = parse(r#"["plain", "tab\there", "\u00e9", "é"]"#) else {
            panic!("an array");
        };
        let strings: Vec<&Cow<'_, str>> = items
            .iter()
            .map(|item| match item {
                JsonValue::String(text) => text,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(matches!(strings[0], Cow::Borrowed("plain")));
        assert_eq!(strings[1], "tab\there");
        assert!(matches!(strings[1], Cow::Owned(_)));
        assert_eq!(strings[2], "é");
        assert!(matches!(strings[3], Cow::Borrowed("é")));
    }

    #[test]
    fn a_name_given_twice_is_found_as_its_last_value() {
        let JsonValue::Object(members) = parse(r#"{"x": 1, "x": 2}"#) else {
            panic!("an object");
        };
        assert_eq!(members.get("x"), Some(&JsonValue::Number(2.into())));
        assert!(members.contains_key("x") && !members.contains_key("y"));
    }
}
