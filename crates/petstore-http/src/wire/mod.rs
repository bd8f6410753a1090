//! The HTTP wire formats every resource shares: how a request's raw parts are read before a
//! handler turns them into domain values (a bounded JSON body, one JSON object, a query string,
//! a listing's cursor), the guard that lets no error leave without the JSON `Error` body, and
//! the gzip encoding of large responses for the clients that ask.

pub(crate) mod body;
pub(crate) mod compression;
pub(crate) mod cursor;
pub(crate) mod error_body;
pub(crate) mod json;
pub(crate) mod query;
pub(crate) mod status_dto;
