//! Types that exist only to describe, in the OpenAPI document, inputs the handlers parse by hand.
//!
//! `createPet` reads its body field by field and `listPets` its raw query string (to name every
//! offending field, refuse duplicates and fix the order of checks), so no derived type is
//! deserialized there. These mirrors carry the derives instead; `openapi::tests` checks them
//! against the rules the code applies (`NEW_PET_FIELDS`, `PetLimit`, `PetName`, `CategoryId`).

#![allow(dead_code)] // the fields are only read by the derives

use utoipa::{IntoParams, ToSchema};

use crate::dto::PetStatusDto;

/// The `NewPet` schema: the body of `createPet`. Unknown members are refused, so
/// `additionalProperties` is false.
#[derive(ToSchema)]
#[schema(
    as = NewPet,
    description = "A new animal. Members other than `name`, `categoryId` and `status` are refused.",
    example = json!({"name": "Rex", "categoryId": 3, "status": "available"}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewPetSchema {
    /// 1 to 255 characters (Unicode scalar values), not blank (`pattern`: at least one character
    /// that is neither whitespace nor NUL), no NUL (U+0000); stored exactly as sent.
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = r"^[^\u0000]*[^\u0000\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\u0000]*$"
    )]
    name: String,
    /// The category the pet belongs to: an integer of at least 1, written as digits only (`3`;
    /// `3.0`, `1e3` and `"3"` are refused, so an id never passes through a double).
    #[schema(minimum = 1)]
    category_id: i64,
    /// Omitted or `null`: `available`.
    status: Option<PetStatusDto>,
}

/// The query parameters of `listPets`. Each may be given at most once; unknown ones are ignored.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListPetsParams {
    /// Most pets on the page: an integer from 1 to 100, written as plain digits.
    #[param(required = false, minimum = 1, maximum = 100, default = 20)]
    limit: i32,
    /// Only pets with this status.
    #[param(required = false)]
    status: PetStatusDto,
    /// Where the page starts. Opaque: copy it from the `Link: rel="next"` header of the previous
    /// page. It is tamper-evident and bound to the `status` filter it was issued with: an
    /// altered cursor, or one used with another `status`, is refused with 400
    /// `invalid_parameter`. `limit` may change between pages.
    #[param(required = false, min_length = 1)]
    cursor: String,
}
