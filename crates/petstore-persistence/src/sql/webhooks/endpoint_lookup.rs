//! An endpoint read inside a write transaction: what the endpoint and delivery writes both
//! check before they change anything.

use diesel::prelude::*;
use petstore_application::WebhookError;
use petstore_domain::{EndpointId, WebhookEndpoint};

use super::rows::{webhook_endpoints as endpoints, EndpointRow, ENDPOINT_COLUMNS};
use crate::sql::engine::connection::AnyConnection;
use crate::sql::idempotency::recorded_write::Stop;

/// A stored endpoint's row as the domain's endpoint, or the write's failure.
pub(super) fn stored(row: EndpointRow) -> Result<WebhookEndpoint, Stop<WebhookError>> {
    row.into_endpoint()
        .map_err(|error| Stop::Failed(WebhookError::Repository(error)))
}

/// The endpoint `id`, read inside a transaction (`None` when there is none).
pub(super) fn find_on(
    conn: &mut AnyConnection,
    id: EndpointId,
) -> QueryResult<Option<EndpointRow>> {
    endpoints::table
        .find(id.get())
        .select(ENDPOINT_COLUMNS)
        .first::<EndpointRow>(conn)
        .optional()
}

/// The endpoint `id` inside a write, refused as `NotFound` when there is none.
pub(super) fn existing(
    conn: &mut AnyConnection,
    id: EndpointId,
) -> Result<WebhookEndpoint, Stop<WebhookError>> {
    let row = find_on(conn, id)?.ok_or(Stop::Refused(WebhookError::NotFound(id)))?;
    stored(row)
}
