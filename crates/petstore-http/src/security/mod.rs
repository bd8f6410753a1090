//! Who may call, how often and from where: bearer API keys (`auth`), per-key and per-address
//! rate limits,
//! cross-origin access (CORS), and the headers that keep browsers from leaking responses.

pub mod auth;
pub mod client_address;
pub mod client_limit;
pub mod cors;
pub(crate) mod headers;
pub mod rate_limit;
