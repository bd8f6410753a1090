//! The HTTP wire formats every resource shares: how a request's raw parts are read before a
//! handler turns them into domain values (a bounded JSON body, one JSON object, a query string,
//! a listing's cursor, a price), the guard that lets no error leave without the JSON `Error` body, the
//! gzip encoding of large responses for the clients that ask, and the entity tags and
//! conditional requests that spare a client a body it already holds.

pub(crate) mod body;
pub(crate) mod compression;
pub(crate) mod conditional;
pub(crate) mod cursor;
pub(crate) mod error_body;
pub(crate) mod etag;
pub(crate) mod json;
pub(crate) mod json_out;
pub(crate) mod json_value;
pub(crate) mod price;
pub(crate) mod query;
pub(crate) mod status_dto;
