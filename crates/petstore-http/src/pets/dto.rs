//! The pets' JSON shapes: `Pet` (and `Pets`, a page of them) going out, `NewPet` coming in.
//!
//! The incoming body is checked by hand from its members (their text borrowed from the body)
//! rather than derived with serde: the API promises a 400 naming the offending field for every
//! problem (an unknown field, `categoryId` as a string, float or `1e3`, a `null` where it is not
//! allowed...), which a derived `Deserialize` reports inconsistently or not at all.

use petstore_domain::{CategoryId, NewPet, Pet, PetName, PetStatus};
use serde::Serialize;
use utoipa::ToSchema;

use super::details::{parse_details, DetailsOut, PriceDto, DETAIL_FIELDS};
use super::fields;
use crate::error::ApiError;
use crate::wire::json::{json_members, whole_i64, NotWholeI64};
use crate::wire::json_value::{JsonValue, Members};
use crate::wire::status_dto::status_dto;

/// A pet as the API returns it: `{"id", "name", "categoryId", "status"}`, and its details
/// (`price`, `description`, `photoUrls`, `tags`) only when it has them. Also the `Pet` schema of
/// the OpenAPI document; its constraints restate what the domain guarantees of every stored pet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Pet, description = "An animal of the store.", example = json!({"id": 1, "name": "Rex", "categoryId": 3, "status": "available"}))]
#[serde(rename_all = "camelCase")]
pub(crate) struct PetDto {
    /// Assigned by the service on creation; unique and increasing, never reused.
    pub(crate) id: i64,
    #[schema(schema_with = fields::pet_name)]
    pub(crate) name: String,
    #[schema(schema_with = fields::pet_category_id)]
    pub(crate) category_id: i64,
    pub(crate) status: PetStatusDto,
    // Absent when the pet has no price (said in `Price`'s own description: a `$ref` may carry
    // no description of its own in OpenAPI 3.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub(crate) price: Option<PriceDto>,
    /// Absent when the pet has no description. Up to 2,000 characters; line breaks allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub(crate) description: Option<String>,
    /// Absent when the pet has no photos: 1 to 10 absolute `https` URLs, never fetched by the
    /// service.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub(crate) photo_urls: Option<Vec<String>>,
    /// Absent when the pet has no tags: 1 to 10 short names, lowercased, spaces collapsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub(crate) tags: Option<Vec<String>>,
}

impl From<Pet> for PetDto {
    fn from(pet: Pet) -> Self {
        let (id, name, category_id, status, details) = pet.into_parts();
        let details = DetailsOut::from(details);
        Self {
            id: id.get(),
            name: name.into_inner(),
            category_id: category_id.get(),
            status: status.into(),
            price: details.price,
            description: details.description,
            photo_urls: details.photo_urls,
            tags: details.tags,
        }
    }
}

/// The body of a listPets page: a bare JSON array of pets (the `Pets` schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(
    as = Pets,
    description = "A page of pets: a bare JSON array in ascending `id` order.",
    example = json!([
        {"id": 1, "name": "Rex", "categoryId": 3, "status": "available"},
        {"id": 2, "name": "Tom", "categoryId": 1, "status": "sold"}
    ])
)]
pub(crate) struct PetsDto(pub(crate) Vec<PetDto>);

status_dto!(
    /// The wire form of the domain's `PetStatus`.
    PetStatusDto for PetStatus,
    schema "PetStatus",
    "Availability of a pet. A new pet is `available` unless its creator says otherwise."
);

const NAME: &str = "name";
const CATEGORY_ID: &str = "categoryId";
const STATUS: &str = "status";

/// The fields a `createPet` body may have.
pub(crate) const NEW_PET_FIELDS: [&str; 3] = [NAME, CATEGORY_ID, STATUS];

/// The body of `createPet`, parsed as JSON but not yet validated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewPetDto<'a> {
    fields: Members<'a>,
}

impl<'a> NewPetDto<'a> {
    /// Parses the raw body. Only the JSON itself is checked here: it must be one object with
    /// no field given twice (`{"name":"a","name":"b"}` is ambiguous, so it is refused rather
    /// than silently keeping the last one).
    pub(crate) fn from_json(body: &'a [u8]) -> Result<Self, ApiError> {
        json_members(body).map(|fields| Self { fields })
    }

    /// The domain's `NewPet`, or a 400 `validation_failed` naming every offending field.
    pub(crate) fn try_into_domain(self) -> Result<NewPet, ApiError> {
        let mut problems = Vec::new();

        let mut unknown: Vec<&str> = self
            .fields
            .keys()
            .filter(|key| !NEW_PET_FIELDS.contains(key) && !DETAIL_FIELDS.contains(key))
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
                "unknown {noun} {list}; allowed fields are `name`, `categoryId`, `status`, \
                 `price`, `description`, `photoUrls`, `tags`"
            ));
        }

        let name = match self.fields.get(NAME) {
            None => Err("`name` is required".to_owned()),
            Some(JsonValue::String(raw)) => {
                PetName::parse(raw.as_ref()).map_err(|e| format!("`name` {e}"))
            }
            Some(_) => Err("`name` must be a string".to_owned()),
        };

        let category_id = match self.fields.get(CATEGORY_ID) {
            None => Err("`categoryId` is required".to_owned()),
            Some(value) => json_category_id(value),
        };

        // Absent and `null` both mean "use the default".
        let status = match self.fields.get(STATUS) {
            None | Some(JsonValue::Null) => Ok(None),
            Some(JsonValue::String(raw)) => PetStatus::parse(raw)
                .map(Some)
                .map_err(|e| format!("`status` {e}")),
            Some(_) => Err(format!("`status` {}", petstore_domain::PetStatusError)),
        };

        let details = parse_details(&self.fields);
        match (name, category_id, status, details) {
            (Ok(name), Ok(category_id), Ok(status), Ok(details)) if problems.is_empty() => {
                Ok(NewPet::new(name, category_id, status).with_details(details))
            }
            (name, category_id, status, details) => {
                problems.extend(name.err());
                problems.extend(category_id.err());
                problems.extend(status.err());
                problems.extend(details.err().into_iter().flatten());
                Err(ApiError::validation(problems.join("; ")))
            }
        }
    }
}

/// The `NewPet` schema: the body `createPet` parses, stated from the same field list and
/// domain rules that `try_into_domain` applies.
impl utoipa::PartialSchema for NewPetDto<'_> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{
            AdditionalProperties, ObjectBuilder, OneOfBuilder, Ref, Type,
        };
        let mut status = Ref::from_schema_name(PetStatusDto::name());
        status.description = "Omitted or `null`: `available`.".to_owned();
        let [name, category_id, status_field] = NEW_PET_FIELDS;
        let or_null =
            |kind: Type| utoipa::openapi::schema::SchemaType::from_iter([kind, Type::Null]);
        let strings = |description: &str| {
            utoipa::openapi::schema::ArrayBuilder::new()
                .schema_type(or_null(Type::Array))
                .items(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1)),
                )
                .max_items(Some(10))
                .description(Some(description))
        };
        let mut object = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(format!(
                "A new animal. Members other than `{name}`, `{category_id}`, `{status_field}`, \
                 `price`, `description`, `photoUrls` and `tags` are refused; the last four are \
                 optional (`null` is the same as leaving them out)."
            )))
            .required(NAME)
            .required(CATEGORY_ID)
            .property(
                NAME,
                fields::name(&format!(
                    "1 to {} characters (Unicode scalar values), stored exactly as sent. {}",
                    PetName::MAX_CHARS,
                    fields::NAME_RULE
                )),
            )
            .property(
                CATEGORY_ID,
                fields::category_id(&format!(
                    "The category the pet belongs to: a number with a whole value from {} to \
                     {} (`3`, `3.0` and `1e3` are all 3; `3.5` and `\"3\"` are refused). \
                     Beyond 2^53, write it as digits: most JSON parsers read other spellings \
                     as doubles.",
                    CategoryId::MIN,
                    CategoryId::MAX
                )),
            )
            .property(
                STATUS,
                OneOfBuilder::new()
                    .item(status)
                    .item(ObjectBuilder::new().schema_type(Type::Null)),
            )
            .property(
                "price",
                OneOfBuilder::new()
                    .item(Ref::from_schema_name("Price"))
                    .item(ObjectBuilder::new().schema_type(Type::Null)),
            )
            .property(
                "description",
                ObjectBuilder::new()
                    .schema_type(or_null(Type::String))
                    .min_length(Some(1))
                    .max_length(Some(petstore_domain::PetDescription::MAX_CHARS))
                    .description(Some(
                        "Free text; line breaks allowed, invisible and control characters \
                         refused.",
                    )),
            )
            .property(
                "photoUrls",
                strings(
                    "Up to 10 absolute `https` URLs (no user or password in them), each at \
                     most 2,000 bytes. Kept as given (normalised); never fetched.",
                ),
            )
            .property(
                "tags",
                strings(
                    "Up to 10 short names (at most 32 characters each), stored trimmed, \
                     lowercased, spaces collapsed, repeats dropped; no commas.",
                ),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .build();
        object.example =
            Some(serde_json::json!({"name": "Rex", "categoryId": 3, "status": "available"}));
        object.into()
    }
}

impl ToSchema for NewPetDto<'_> {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NewPet")
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            PetStatusDto::name().into_owned(),
            <PetStatusDto as utoipa::PartialSchema>::schema(),
        ));
    }
}

/// `categoryId` as JSON Schema's `integer` allows it: any JSON number whose value is whole
/// (`3`, `3.0`, `1e3`), from 1 to 2^63-1. The message says what is wrong: not a number, a
/// fraction, or out of range.
pub(super) fn json_category_id(value: &JsonValue<'_>) -> Result<CategoryId, String> {
    let range = || format!("from {} to {}", CategoryId::MIN, CategoryId::MAX);
    let JsonValue::Number(number) = value else {
        return Err(format!("`categoryId` must be an integer {}", range()));
    };
    let out_of_range = || format!("`categoryId` must be {} (got {number})", range());
    match whole_i64(number) {
        Ok(id) => CategoryId::parse(id).map_err(|_| out_of_range()),
        Err(NotWholeI64::Fraction) => Err(format!(
            "`categoryId` must be a whole number (got {number})"
        )),
        Err(NotWholeI64::OutOfRange) => Err(out_of_range()),
    }
}

#[cfg(test)]
mod tests;
