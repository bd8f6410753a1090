//! Query and path parameters: `limit`, `status` and `cursor` of `listPets`, `petId` of `getPet`.
//!
//! Parsed by hand from the raw strings so that every bad value is a 400 `invalid_parameter`
//! naming the parameter, and so that the rules are exactly ours: integers are plain decimal
//! digits (no `+`, no `1.5`, no `1e2`), statuses are spelled exactly.

use petstore_domain::{
    CategoryId, NamePrefix, PageLimit, PetId, PetIds, PetListQuery, PetSearch, PetStatus, Tag,
};

use super::dto::PetStatusDto;
use super::fields;
use crate::error::ApiError;
use crate::routing::paths::PETS_PATH;
use crate::wire::cursor::CursorCodec;
use crate::wire::query::{self, LIMIT};

/// The query parameters of `listPets`, as [`parse_list_request`] reads them: their OpenAPI
/// description comes from the same names and domain rules.
pub(crate) struct ListPetsParams;

impl utoipa::IntoParams for ListPetsParams {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::schema::{ObjectBuilder, Ref, Type};
        use utoipa::openapi::Required;
        use utoipa::ToSchema as _;

        let query = |name: &str, description: String| {
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Query)
                .description(Some(description))
                .required(Required::False)
        };
        vec![
            query(
                LIMIT,
                format!(
                    "Most pets on the page: an integer from {} to {}, written as plain digits.",
                    PageLimit::MIN,
                    PageLimit::MAX
                ),
            )
            .schema(Some(fields::limit()))
            .build(),
            query(STATUS, "Only pets with this status.".to_owned())
                .schema(Some(Ref::from_schema_name(PetStatusDto::name())))
                .build(),
            query(CATEGORY_ID, "Only pets with this `categoryId`.".to_owned())
                .schema(Some(fields::category_id("A category id, as on a pet.")))
                .build(),
            query(
                TAG,
                format!(
                    "Only pets with this tag. Compared as tags are stored: trimmed, spaces \
                     collapsed, lowercased (`?tag=Small%20Dog` finds `small dog`); at most {} \
                     characters.",
                    Tag::MAX_CHARS
                ),
            )
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1)),
            ))
            .build(),
            query(
                NAME,
                "Only pets whose name starts with this, ignoring case (every letter, not only \
                 ASCII: `?name=zoë` finds `Zoë`). A prefix, not a search inside the name. \
                 Without `tag`, the pets come in name order (case-folded, by code point, then \
                 by `id`) instead of `id` order."
                    .to_owned(),
            )
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1)),
            ))
            .build(),
            query(
                CURSOR,
                "Where the page starts. Opaque: copy it from the `Link: rel=\"next\"` header of \
                 the previous\npage. It is tamper-evident and bound to the filters it was \
                 issued with (`status`, `categoryId`, `tag`, `name`): an\naltered cursor, or one \
                 used with other filters, is refused with 400\n`invalid_parameter`. `limit` may \
                 change between pages."
                    .to_owned(),
            )
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1)),
            ))
            .build(),
            query(
                ID,
                format!(
                    "Only pets with one of these ids: `?id=3&id=7`, 1 to {} ids (repeats count \
                     once). A filter like `status`: the page holds the pets that exist and \
                     match, in `id` order, with the usual `limit` and `Link`. The replacement of \
                     getPet: `?id=3`.",
                    PetIds::MAX
                ),
            )
            .style(Some(utoipa::openapi::path::ParameterStyle::Form))
            .explode(Some(true))
            .schema(Some(
                utoipa::openapi::schema::ArrayBuilder::new()
                    .items(ObjectBuilder::new().schema_type(Type::Integer).format(Some(
                        utoipa::openapi::schema::SchemaFormat::KnownFormat(
                            utoipa::openapi::schema::KnownFormat::Int64,
                        ),
                    )))
                    .min_items(Some(1))
                    .max_items(Some(PetIds::MAX)),
            ))
            .build(),
        ]
    }
}

const STATUS: &str = "status";
const CURSOR: &str = "cursor";
const ID: &str = "id";
const CATEGORY_ID: &str = "categoryId";
const TAG: &str = "tag";
const NAME: &str = "name";

/// The search filters' bytes a cursor is bound to, each with its length, so two searches never
/// share a cursor; none for a listing without them (its cursors are `status`'s alone).
fn search_bytes(search: &PetSearch) -> Vec<u8> {
    if search.is_empty() {
        return Vec::new();
    }
    let mut bytes = vec![b'S'];
    bytes.extend_from_slice(&search.category_id.map_or(0, CategoryId::get).to_be_bytes());
    for text in [
        search.tag.as_ref().map_or("", Tag::as_str),
        search.name.as_ref().map_or("", NamePrefix::as_str),
    ] {
        bytes.extend_from_slice(&(text.len() as u64).to_be_bytes());
        bytes.extend_from_slice(text.as_bytes());
    }
    bytes
}

/// What a `listPets` request asks for: a page, of all pets or of the pets with some ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListRequest {
    pub(crate) query: PetListQuery,
    pub(crate) ids: Option<PetIds>,
}

/// The `petId` path segment.
pub(crate) fn parse_pet_id(raw: &str) -> Result<PetId, ApiError> {
    PetId::parse(raw)
        .map_err(|error| ApiError::invalid_parameter(format!("path parameter `petId` {error}")))
}

/// The `listPets` query string: `limit`, `status` and `cursor` each at most once, `id` up to 100
/// times (a filter, like `status`). Any other parameter is refused, naming it, like an unknown
/// body field: a misspelt `stauts` silently ignored would list everything.
pub(crate) fn parse_list_request(
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<ListRequest, ApiError> {
    let pairs = query::pairs(query_string)?;

    let mut limit = None;
    let mut status = None;
    let mut cursor = None;
    let mut category_id = None;
    let mut tag = None;
    let mut name_prefix = None;
    let mut ids = Vec::new();
    for (name, value) in pairs {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            STATUS => &mut status,
            CURSOR => &mut cursor,
            CATEGORY_ID => &mut category_id,
            TAG => &mut tag,
            NAME => &mut name_prefix,
            ID => {
                let id = PetId::parse(&value).map_err(|error| {
                    ApiError::invalid_parameter(format!("query parameter `id` {error}"))
                })?;
                ids.push(id);
                continue;
            }
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listPets takes `limit`, `status`, \
                     `categoryId`, `tag`, `name`, `cursor` and `id`"
                )))
            }
        };
        query::set_once(slot, &name, value)?;
    }

    let status = status
        .map(|raw| {
            PetStatus::parse(&raw).map_err(|err| {
                ApiError::invalid_parameter(format!("query parameter `status` {err}"))
            })
        })
        .transpose()?;
    let ids = (!ids.is_empty())
        .then(|| {
            PetIds::new(ids).map_err(|error| {
                ApiError::invalid_parameter(format!("query parameter `id` {error}"))
            })
        })
        .transpose()?;
    let invalid = |name: &str, error: &dyn std::fmt::Display| {
        ApiError::invalid_parameter(format!("query parameter `{name}` {error}"))
    };
    let search = PetSearch {
        category_id: category_id
            .map(|raw| {
                raw.parse::<i64>()
                    .map_err(|_| invalid(CATEGORY_ID, &"must be an integer written as digits"))
                    .and_then(|id| CategoryId::parse(id).map_err(|e| invalid(CATEGORY_ID, &e)))
            })
            .transpose()?,
        tag: tag
            .map(|raw| Tag::parse(&raw).map_err(|e| invalid(TAG, &e)))
            .transpose()?,
        name: name_prefix
            .map(|raw| NamePrefix::parse(&raw).map_err(|e| invalid(NAME, &e)))
            .transpose()?,
    };
    let limit = query::page_limit(limit.as_deref())?;
    // The cursor is checked against the filters of this request: it is only valid for the
    // filters it was issued with. A listing in name order (never a lookup by id) carries the
    // name in its cursor too.
    let filters = search_bytes(&search);
    let (after, after_name) = match cursor {
        None => (None, None),
        Some(raw) if ids.is_none() && search.in_name_order() => {
            let (after, name) = cursors.decode_named(&raw, status, &filters)?;
            (Some(after), Some(name))
        }
        Some(raw) => (Some(cursors.decode_filtered(&raw, status, &filters)?), None),
    };

    Ok(ListRequest {
        query: PetListQuery {
            limit,
            status,
            search,
            after,
            after_name,
        },
        ids,
    })
}

/// The `Link` to the page after `query`'s, keeping its limit, status and ids: after the pet
/// `next_after`, and in name order after its folded name `next_after_name`.
pub(crate) fn next_page_link(
    query: &PetListQuery,
    ids: Option<&PetIds>,
    next_after: PetId,
    next_after_name: Option<&str>,
    cursors: &CursorCodec,
) -> String {
    let limit = (LIMIT, query.limit.get().to_string());
    let status = query
        .status
        .map(|status| (STATUS, status.as_str().to_owned()));
    let search = &query.search;
    let filters = [
        search
            .category_id
            .map(|id| (CATEGORY_ID, id.get().to_string())),
        search
            .tag
            .as_ref()
            .map(|tag| (TAG, tag.as_str().to_owned())),
        search
            .name
            .as_ref()
            .map(|name| (NAME, name.as_str().to_owned())),
    ];
    let ids = ids
        .map_or(&[][..], PetIds::as_slice)
        .iter()
        .map(|id| (ID, id.to_string()));
    let bound_to = search_bytes(search);
    let cursor = (
        CURSOR,
        match next_after_name {
            Some(name) => cursors.encode_named(next_after, name, query.status, &bound_to),
            None => cursors.encode_filtered(next_after, query.status, &bound_to),
        },
    );
    query::next_link(
        PETS_PATH,
        std::iter::once(limit)
            .chain(status)
            .chain(filters.into_iter().flatten())
            .chain(ids)
            .chain(std::iter::once(cursor)),
    )
}

#[cfg(test)]
mod tests;
