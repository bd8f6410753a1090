//! The body of `updatePet`: a JSON Merge Patch (RFC 7396) of a pet. A member sets its field,
//! `null` clears it (refused for the fields every pet has), an absent one leaves it alone.
//! Checked by hand, like `NewPet`, so that every unknown or bad field is named.

use petstore_domain::{
    CategoryId, Patch, PetChange, PetChangeFields, PetName, PetStatus, PetStatusError,
};
use utoipa::ToSchema;

use super::details::{
    parse_description, parse_photo_urls, parse_price, parse_tags, DESCRIPTION, DETAIL_FIELDS,
    PHOTO_URLS, PRICE, TAGS,
};
use super::dto::{json_category_id, PetStatusDto, NEW_PET_FIELDS};
use super::fields;
use crate::error::ApiError;
use crate::wire::json::json_members;
use crate::wire::json_value::{JsonValue, Members};

/// The body of `updatePet`, parsed as JSON but not yet validated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PetPatchDto<'a> {
    fields: Members<'a>,
}

/// What a member of the patch does to its field: left alone when absent, cleared when `null`,
/// else set to what `parse` makes of it.
fn patch_of<'a, T>(
    member: Option<&JsonValue<'a>>,
    parse: impl FnOnce(&JsonValue<'a>) -> Result<T, String>,
) -> Result<Patch<T>, String> {
    match member {
        None => Ok(Patch::Keep),
        Some(JsonValue::Null) => Ok(Patch::Clear),
        Some(value) => parse(value).map(Patch::Set),
    }
}

impl<'a> PetPatchDto<'a> {
    /// Parses the raw body: one JSON object, no member given twice. A merge patch that is not an
    /// object would replace the whole pet (RFC 7396), which no pet can be.
    pub(crate) fn from_json(body: &'a [u8]) -> Result<Self, ApiError> {
        json_members(body).map(|fields| Self { fields })
    }

    /// The domain's `PetChange`, or a 400 `validation_failed` naming every offending member.
    pub(crate) fn try_into_domain(self) -> Result<PetChange, ApiError> {
        let [name_field, category_field, status_field] = NEW_PET_FIELDS;
        let mut problems = Vec::new();
        if self.fields.contains_key("id") {
            problems.push("`id` cannot be changed".to_owned());
        }
        let mut unknown: Vec<&str> = self
            .fields
            .keys()
            .filter(|key| {
                *key != "id" && !NEW_PET_FIELDS.contains(key) && !DETAIL_FIELDS.contains(key)
            })
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            let list: Vec<String> = unknown.iter().map(|key| format!("`{key}`")).collect();
            problems.push(format!(
                "unknown {} {}; a change may have `{name_field}`, `{category_field}`, \
                 `{status_field}`, `{PRICE}`, `{DESCRIPTION}`, `{PHOTO_URLS}`, `{TAGS}`",
                if unknown.len() == 1 {
                    "field"
                } else {
                    "fields"
                },
                list.join(", ")
            ));
        }
        let name = patch_of(self.fields.get(name_field), |value| match value {
            JsonValue::String(raw) => {
                PetName::parse(raw.as_ref()).map_err(|e| format!("`name` {e}"))
            }
            _ => Err("`name` must be a string".to_owned()),
        });
        let category_id: Result<Patch<CategoryId>, String> =
            patch_of(self.fields.get(category_field), json_category_id);
        let status = patch_of(self.fields.get(status_field), |value| match value {
            JsonValue::String(raw) => PetStatus::parse(raw).map_err(|e| format!("`status` {e}")),
            _ => Err(format!("`status` {PetStatusError}")),
        });
        let price = patch_of(self.fields.get(PRICE), parse_price);
        let description = patch_of(self.fields.get(DESCRIPTION), parse_description);
        let photo_urls = patch_of(self.fields.get(PHOTO_URLS), parse_photo_urls);
        let tags = patch_of(self.fields.get(TAGS), parse_tags);
        let fields = match (
            name,
            category_id,
            status,
            price,
            description,
            photo_urls,
            tags,
        ) {
            (
                Ok(name),
                Ok(category_id),
                Ok(status),
                Ok(price),
                Ok(description),
                Ok(photo_urls),
                Ok(tags),
            ) => PetChangeFields {
                name,
                category_id,
                status,
                price,
                description,
                photo_urls,
                tags,
            },
            (name, category_id, status, price, description, photo_urls, tags) => {
                problems.extend(name.err());
                problems.extend(category_id.err());
                problems.extend(status.err());
                problems.extend(price.err());
                problems.extend(description.err());
                problems.extend(photo_urls.err());
                problems.extend(tags.err());
                return Err(ApiError::validation(problems.join("; ")));
            }
        };
        let change = PetChange::new(fields);
        match change {
            Ok(change) if problems.is_empty() => Ok(change),
            Ok(_) => Err(ApiError::validation(problems.join("; "))),
            Err(cleared) => {
                problems.push(cleared.to_string());
                Err(ApiError::validation(problems.join("; ")))
            }
        }
    }
}

/// The `PetPatch` schema: what `try_into_domain` accepts, from the same field list.
impl utoipa::PartialSchema for PetPatchDto<'_> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{
            AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Ref, Type,
        };
        use utoipa::openapi::RefOr;
        let nullable = |schema: RefOr<utoipa::openapi::schema::Schema>| {
            OneOfBuilder::new()
                .item(schema)
                .item(ObjectBuilder::new().schema_type(Type::Null))
        };
        let or_null =
            |kind: Type| utoipa::openapi::schema::SchemaType::from_iter([kind, Type::Null]);
        let string_array = || {
            ArrayBuilder::new()
                .schema_type(or_null(Type::Array))
                .items(ObjectBuilder::new().schema_type(Type::String))
                .max_items(Some(10))
        };
        let mut object = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "A JSON Merge Patch (RFC 7396) of a pet: each member sets its field, an absent \
                 one leaves it as it is, `null` clears it. `name`, `categoryId` and `status` \
                 every pet has, so clearing them is refused; `price`, `description`, \
                 `photoUrls` and `tags` may be cleared. `id` cannot be changed; other members \
                 are refused.",
            ))
            .property(
                "name",
                fields::name(&format!(
                    "1 to {} characters, stored exactly as sent. {}",
                    PetName::MAX_CHARS,
                    fields::NAME_RULE
                )),
            )
            .property(
                "categoryId",
                fields::category_id(&format!(
                    "A whole number from {} to {}.",
                    CategoryId::MIN,
                    CategoryId::MAX
                )),
            )
            .property("status", Ref::from_schema_name(PetStatusDto::name()))
            .property(PRICE, nullable(Ref::from_schema_name("Price").into()))
            .property(
                DESCRIPTION,
                ObjectBuilder::new().schema_type(or_null(Type::String)),
            )
            .property(PHOTO_URLS, string_array())
            .property(TAGS, string_array())
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .build();
        object.example = Some(serde_json::json!({"name": "Rex Junior", "status": "pending"}));
        object.into()
    }
}

impl ToSchema for PetPatchDto<'_> {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("PetPatch")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: &str) -> Result<PetChange, String> {
        PetPatchDto::from_json(body.as_bytes())
            .and_then(PetPatchDto::try_into_domain)
            .map_err(|error| error.message().to_owned())
    }

    #[test]
    fn each_member_sets_its_field_and_an_absent_one_keeps_it() {
        let change = parsed(r#"{"name": "Max", "status": "pending"}"#).unwrap();
        assert_eq!(change.name().map(PetName::as_str), Some("Max"));
        assert_eq!(change.status(), Some(PetStatus::Pending));
        assert_eq!(change.category_id(), None);
        assert!(parsed("{}").unwrap().is_empty());
    }

    #[test]
    fn every_bad_member_is_named_at_once() {
        let message =
            parsed(r#"{"id": 3, "colour": "red", "name": "", "categoryId": "3", "status": 1}"#)
                .unwrap_err();
        for named in [
            "`id` cannot be changed",
            "`colour`",
            "`name`",
            "`categoryId`",
            "`status`",
        ] {
            assert!(message.contains(named), "{named}: {message}");
        }
    }

    #[test]
    fn clearing_a_field_every_pet_has_is_refused() {
        let message = parsed(r#"{"name": null, "status": null}"#).unwrap_err();
        assert!(
            message.contains("`name`") && message.contains("`status`"),
            "{message}"
        );
        assert!(message.contains("required"), "{message}");
    }

    #[test]
    fn a_patch_must_be_one_object() {
        for body in ["[]", "\"Rex\"", "null", r#"{"name": "a", "name": "b"}"#] {
            assert!(PetPatchDto::from_json(body.as_bytes()).is_err(), "{body}");
        }
    }
}
