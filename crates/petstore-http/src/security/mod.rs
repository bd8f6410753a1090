//! Who may call, how often and from where: bearer API keys (`auth`), per-key rate limits,
//! cross-origin access (CORS), and the headers that keep browsers from leaking responses.

pub mod auth;
pub mod cors;
pub(crate) mod headers;
pub mod rate_limit;
