//! The OpenAPI schemas of the values clients send and receive, built from the domain's own
//! constants, so each rule is stated once: a name's length (and the pattern that says "not
//! blank, no NUL"), the category id's minimum, the page size's bounds and default.
//! `openapi/tests.rs` checks the pattern against `PetName::parse` character by character.

use petstore_domain::{CategoryId, PageLimit, PetName};
use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, SchemaFormat, Type};

/// `PetName::parse`'s character rules as a JSON Schema pattern: no NUL and no bidirectional
/// control anywhere, and at least one character that is neither whitespace (Rust's
/// `char::is_whitespace`) nor invisible (`petstore_domain::is_invisible`).
pub(crate) const NAME_PATTERN: &str = concat!(
    r"^[^\u0000\u202a-\u202e\u2066-\u2069]*",
    r"[^\u0000\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000",
    r"\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e",
    r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8]",
    r"[^\u0000\u202a-\u202e\u2066-\u2069]*$"
);

/// A pet's name, as `PetName` accepts it.
pub(crate) fn name(description: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .min_length(Some(1))
        .max_length(Some(PetName::MAX_CHARS))
        .pattern(Some(NAME_PATTERN))
        .build()
}

/// A category id, as `CategoryId` accepts it.
pub(crate) fn category_id(description: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .description(Some(description))
        .minimum(Some(CategoryId::MIN))
        .maximum(Some(CategoryId::MAX))
        .build()
}

/// The size of a listing page, as `PageLimit` accepts it.
pub(crate) fn limit() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
        .default(Some(PageLimit::DEFAULT.get().into()))
        .maximum(Some(PageLimit::MAX))
        .minimum(Some(PageLimit::MIN))
        .build()
}

/// `Pet.name`'s schema.
pub(crate) fn pet_name() -> Object {
    name(&format!(
        "1 to {} characters, at least one visible, no NUL (U+0000), no bidirectional control \
         characters.",
        PetName::MAX_CHARS
    ))
}

/// `Pet.categoryId`'s schema.
pub(crate) fn pet_category_id() -> Object {
    category_id("The category the pet belongs to.")
}
