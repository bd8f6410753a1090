//! One JSON object per log line, written directly: `timestamp`, `level`, `target`, the event's
//! fields flat (`message` among them), and `span` with the current span's fields (a request's
//! `request_id`). tracing-subscriber's own JSON format builds each line through serde maps; at
//! one line per request that cost several percent of getPet's throughput (`docs/benchmarks.md`).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The event format of `PETSTORE_LOG_FORMAT=json` (span fields come from [`JsonFields`]).
pub(super) struct JsonLines;

impl<S> FormatEvent<S, JsonFields> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        write!(
            writer,
            "{{\"timestamp\":\"{}\",\"level\":\"{}\",\"target\":",
            humantime::format_rfc3339_micros(std::time::SystemTime::now()),
            metadata.level()
        )?;
        write_str(&mut writer, metadata.target())?;
        let mut fields = FieldWriter {
            writer: &mut writer,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        if let Some(span) = ctx.lookup_current() {
            let extensions = span.extensions();
            if let Some(span_fields) = extensions.get::<FormattedFields<JsonFields>>() {
                // `JsonFields` writes a complete JSON object; nothing when the span has no fields.
                let object = if span_fields.is_empty() {
                    "{}"
                } else {
                    span_fields.as_str()
                };
                write!(writer, ",\"span\":{object}")?;
            }
        }
        writeln!(writer, "}}")
    }
}

/// Writes each field as `,"name":value`: numbers and booleans as JSON numbers and booleans,
/// everything else as a JSON string.
struct FieldWriter<'a, 'w> {
    writer: &'a mut Writer<'w>,
    result: fmt::Result,
}

impl FieldWriter<'_, '_> {
    fn key(&mut self, field: &Field) -> fmt::Result {
        self.writer.write_char(',')?;
        write_str(self.writer, field.name())?;
        self.writer.write_char(':')
    }

    fn raw(&mut self, field: &Field, value: impl fmt::Display) {
        if self.result.is_ok() {
            self.result = self
                .key(field)
                .and_then(|()| write!(self.writer, "{value}"));
        }
    }
}

impl Visit for FieldWriter<'_, '_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.raw(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.raw(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.raw(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if value.is_finite() {
            self.raw(field, value);
        } else {
            self.record_str(field, &value.to_string());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if self.result.is_ok() {
            self.result = self.key(field).and_then(|()| write_str(self.writer, value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_ok() {
            self.result = self.key(field).and_then(|()| {
                self.writer.write_char('"')?;
                write!(Escaping(&mut *self.writer), "{value:?}")?;
                self.writer.write_char('"')
            });
        }
    }
}

/// `text` as a JSON string, quotes included.
fn write_str(writer: &mut Writer<'_>, text: &str) -> fmt::Result {
    writer.write_char('"')?;
    Escaping(&mut *writer).write_str(text)?;
    writer.write_char('"')
}

/// Escapes what JSON strings may not hold as is: `"`, `\` and control characters.
struct Escaping<'a, 'w>(&'a mut Writer<'w>);

impl fmt::Write for Escaping<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        // Bytes, not chars: every character to escape is ASCII, and most text has none.
        let needs_escape = |byte: &u8| matches!(byte, b'"' | b'\\' | 0x00..=0x1F | 0x7F);
        let mut rest = text;
        while let Some(at) = rest.as_bytes().iter().position(needs_escape) {
            self.0.write_str(&rest[..at])?;
            match rest.as_bytes()[at] {
                b'"' => self.0.write_str("\\\"")?,
                b'\\' => self.0.write_str("\\\\")?,
                b'\n' => self.0.write_str("\\n")?,
                b'\r' => self.0.write_str("\\r")?,
                b'\t' => self.0.write_str("\\t")?,
                other => write!(self.0, "\\u{other:04x}")?,
            }
            rest = &rest[at + 1..];
        }
        self.0.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("buffer").extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn lines(log: impl FnOnce()) -> Vec<serde_json::Value> {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .fmt_fields(JsonFields::new())
                .event_format(JsonLines)
                .with_writer(move || sink.clone()),
        );
        tracing::subscriber::with_default(subscriber, log);
        let text = String::from_utf8(buffer.0.lock().expect("buffer").clone()).expect("UTF-8");
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
            .collect()
    }

    #[test]
    fn each_line_is_one_json_object_with_typed_fields_and_the_span() {
        let lines = lines(|| {
            let span = tracing::info_span!("request", request_id = "abc \"1\"");
            let _entered = span.enter();
            tracing::info!(
                status = 200_u64,
                delta = -3_i64,
                ok = true,
                path = "/v1/pets\n\t\u{1}",
                debug = ?Some(1),
                "request"
            );
        });
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert!(
            line["timestamp"]
                .as_str()
                .expect("a timestamp")
                .ends_with('Z'),
            "{line}"
        );
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "request");
        assert_eq!(line["status"], 200);
        assert_eq!(line["delta"], -3);
        assert_eq!(line["ok"], true);
        assert_eq!(line["path"], "/v1/pets\n\t\u{1}");
        assert_eq!(line["debug"], "Some(1)");
        assert_eq!(line["span"]["request_id"], "abc \"1\"");
    }

    #[test]
    fn a_line_outside_any_span_has_no_span_member() {
        let lines = lines(|| tracing::warn!(error = %"a \\ b", "stopped"));
        assert_eq!(lines[0]["level"], "WARN");
        assert_eq!(lines[0]["error"], "a \\ b");
        assert!(lines[0].get("span").is_none());
    }
}
