//! One JSON object per log line, written directly: `timestamp`, `level`, `target`, the event's
//! fields flat (`message` among them), and `span` with the current span's fields (a request's
//! `request_id`), and on the lines of storage work done for several requests at once, their
//! `linked_trace_ids`. Not tracing-subscriber's JSON format: it builds each line through serde
//! maps, which costs every request's line (docs/benchmarks.md, Logs, traces and metrics).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::span::{Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::timestamp::push_timestamp;

/// The trace ids of the spans a span follows from: the requests whose storage work one thread did
/// as a group (`storage_group`). Written on the group's lines as `linked_trace_ids`.
pub(super) struct LinkedTraceIds(Vec<String>);

/// Records [`LinkedTraceIds`]: when a span is said to follow from another, the other's
/// `trace_id` (from its JSON fields, or its own links) is added to the span's.
pub(super) struct LinkedTraces;

impl<S> Layer<S> for LinkedTraces
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_follows_from(&self, span: &Id, follows: &Id, ctx: Context<'_, S>) {
        let Some(followed) = ctx.span(follows) else {
            return;
        };
        let trace_ids: Vec<String> = {
            let extensions = followed.extensions();
            let own = extensions
                .get::<FormattedFields<SpanFields>>()
                .and_then(|fields| trace_id_in(fields));
            match (own, extensions.get::<LinkedTraceIds>()) {
                (Some(trace_id), _) => vec![trace_id],
                (None, Some(LinkedTraceIds(linked))) => linked.clone(),
                (None, None) => return,
            }
        };
        let Some(span) = ctx.span(span) else { return };
        let mut extensions = span.extensions_mut();
        match extensions.get_mut::<LinkedTraceIds>() {
            Some(LinkedTraceIds(linked)) => linked.extend(trace_ids),
            None => extensions.insert(LinkedTraceIds(trace_ids)),
        }
    }
}

/// A span's fields as one JSON object, written as [`JsonLines`] writes an event's: directly, not
/// through serde's maps as tracing-subscriber's `JsonFields` does, since every request has a
/// span.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct SpanFields;

impl<'writer> FormatFields<'writer> for SpanFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut object = String::with_capacity(FIELDS_CAPACITY);
        object.push('{');
        fields.record(&mut FieldWriter {
            out: &mut object,
            needs_comma: false,
        });
        object.push('}');
        writer.write_str(&object)
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &Record<'_>,
    ) -> fmt::Result {
        if current.fields.is_empty() {
            return self.format_fields(current.as_writer(), fields);
        }
        // Reopen the object: the new fields join it.
        current.fields.pop();
        let needs_comma = current.fields.len() > 1;
        fields.record(&mut FieldWriter {
            out: &mut current.fields,
            needs_comma,
        });
        current.fields.push('}');
        Ok(())
    }
}

/// Room for a request span's fields without growing. A span's fields, like a line, are built in
/// a `String` of their own and handed to tracing-subscriber's writer in one piece, since writing
/// through that writer costs a dynamic call per piece.
const FIELDS_CAPACITY: usize = 192;
/// Room for a request's log line without growing.
const LINE_CAPACITY: usize = 768;

/// The `trace_id` of a span's fields as [`SpanFields`] wrote them. Found by its key rather than
/// parsed: this runs on the writer's thread for every create of a group, and a trace id (hex
/// digits) has nothing to unescape.
fn trace_id_in(fields: &str) -> Option<String> {
    const KEY: &str = "\"trace_id\":\"";
    let start = fields.find(KEY)? + KEY.len();
    let length = fields[start..].find('"')?;
    Some(fields[start..start + length].to_owned())
}

/// The event format of `PETSTORE_LOG_FORMAT=json` (span fields come from [`SpanFields`]).
pub(super) struct JsonLines;

impl<S> FormatEvent<S, SpanFields> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, SpanFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let mut line = String::with_capacity(LINE_CAPACITY);
        line.push_str("{\"timestamp\":\"");
        push_timestamp(&mut line, std::time::SystemTime::now());
        line.push_str("\",\"level\":\"");
        line.push_str(metadata.level().as_str());
        line.push_str("\",\"target\":");
        write_str(&mut line, metadata.target());
        event.record(&mut FieldWriter {
            out: &mut line,
            needs_comma: true,
        });
        if let Some(span) = ctx.lookup_current() {
            let extensions = span.extensions();
            if let Some(span_fields) = extensions.get::<FormattedFields<SpanFields>>() {
                line.push_str(",\"span\":");
                line.push_str(span_fields.as_str());
            }
            if let Some(LinkedTraceIds(trace_ids)) = extensions.get::<LinkedTraceIds>() {
                line.push_str(",\"linked_trace_ids\":[");
                for (n, trace_id) in trace_ids.iter().enumerate() {
                    if n > 0 {
                        line.push(',');
                    }
                    write_str(&mut line, trace_id);
                }
                line.push(']');
            }
        }
        line.push_str("}\n");
        writer.write_str(&line)
    }
}

/// Writes each field as `"name":value` after a comma (but for the first of an object):
/// numbers and booleans as JSON numbers and booleans, everything else as a JSON string.
struct FieldWriter<'a> {
    out: &'a mut String,
    /// Whether a field was written before the next one, in the same object.
    needs_comma: bool,
}

impl FieldWriter<'_> {
    /// Writes `"name":`, after a comma but for an object's first field.
    fn key(&mut self, field: &Field) {
        let name = field.name();
        self.out.reserve(name.len() + 4);
        if self.needs_comma {
            self.out.push(',');
        }
        self.needs_comma = true;
        // A field's name is nearly always a Rust identifier, with nothing to escape.
        if name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        {
            self.out.push('"');
            self.out.push_str(name);
            self.out.push_str("\":");
        } else {
            write_str(self.out, name);
            self.out.push(':');
        }
    }

    fn raw(&mut self, field: &Field, value: impl fmt::Display) {
        self.key(field);
        let _ = write!(self.out, "{value}");
    }

    fn integer(&mut self, field: &Field, value: impl itoa::Integer) {
        self.key(field);
        self.out.push_str(itoa::Buffer::new().format(value));
    }
}

impl Visit for FieldWriter<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.integer(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.integer(field, value);
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
        self.key(field);
        write_str(self.out, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.key(field);
        self.out.push('"');
        let _ = write!(Escaping(self.out), "{value:?}");
        self.out.push('"');
    }
}

/// `text` as a JSON string, quotes included.
fn write_str(out: &mut String, text: &str) {
    out.push('"');
    let _ = Escaping(out).write_str(text);
    out.push('"');
}

/// Escapes what JSON strings may not hold as is: `"`, `\` and control characters.
struct Escaping<'a>(&'a mut String);

impl fmt::Write for Escaping<'_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut rest = text;
        while let Some(at) = first_to_escape(rest.as_bytes()) {
            self.0.push_str(&rest[..at]);
            match rest.as_bytes()[at] {
                b'"' => self.0.push_str("\\\""),
                b'\\' => self.0.push_str("\\\\"),
                b'\n' => self.0.push_str("\\n"),
                b'\r' => self.0.push_str("\\r"),
                b'\t' => self.0.push_str("\\t"),
                other => write!(self.0, "\\u{other:04x}")?,
            }
            rest = &rest[at + 1..];
        }
        self.0.push_str(rest);
        Ok(())
    }
}

/// Whether `byte` must be escaped in a JSON string: `"`, `\` and control characters.
fn needs_escape(byte: u8) -> bool {
    matches!(byte, b'"' | b'\\' | 0x00..=0x1F | 0x7F)
}

/// The position of the first byte of `text` to escape. Bytes, not chars: every character to
/// escape is ASCII, and most text has none, so the text is scanned eight bytes at a time.
fn first_to_escape(text: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Whether any byte of `word` is zero; exact for the word as a whole.
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    let mut words = text.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut words {
        let word = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        // A byte under 0x20 (the high bit is set only for those, as the bytes from 0x80 up are
        // left out by `!word`), or one equal to `"`, `\` or DEL.
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        if control
            || has_zero(word ^ (ONES * u64::from(b'"')))
            || has_zero(word ^ (ONES * u64::from(b'\\')))
            || has_zero(word ^ (ONES * 0x7F))
        {
            return chunk
                .iter()
                .position(|&byte| needs_escape(byte))
                .map(|at| offset + at);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&byte| needs_escape(byte))
        .map(|at| offset + at)
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
        let subscriber = tracing_subscriber::registry().with(LinkedTraces).with(
            tracing_subscriber::fmt::layer()
                .fmt_fields(SpanFields)
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
    fn a_field_name_that_is_no_identifier_is_escaped() {
        let lines = lines(|| tracing::info!("odd \"name\"" = 1_u64, "dotted.name" = 2_u64, "x"));
        assert_eq!(lines[0]["odd \"name\""], 1, "{}", lines[0]);
        assert_eq!(lines[0]["dotted.name"], 2, "{}", lines[0]);
    }

    #[test]
    fn the_first_byte_to_escape_is_found_wherever_it_is() {
        let naive = |text: &[u8]| text.iter().position(|&byte| needs_escape(byte));
        for special in [b'"', b'\\', 0x00, 0x1F, b'\n', 0x7F] {
            for length in 0..40 {
                for at in 0..length {
                    let mut text = vec![b'a'; length];
                    text[at] = special;
                    assert_eq!(
                        first_to_escape(&text),
                        Some(at),
                        "{special} at {at} of {length}"
                    );
                }
            }
        }
        // Every other byte, the UTF-8 of non-ASCII characters among them, passes as it is.
        let plain: Vec<u8> = (0_u8..=255).filter(|&byte| !needs_escape(byte)).collect();
        assert_eq!(first_to_escape(&plain), None);
        for byte in 0_u8..=255 {
            let text = [b'x', b'y', 0xC3, 0xA9, b' ', b'~', b'z', byte, byte, b'q'];
            assert_eq!(first_to_escape(&text), naive(&text), "{byte}");
        }
    }

    #[test]
    fn a_line_outside_any_span_has_no_span_member() {
        let lines = lines(|| tracing::warn!(error = %"a \\ b", "stopped"));
        assert_eq!(lines[0]["level"], "WARN");
        assert_eq!(lines[0]["error"], "a \\ b");
        assert!(lines[0].get("span").is_none());
    }

    #[test]
    fn fields_recorded_later_join_the_span_object() {
        let lines = lines(|| {
            let span = tracing::info_span!(
                "request",
                request_id = "r1",
                key_id = tracing::field::Empty,
                empty = tracing::field::Empty
            );
            span.record("key_id", "k1");
            let _entered = span.enter();
            tracing::warn!("inside");
            let bare = tracing::info_span!("bare");
            let _bare = bare.enter();
            tracing::warn!("inside a span without fields");
        });
        assert_eq!(
            lines[0]["span"],
            serde_json::json!({"request_id": "r1", "key_id": "k1"})
        );
        assert_eq!(lines[1]["span"], serde_json::json!({}));
    }

    #[test]
    fn a_line_about_a_group_names_the_trace_of_every_request_in_it() {
        let lines = lines(|| {
            let first = tracing::info_span!("request", trace_id = "aaaa", span_id = "01");
            let second = tracing::info_span!("request", trace_id = "bbbb", span_id = "02");
            let group = tracing::info_span!("storage_group", requests = 2_u64);
            group.follows_from(&first);
            group.follows_from(&second);
            group.in_scope(|| tracing::error!("the group's commit failed"));
            first.in_scope(|| tracing::warn!("one request's own line"));
        });
        assert_eq!(lines[0]["span"], serde_json::json!({"requests": 2}));
        assert_eq!(
            lines[0]["linked_trace_ids"],
            serde_json::json!(["aaaa", "bbbb"])
        );
        assert_eq!(lines[1]["span"]["trace_id"], "aaaa");
        assert!(lines[1].get("linked_trace_ids").is_none());
    }
}
