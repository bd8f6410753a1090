//! Query and path parameters: `limit`, `status` and `cursor` of `listPets`, `petId` of `getPet`.
//!
//! Parsed by hand from the raw strings so that every bad value is a 400 `invalid_parameter`
//! naming the parameter, and so that the rules are exactly ours: integers are plain decimal
//! digits (no `+`, no `1.5`, no `1e2`), statuses are spelled exactly.

use petstore_domain::{PageLimit, PetId, PetIds, PetListQuery, PetStatus};

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
            query(
                CURSOR,
                "Where the page starts. Opaque: copy it from the `Link: rel=\"next\"` header of \
                 the previous\npage. It is tamper-evident and bound to the `status` filter it was \
                 issued with: an\naltered cursor, or one used with another `status`, is refused \
                 with 400\n`invalid_parameter`. `limit` may change between pages."
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
    let mut ids = Vec::new();
    for (name, value) in pairs {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            STATUS => &mut status,
            CURSOR => &mut cursor,
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
                     `cursor` and `id`"
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
    let limit = query::page_limit(limit.as_deref())?;
    // The cursor is checked against the `status` of this request: it is only valid for the
    // filter it was issued with.
    let after = cursor.map(|raw| cursors.decode(&raw, status)).transpose()?;

    Ok(ListRequest {
        query: PetListQuery {
            limit,
            status,
            after,
        },
        ids,
    })
}

/// The `Link` to the page after `query`'s, keeping its limit, status and ids.
pub(crate) fn next_page_link(
    query: &PetListQuery,
    ids: Option<&PetIds>,
    next_after: PetId,
    cursors: &CursorCodec,
) -> String {
    let limit = (LIMIT, query.limit.get().to_string());
    let status = query
        .status
        .map(|status| (STATUS, status.as_str().to_owned()));
    let ids = ids
        .map_or(&[][..], PetIds::as_slice)
        .iter()
        .map(|id| (ID, id.to_string()));
    let cursor = (CURSOR, cursors.encode(next_after, query.status));
    query::next_link(
        PETS_PATH,
        std::iter::once(limit)
            .chain(status)
            .chain(ids)
            .chain(std::iter::once(cursor)),
    )
}

#[cfg(test)]
mod tests;
