//! The JSON shapes of the API: `Pet` going out, `NewPet` coming in.
//!
//! The incoming body is checked by hand from a `serde_json::Map` rather than derived with
//! serde: the API promises a 400 naming the offending field for every problem (an unknown
//! field, `categoryId` as a string, float or `1e3`, a `null` where it is not allowed...), which a
//! derived `Deserialize` reports inconsistently or not at all.

use std::collections::HashSet;
use std::fmt;

use petstore_domain::{CategoryId, NewPet, Pet, PetName, PetStatus};
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;

/// A pet as the API returns it: `{"id", "name", "categoryId", "status"}`. Also the `Pet` schema of
/// the OpenAPI document; its constraints restate what the domain guarantees of every stored pet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Pet, description = "An animal of the store.", example = json!({"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}))]
#[serde(rename_all = "camelCase")]
pub struct PetDto {
    /// Assigned by the service on creation; unique and increasing, never reused.
    pub id: i64,
    /// 1 to 255 characters, not blank, no NUL (U+0000).
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = r"^[^\u0000]*[^\u0000\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\u0000]*$"
    )]
    pub name: String,
    /// The category the pet belongs to.
    #[schema(minimum = 1)]
    pub category_id: i64,
    pub status: PetStatusDto,
}

impl From<Pet> for PetDto {
    fn from(pet: Pet) -> Self {
        Self {
            id: pet.id.get(),
            name: pet.name.into_inner(),
            category_id: pet.category_id.get(),
            status: pet.status.into(),
        }
    }
}

/// The body of a listPets page: a bare JSON array of pets (the `Pets` schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Pets, description = "A page of pets: a bare JSON array in ascending `id` order.")]
pub struct PetsDto(pub Vec<PetDto>);

/// The wire form of the domain's `PetStatus`: its `as_str`, and a `PetStatus` schema that lists
/// `PetStatus::ALL`, so the statuses are spelled once, in the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PetStatusDto(pub PetStatus);

impl From<PetStatus> for PetStatusDto {
    fn from(status: PetStatus) -> Self {
        Self(status)
    }
}

impl Serialize for PetStatusDto {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.as_str())
    }
}

impl utoipa::PartialSchema for PetStatusDto {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .description(Some(
                "Availability of a pet. A new pet is `available` unless its creator says otherwise.",
            ))
            .enum_values(Some(PetStatus::ALL.map(PetStatus::as_str)))
            .into()
    }
}

impl ToSchema for PetStatusDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("PetStatus")
    }
}

/// The fields a `createPet` body may have.
pub const NEW_PET_FIELDS: [&str; 3] = ["name", "categoryId", "status"];

const CATEGORY_ID_RULE: &str = "`categoryId` must be an integer of at least 1";

/// The body of `createPet`, parsed as JSON but not yet validated.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPetDto {
    fields: Map<String, Value>,
}

impl NewPetDto {
    /// Parses the raw body. Only the JSON itself is checked here: it must be one object with
    /// no field given twice (`{"name":"a","name":"b"}` is ambiguous, so it is refused rather
    /// than silently keeping the last one).
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
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
        Ok(Self { fields })
    }

    /// The domain's `NewPet`, or a 400 `validation_failed` naming every offending field.
    pub fn try_into_domain(self) -> Result<NewPet, ApiError> {
        let mut problems = Vec::new();

        let mut unknown: Vec<&str> = self
            .fields
            .keys()
            .map(String::as_str)
            .filter(|key| !NEW_PET_FIELDS.contains(key))
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            let list = unknown
                .iter()
                .map(|key| format!("`{key}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let noun = if unknown.len() == 1 {
                "field"
            } else {
                "fields"
            };
            problems.push(format!(
                "unknown {noun} {list}; allowed fields are `name`, `categoryId`, `status`"
            ));
        }

        let name = match self.fields.get("name") {
            None => Err("`name` is required".to_owned()),
            Some(Value::String(raw)) => {
                PetName::parse(raw.as_str()).map_err(|e| format!("`name` {e}"))
            }
            Some(_) => Err("`name` must be a string".to_owned()),
        };

        let category_id = match self.fields.get("categoryId") {
            None => Err("`categoryId` is required".to_owned()),
            Some(value) => json_int64(value)
                .and_then(|id| CategoryId::parse(id).ok())
                .ok_or_else(|| CATEGORY_ID_RULE.to_owned()),
        };

        // Absent and `null` both mean "use the default".
        let status = match self.fields.get("status") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(raw)) => PetStatus::parse(raw)
                .map(Some)
                .map_err(|e| format!("`status` {e}")),
            Some(_) => Err(format!("`status` {}", petstore_domain::PetStatusError)),
        };

        match (name, category_id, status) {
            (Ok(name), Ok(category_id), Ok(status)) if problems.is_empty() => {
                Ok(NewPet::new(name, category_id, status))
            }
            (name, category_id, status) => {
                problems.extend(name.err());
                problems.extend(category_id.err());
                problems.extend(status.err());
                Err(ApiError::validation(problems.join("; ")))
            }
        }
    }
}

/// The value as an `i64` when it is a JSON integer literal. Floats are refused even when
/// integral (`1.0`, `1e3`): the schema says integer, and accepting some floats but not others
/// would be a rule no client could guess.
fn json_int64(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) if !n.is_f64() => n.as_i64(),
        _ => None,
    }
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

#[cfg(test)]
mod tests;
