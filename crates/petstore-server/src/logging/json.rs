//! The layer of `PETSTORE_LOG_FORMAT=json`: tracing-subscriber's JSON format, one object per line
//! with `timestamp`, `level`, `target`, the event's fields flat (`message` among them) and `span`
//! with the current span's fields (a request's `request_id`), plus `linked_trace_ids` on the lines
//! of storage work done for several requests at once, which that format has no place for.

use std::fmt;

use tracing::span::Id;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields, MakeWriter};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// JSON lines written to `writer`.
pub(super) fn layer<S, W>(writer: W) -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    LinkedTraces.and_then(
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .map_event_format(WithLinkedTraceIds)
            .with_writer(writer),
    )
}

/// The trace ids of the spans a span follows from: the requests whose storage work one thread did
/// as a group (`storage_group`). Written on the group's lines as `linked_trace_ids`.
struct LinkedTraceIds(Vec<String>);

/// Records [`LinkedTraceIds`]: when a span is said to follow from another, the other's
/// `trace_id` (from its JSON fields, or its own links) is added to the span's.
struct LinkedTraces;

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
                .get::<FormattedFields<JsonFields>>()
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

/// The `trace_id` of a span's fields as [`JsonFields`] wrote them. Found by its key rather than
/// parsed: this runs on the writer's thread for every create of a group, and a trace id (hex
/// digits) has nothing to unescape.
fn trace_id_in(fields: &str) -> Option<String> {
    const KEY: &str = "\"trace_id\":\"";
    let start = fields.find(KEY)? + KEY.len();
    let length = fields[start..].find('"')?;
    Some(fields[start..start + length].to_owned())
}

/// tracing-subscriber's JSON event format, with `linked_trace_ids` added to the lines whose span
/// has [`LinkedTraceIds`]; every other line is written as that format writes it.
struct WithLinkedTraceIds<Inner>(Inner);

impl<S, Inner> FormatEvent<S, JsonFields> for WithLinkedTraceIds<Inner>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    Inner: FormatEvent<S, JsonFields>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // The same span as the one the inner format writes under `span`.
        let linked = event
            .parent()
            .and_then(|id| ctx.span(id))
            .or_else(|| ctx.lookup_current())
            .and_then(|span| {
                span.extensions()
                    .get::<LinkedTraceIds>()
                    .map(|LinkedTraceIds(trace_ids)| serde_json::to_string(trace_ids))
            });
        let Some(linked) = linked else {
            return self.0.format_event(ctx, writer, event);
        };
        let linked = linked.map_err(|_| fmt::Error)?;
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The inner format closes the object and the line; the links join the object.
        let object = line.trim_end().strip_suffix('}').ok_or(fmt::Error)?;
        writer.write_str(object)?;
        writeln!(writer, ",\"linked_trace_ids\":{linked}}}")
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
        let subscriber = tracing_subscriber::registry().with(layer(move || sink.clone()));
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
        let timestamp = line["timestamp"].as_str().expect("a timestamp");
        // RFC 3339 in UTC with microseconds, as the start-up lines write it.
        assert_eq!(
            timestamp.len(),
            "2026-01-02T03:04:05.123456Z".len(),
            "{line}"
        );
        humantime::parse_rfc3339(timestamp).expect(timestamp);
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["target"], module_path!());
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
        assert!(lines[0].get("spans").is_none());
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
            serde_json::json!({"name": "request", "request_id": "r1", "key_id": "k1"})
        );
        assert_eq!(lines[1]["span"], serde_json::json!({"name": "bare"}));
    }

    #[test]
    fn a_line_about_a_group_names_the_trace_of_every_request_in_it() {
        let lines = lines(|| {
            let first = tracing::info_span!("request", trace_id = "aaaa", span_id = "01");
            let second = tracing::info_span!("request", trace_id = "bbbb", span_id = "02");
            let group = tracing::info_span!("storage_group", requests = 2_u64);
            group.follows_from(&first);
            group.follows_from(&second);
            group.in_scope(|| tracing::error!(error = "disk full", "the group's commit failed"));
            first.in_scope(|| tracing::warn!("one request's own line"));
        });
        assert_eq!(lines[0]["span"]["requests"], 2);
        assert_eq!(lines[0]["error"], "disk full");
        assert_eq!(lines[0]["level"], "ERROR");
        assert_eq!(
            lines[0]["linked_trace_ids"],
            serde_json::json!(["aaaa", "bbbb"])
        );
        assert_eq!(lines[1]["span"]["trace_id"], "aaaa");
        assert!(lines[1].get("linked_trace_ids").is_none());
    }
}
