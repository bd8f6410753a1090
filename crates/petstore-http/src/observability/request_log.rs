//! Each request's one log line and metrics record. A 500 is an error to look into; another 5xx
//! (storage away or busy) a warning; everything else an info line.
//!
//! The line is written here rather than by `tracing-actix-web`, whose `TracingLogger` builds a
//! span with a dozen fields and a UUID per request, which costs more than the request it logs;
//! this keeps to a line and two metric handles found in a short per-thread list.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use actix_web::http::header::HeaderValue;
use actix_web::http::{Method, StatusCode};

use crate::observability::metrics;
use crate::observability::request_id::RequestId;
use crate::observability::trace_context::{Hex, SpanId, TraceContext};

/// What one request's log line and metrics record say about it.
pub(crate) struct Outcome<'a> {
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    pub(crate) request_id: &'a RequestId,
    pub(crate) operation: &'static str,
    /// The template of the route it matched (`/v1/pets/{petId}`), if one did.
    pub(crate) route: Option<&'static str>,
    pub(crate) status: StatusCode,
    pub(crate) started: Instant,
    pub(crate) key_id: Option<&'a str>,
    /// On a 401: the id a refused token claimed (well-formed, unverified), to tell whose key
    /// is failing.
    pub(crate) presented_key_id: Option<&'a str>,
    pub(crate) cause: Option<&'a str>,
    /// The client's address: the peer, or the nearest untrusted forwarded address behind a
    /// trusted proxy (`security::client_limit`).
    pub(crate) client: Option<IpAddr>,
    pub(crate) user_agent: Option<&'a HeaderValue>,
    pub(crate) trace: TraceContext,
}

/// The service's name and version, on every request line, for a log store that mixes services.
const SERVICE: &str = "petstore";
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Most bytes of a `User-Agent` a log line holds (escapes included).
const LOGGED_USER_AGENT_MAX: usize = 128;

/// Most bytes of a path a log line holds: a route's paths are short, and a client must not be
/// able to write kilobytes into the log with one request (actix-http accepts heads up to 128 KiB).
const LOGGED_PATH_MAX: usize = 256;

/// `path` as logged: whole up to [`LOGGED_PATH_MAX`] bytes, else its start (cut at a character
/// boundary) and a mark saying how much was left out.
fn logged_path(path: &str) -> Cow<'_, str> {
    bounded(path, LOGGED_PATH_MAX)
}

/// `text` whole up to `max` bytes, else its start (cut at a character boundary) and a mark
/// saying how much was left out: a client must not be able to write kilobytes into the log.
fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!(
        "{}...[{} more bytes not logged]",
        &text[..cut],
        text.len() - cut
    ))
}

/// `agent` as logged: printable ASCII as it is, a backslash doubled and every other byte (a tab,
/// the bytes of a non-ASCII character) as `\xNN`, so the line says exactly which bytes came
/// whatever their encoding. Whole up to [`LOGGED_USER_AGENT_MAX`] bytes, else cut before the
/// escape that would pass it, with a mark saying how many of the agent's bytes were left out.
fn logged_user_agent(agent: &HeaderValue) -> Cow<'_, str> {
    let bytes = agent.as_bytes();
    let plain = |byte: &u8| matches!(byte, b' '..=b'~') && *byte != b'\\';
    if bytes.iter().all(plain) {
        let agent = std::str::from_utf8(bytes).expect("printable ASCII is UTF-8");
        return bounded(agent, LOGGED_USER_AGENT_MAX);
    }
    let mut logged = String::with_capacity(LOGGED_USER_AGENT_MAX);
    for (at, &byte) in bytes.iter().enumerate() {
        let width = match byte {
            b'\\' => 2,
            _ if plain(&byte) => 1,
            _ => 4,
        };
        if logged.len() + width > LOGGED_USER_AGENT_MAX {
            let _ = write!(logged, "...[{} more bytes not logged]", bytes.len() - at);
            break;
        }
        let _ = match byte {
            b'\\' => logged.write_str("\\\\"),
            _ if plain(&byte) => logged.write_char(char::from(byte)),
            _ => write!(logged, "\\x{byte:02x}"),
        };
    }
    Cow::Owned(logged)
}

/// A client's address as logged: as `Display` writes it, an IPv4 address without it.
enum LoggedAddress {
    V4(DottedQuad),
    V6(String),
}

impl LoggedAddress {
    fn of(address: IpAddr) -> Self {
        match address {
            IpAddr::V4(address) => Self::V4(DottedQuad::of(address)),
            IpAddr::V6(address) => Self::V6(address.to_string()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::V4(quad) => quad.as_str(),
            Self::V6(text) => text,
        }
    }
}

/// An IPv4 address as text (`192.0.2.7`), written digit by digit: most clients' addresses are
/// IPv4, and `Display` takes the formatting machinery's slow path for each of them.
struct DottedQuad {
    text: [u8; 15],
    len: usize,
}

impl DottedQuad {
    fn of(address: Ipv4Addr) -> Self {
        let mut quad = Self {
            text: [0; 15],
            len: 0,
        };
        for (at, octet) in address.octets().into_iter().enumerate() {
            if at > 0 {
                quad.push(b'.');
            }
            if octet >= 100 {
                quad.push(b'0' + octet / 100);
            }
            if octet >= 10 {
                quad.push(b'0' + octet / 10 % 10);
            }
            quad.push(b'0' + octet % 10);
        }
        quad
    }

    fn push(&mut self, byte: u8) {
        self.text[self.len] = byte;
        self.len += 1;
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.text[..self.len]).unwrap_or_default()
    }
}

/// The request's log line and metrics record. The line holds method, path (without the query),
/// status, latency, the request id, the operation, the id (`jti`) of the API key when one was
/// accepted (never the token), and for a 5xx its cause. A 500 is an error to look into; a 503
/// (storage away or busy) a warning.
pub(crate) fn record(outcome: &Outcome<'_>) {
    let took = outcome.started.elapsed();
    metrics::record_request(
        outcome.operation,
        outcome.method,
        outcome.status.as_u16(),
        took,
    );
    // Whole microseconds: an integer field costs a fraction of formatting a `Duration`.
    let latency_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let method = outcome.method.as_str();
    let path = logged_path(outcome.path);
    let path = path.as_ref();
    let status = outcome.status.as_u16();
    let request_id = outcome.request_id.as_str();
    let operation = outcome.operation;
    let key_id = outcome.key_id;
    let presented_key_id = outcome.presented_key_id;
    let cause = outcome.cause;
    let route = outcome.route;
    let client = outcome.client.map(LoggedAddress::of);
    let client = client.as_ref().map(LoggedAddress::as_str);
    let user_agent = outcome.user_agent.map(logged_user_agent);
    let user_agent = user_agent.as_deref();
    let trace_id = outcome.trace.trace_id.hex();
    let trace_id = trace_id.as_str();
    let span_id = outcome.trace.span_id.hex();
    let span_id = span_id.as_str();
    let parent_span_id = outcome.trace.parent_span_id.map(SpanId::hex);
    let parent_span_id = parent_span_id.as_ref().map(Hex::as_str);
    macro_rules! line {
        ($level:ident) => {
            tracing::$level!(
                service = SERVICE,
                version = VERSION,
                method,
                path,
                route,
                status,
                latency_us,
                request_id,
                trace_id,
                span_id,
                parent_span_id,
                operation,
                key_id,
                presented_key_id,
                client,
                user_agent,
                cause,
                "request"
            )
        };
    }
    match status {
        500 => line!(error),
        501.. => line!(warn),
        _ => line!(info),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::HeaderValue;

    use super::{
        logged_path, logged_user_agent, DottedQuad, LOGGED_PATH_MAX, LOGGED_USER_AGENT_MAX,
    };

    #[test]
    fn an_ipv4_address_is_written_as_display_writes_it() {
        for octets in [
            [0, 0, 0, 0],
            [127, 0, 0, 1],
            [9, 10, 99, 100],
            [203, 0, 113, 5],
            [255, 255, 255, 255],
        ] {
            let address = std::net::Ipv4Addr::from(octets);
            assert_eq!(DottedQuad::of(address).as_str(), address.to_string());
        }
    }

    #[test]
    fn a_user_agent_is_logged_escaped_and_bounded() {
        let agent = |bytes: &[u8]| HeaderValue::from_bytes(bytes).unwrap();
        assert_eq!(logged_user_agent(&agent(b"curl/8.5.0")), "curl/8.5.0");
        assert_eq!(
            logged_user_agent(&agent(b"caf\xc3\xa9\t[1] \\x41")),
            r"caf\xc3\xa9\x09[1] \\x41"
        );
        let long = agent(&[0xff; 100]);
        let logged = logged_user_agent(&long);
        let kept = LOGGED_USER_AGENT_MAX / 4;
        assert_eq!(
            logged,
            format!(
                "{}...[{} more bytes not logged]",
                r"\xff".repeat(kept),
                100 - kept
            )
        );
        let long = agent("a".repeat(200).as_bytes());
        assert!(logged_user_agent(&long).ends_with("...[72 more bytes not logged]"));
    }

    #[test]
    fn a_long_path_is_cut_and_says_so() {
        assert_eq!(logged_path("/v1/pets/7"), "/v1/pets/7");
        let long = format!("/v1/{}", "a".repeat(128 * 1024));
        let logged = logged_path(&long);
        assert!(logged.len() < LOGGED_PATH_MAX + 50, "{}", logged.len());
        assert!(logged.starts_with("/v1/aaa"));
        assert!(
            logged.ends_with(&format!(
                "...[{} more bytes not logged]",
                long.len() - LOGGED_PATH_MAX
            )),
            "{logged}"
        );
        // Never cut inside a character.
        let wide = format!("/{}", "é".repeat(200));
        assert!(logged_path(&wide).contains("more bytes not logged"));
    }
}
