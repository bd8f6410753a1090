//! The OpenAPI schemas of the values clients send and receive, built from the domain's own
//! constants, so each rule is stated once: a name's length and characters (in words: the
//! domain's rule for human-entered names), the category id's minimum,
//! the page size's bounds and default.

use petstore_domain::{CategoryId, PageLimit, PetName};
use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, SchemaFormat, Type};

/// What a name may hold, in words, for every `name` schema. No `pattern`: the rule written out
/// is thousands of ranges, many above the Basic Multilingual Plane, which OpenAPI tools read
/// as ECMA-262 without the `u` flag and refuse (Spectral, Redocly).
pub(crate) const NAME_RULE: &str = "Visible characters and spaces (Unicode general category \
    Zs), at least one visible. A combining mark or variation selector must follow a visible \
    character, and a zero width joiner (U+200D) is allowed only between it and an emoji \
    (Extended_Pictographic), so \"Zoë\" (either spelling) and \
    \"\u{1f415}\u{200d}\u{1f9ba}\" are names. At most one variation selector follows a \
    character, directly, and only one it selects a form of: VS15 or VS16 after an emoji, VS1 to \
    VS3 after a CJK ideograph, a Mongolian free variation selector after a Mongolian letter; \
    VS17 to VS256 are refused. Refused, anywhere: control characters (Cc: \
    NUL, ESC, newlines, C1), format characters (Cf: RLM U+200F, ALM U+061C, U+202E, zero width \
    spaces), private use and unassigned code points (Co, Cn), line and paragraph separators \
    (Zl, Zp), Default_Ignorable_Code_Point (tag characters U+E0000 to U+E007F, Hangul fillers, \
    U+1D173 to U+1D17A), Bidi_Control, and U+2800 BRAILLE PATTERN BLANK (a symbol that draws \
    nothing). Properties as of Unicode 16.0; the 400 names the first character refused by its \
    code point.";

/// A pet's name: within `PetName`'s length, its characters in `description`.
pub(crate) fn name(description: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .min_length(Some(1))
        .max_length(Some(PetName::MAX_CHARS))
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
        "1 to {} characters. Names given since the rule of `NewPet.name` follow it; one stored \
         under an older, looser rule is served as stored.",
        PetName::MAX_CHARS
    ))
}

/// `Pet.categoryId`'s schema.
pub(crate) fn pet_category_id() -> Object {
    category_id("The category the pet belongs to.")
}
