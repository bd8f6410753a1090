//! Query and path parameters: `limit`, `status` and `cursor` of `listPets`, `petId` of `getPet`.
//!
//! Parsed by hand from the raw strings so that every bad value is a 400 `invalid_parameter`
//! naming the parameter, and so that the rules are exactly ours: integers are plain decimal
//! digits (no `+`, no `1.5`, no `1e2`), statuses are spelled exactly.

use actix_web::web::Query;
use petstore_domain::{PetId, PetLimit, PetListQuery, PetStatus};

use crate::cursor::CursorCodec;
use crate::dto::{fields, PetStatusDto};
use crate::error::ApiError;
use crate::paths::PETS_PATH;

/// The query parameters of `listPets`, as [`parse_list_query`] reads them: their OpenAPI
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
                    PetLimit::MIN,
                    PetLimit::MAX
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
        ]
    }
}

const LIMIT: &str = "limit";
const STATUS: &str = "status";
const CURSOR: &str = "cursor";

/// The `petId` path segment.
pub(crate) fn parse_pet_id(raw: &str) -> Result<PetId, ApiError> {
    PetId::parse(raw)
        .map_err(|error| ApiError::invalid_parameter(format!("path parameter `petId` {error}")))
}

/// The `listPets` query string. Parameters other than `limit`, `status` and `cursor` are
/// ignored (clients and proxies add their own, e.g. cache busters); each known one may appear
/// at most once.
pub(crate) fn parse_list_query(
    query_string: &str,
    cursors: &CursorCodec,
) -> Result<PetListQuery, ApiError> {
    let pairs = Query::<Vec<(String, String)>>::from_query(query_string)
        .map_err(|_| ApiError::invalid_parameter("the query string is not valid"))?
        .into_inner();

    let mut limit = None;
    let mut status = None;
    let mut cursor = None;
    for (name, value) in pairs {
        let slot = match name.as_str() {
            LIMIT => &mut limit,
            STATUS => &mut status,
            CURSOR => &mut cursor,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(ApiError::invalid_parameter(format!(
                "query parameter `{name}` must be given at most once"
            )));
        }
    }

    let limit = match limit {
        None => PetLimit::DEFAULT,
        Some(raw) => PetLimit::parse_text(&raw).map_err(|error| {
            ApiError::invalid_parameter(format!("query parameter `limit` {error}"))
        })?,
    };
    let status = status
        .map(|raw| {
            PetStatus::parse(&raw).map_err(|err| {
                ApiError::invalid_parameter(format!("query parameter `status` {err}"))
            })
        })
        .transpose()?;
    // The cursor is checked against the `status` of this request: it is only valid for the
    // filter it was issued with.
    let after = cursor.map(|raw| cursors.decode(&raw, status)).transpose()?;

    Ok(PetListQuery {
        limit,
        status,
        after,
    })
}

/// The `Link` target of the page after `query`'s, keeping its limit and status.
pub(crate) fn next_page_link(
    query: &PetListQuery,
    next_after: PetId,
    cursors: &CursorCodec,
) -> String {
    let mut target = format!("{PETS_PATH}?limit={}", query.limit.get());
    if let Some(status) = query.status {
        target.push_str("&status=");
        target.push_str(status.as_str());
    }
    target.push_str("&cursor=");
    target.push_str(&cursors.encode(next_after, query.status));
    format!("<{target}>; rel=\"next\"")
}

#[cfg(test)]
mod tests;
