//! Where log lines go, in which format, and which are worth a line: stderr, at `RUST_LOG` or
//! `info`, as text or one JSON object per line (`PETSTORE_LOG_FORMAT`), written by a thread of
//! its own, without the connection errors any anonymous client can cause.

mod filter;
mod json;
mod timestamp;

use std::fmt;
use std::io::IsTerminal as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// For people: aligned text, coloured on a terminal.
    Text,
    /// For log collectors: one JSON object per line (`timestamp`, `level`, the fields flat,
    /// `span.request_id` on every line of a request).
    Json,
}

impl LogFormat {
    /// `PETSTORE_LOG_FORMAT` (`json` or `text`); unset: text on a terminal, JSON otherwise.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("PETSTORE_LOG_FORMAT")
            .ok()
            .as_deref()
            .map(str::trim)
        {
            None | Some("") if std::io::stderr().is_terminal() => Ok(Self::Text),
            None | Some("") => Ok(Self::Json),
            Some("text") => Ok(Self::Text),
            Some("json") => Ok(Self::Json),
            Some(other) => Err(format!(
                "PETSTORE_LOG_FORMAT must be `json` or `text`, not `{other}`"
            )),
        }
    }
}

/// Logs go to stderr (stdout is reserved for what commands print), at `RUST_LOG` or `info`, in
/// `format`.
///
/// Request threads only format their lines: a logging thread writes them, many lines per
/// `write`, so no request waits on stderr's lock or a system call. Should stderr stop draining
/// (a stuck log collector), lines beyond a large buffer are dropped rather than stalling
/// requests. Dropping the returned guard writes out what is buffered.
pub fn init(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let (targets, env_filter) = filter::from_env();
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .thread_name("petstore-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    let registry = tracing_subscriber::registry()
        .with(WithoutClientConnectionErrors)
        .with(targets)
        .with(env_filter);
    match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .init(),
        LogFormat::Json => registry
            .with(json::LinkedTraces)
            .with(
                tracing_subscriber::fmt::layer()
                    .fmt_fields(json::SpanFields)
                    .event_format(json::JsonLines)
                    .with_writer(writer),
            )
            .init(),
    }
    guard
}

/// actix-http logs every connection it gives up on at ERROR (`stream error: request parse
/// error: ...`, `... I/O error ...`): a request line that is not HTTP, a head over its limits,
/// a client that resets. Those are the client's doing, already answered (bare 400 or 431) or
/// unanswerable, and an anonymous client could fill the log with them, drowning the errors an
/// operator must see. They are dropped here; actix-http also logs each at TRACE (`parse error
/// ...`, `I/O error ...`), so `RUST_LOG=actix_http=trace` still shows them.
struct WithoutClientConnectionErrors;

const DISPATCHER: &str = "actix_http::h1::dispatcher";
const CONNECTION_ERROR_PREFIX: &str = "stream error: ";

impl<S: Subscriber> Layer<S> for WithoutClientConnectionErrors {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let metadata = event.metadata();
        if metadata.target() != DISPATCHER || *metadata.level() != Level::ERROR {
            return true;
        }
        let mut message = MessageStart::default();
        event.record(&mut message);
        !message.is_connection_error
    }
}

/// Whether an event's message starts with [`CONNECTION_ERROR_PREFIX`].
#[derive(Default)]
struct MessageStart {
    is_connection_error: bool,
}

impl Visit for MessageStart {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.is_connection_error = format!("{value:?}").starts_with(CONNECTION_ERROR_PREFIX);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.is_connection_error = value.starts_with(CONNECTION_ERROR_PREFIX);
        }
    }
}
