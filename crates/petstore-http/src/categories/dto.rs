//! The category resource's bodies: `Category` as answered, `NewCategory` as `createCategory`
//! takes it, `CategoryPatch` (a JSON Merge Patch) as `updateCategory` takes it. The request
//! bodies are read by hand from the JSON object, so that every unknown or bad member is named.

use petstore_domain::{Category, CategoryName};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

use crate::error::ApiError;

/// A category as the API returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Category, description = "A named group of pets: pets whose `categoryId` is this \
    category's `id`.", example = json!({"id": 3, "name": "Dogs"}))]
pub(crate) struct CategoryDto {
    /// Unique, assigned by the store, increasing; never reused, also after a removal.
    #[schema(minimum = 1)]
    id: i64,
    /// Unique among the categories regardless of case, without spaces around it.
    #[schema(min_length = 1, max_length = 100)]
    name: String,
}

impl From<Category> for CategoryDto {
    fn from(category: Category) -> Self {
        Self {
            id: category.id().get(),
            name: category.name().as_str().to_owned(),
        }
    }
}

/// A `name` member's schema, for both request bodies.
fn name_schema(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(CategoryName::MAX_CHARS))
        .description(Some(description))
}

/// What a category's name may be, in words.
const NAME_RULE: &str = "1 to 100 characters once the spaces around it are trimmed, following \
    the same character rule as a pet's `name` (visible characters and spaces; no control, \
    format or invisible characters). Unique among the categories regardless of case \
    (`Dogs` and `DOGS` are one name): a name taken is 409 `conflict`.";

/// The body of `createCategory`: `{"name": "Dogs"}`. Parsed by hand ([`NewCategoryDto::parse`]).
#[derive(Debug)]
pub(crate) struct NewCategoryDto;

impl utoipa::PartialSchema for NewCategoryDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "A category to add. Members other than `name` are refused.",
            ))
            .property("name", name_schema(NAME_RULE))
            .required("name")
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .examples([serde_json::json!({"name": "Dogs"})])
            .into()
    }
}

impl ToSchema for NewCategoryDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NewCategory")
    }
}

impl NewCategoryDto {
    /// The new category's name from a parsed JSON object, or a 400 naming every problem.
    pub(crate) fn parse(fields: &Map<String, Value>) -> Result<CategoryName, ApiError> {
        let mut problems = unknown_fields(fields);
        match fields.get("name") {
            None => problems.push("`name` is required".to_owned()),
            Some(value) => match parse_name(value) {
                Ok(name) if problems.is_empty() => return Ok(name),
                Ok(_) => {}
                Err(problem) => problems.push(problem),
            },
        }
        Err(ApiError::validation(problems.join("; ")))
    }
}

/// The body of `updateCategory`, a JSON Merge Patch (RFC 7396): `{"name": "Hounds"}` renames,
/// `{}` changes nothing. Parsed by hand ([`CategoryPatchDto::parse`]).
#[derive(Debug)]
pub(crate) struct CategoryPatchDto;

impl utoipa::PartialSchema for CategoryPatchDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "A JSON Merge Patch (RFC 7396) of a category: the members given are changed, \
                 the others kept. `name` renames it; it cannot be `null` (a category always has \
                 a name). Members other than `name` are refused.",
            ))
            .property("name", name_schema(NAME_RULE))
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .examples([serde_json::json!({"name": "Hounds"})])
            .into()
    }
}

impl ToSchema for CategoryPatchDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("CategoryPatch")
    }
}

impl CategoryPatchDto {
    /// The new name, if the patch renames (`None`: it changes nothing), or a 400 naming every
    /// problem.
    pub(crate) fn parse(fields: &Map<String, Value>) -> Result<Option<CategoryName>, ApiError> {
        let mut problems = unknown_fields(fields);
        let name = match fields.get("name") {
            None => None,
            Some(Value::Null) => {
                problems.push(
                    "`name` cannot be removed (`null`): a category always has a name".to_owned(),
                );
                None
            }
            Some(value) => parse_name(value)
                .map_err(|problem| problems.push(problem))
                .ok(),
        };
        if problems.is_empty() {
            Ok(name)
        } else {
            Err(ApiError::validation(problems.join("; ")))
        }
    }
}

/// A problem for each member other than `name`, in name order.
fn unknown_fields(fields: &Map<String, Value>) -> Vec<String> {
    let mut unknown: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "name")
        .collect();
    unknown.sort_unstable();
    unknown
        .into_iter()
        .map(|key| format!("unknown field `{key}`; the only field is `name`"))
        .collect()
}

fn parse_name(value: &Value) -> Result<CategoryName, String> {
    let Value::String(raw) = value else {
        return Err("`name` must be a string".to_owned());
    };
    CategoryName::parse(raw).map_err(|error| format!("`name` {error}"))
}

#[cfg(test)]
mod tests {
    use petstore_domain::CategoryId;
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn refusal(result: Result<impl std::fmt::Debug, ApiError>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code(), crate::error::ErrorCode::ValidationFailed);
        error.message().to_owned()
    }

    #[test]
    fn a_category_is_its_id_and_name() {
        let category = Category::new(
            CategoryId::parse(3).unwrap(),
            CategoryName::parse("Dogs").unwrap(),
        );
        assert_eq!(
            serde_json::to_value(CategoryDto::from(category)).unwrap(),
            json!({"id": 3, "name": "Dogs"})
        );
    }

    #[test]
    fn a_new_category_takes_a_name_trimmed() {
        let name = NewCategoryDto::parse(&object(json!({"name": " Dogs "}))).unwrap();
        assert_eq!(name.as_str(), "Dogs");
    }

    #[test]
    fn a_new_category_names_every_problem() {
        assert_eq!(
            refusal(NewCategoryDto::parse(&object(json!({})))),
            "`name` is required"
        );
        assert_eq!(
            refusal(NewCategoryDto::parse(&object(json!({"name": 7})))),
            "`name` must be a string"
        );
        assert_eq!(
            refusal(NewCategoryDto::parse(&object(
                json!({"name": "   ", "zeta": 1, "alpha": 2})
            ))),
            "unknown field `alpha`; the only field is `name`; unknown field `zeta`; the only \
             field is `name`; `name` must not be blank"
        );
        assert!(refusal(NewCategoryDto::parse(&object(
            json!({"name": "a".repeat(101)})
        )))
        .contains("at most 100 characters"));
    }

    #[test]
    fn a_patch_renames_changes_nothing_or_is_refused() {
        let renamed = CategoryPatchDto::parse(&object(json!({"name": "Hounds"}))).unwrap();
        assert_eq!(
            renamed.map(|name| name.as_str().to_owned()),
            Some("Hounds".into())
        );
        assert_eq!(CategoryPatchDto::parse(&object(json!({}))).unwrap(), None);
        assert!(
            refusal(CategoryPatchDto::parse(&object(json!({"name": null}))))
                .contains("cannot be removed")
        );
        assert_eq!(
            refusal(CategoryPatchDto::parse(&object(json!({"id": 4})))),
            "unknown field `id`; the only field is `name`"
        );
        assert!(refusal(CategoryPatchDto::parse(&object(
            json!({"name": "a\u{202e}b"})
        )))
        .contains("U+202E"));
    }
}
