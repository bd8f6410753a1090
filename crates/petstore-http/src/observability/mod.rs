//! What operators see of each request: its id (`X-Request-Id`), its trace (W3C Trace Context),
//! its one log line, and the metrics it is counted in.

pub mod metrics;
pub mod request_id;
pub(crate) mod request_log;
pub(crate) mod trace_context;
