//! W3C Trace Context (`traceparent`): a request that arrives with a valid one continues its
//! trace, any other starts a trace of its own; either way the request gets a span id of its own.
//! The request's log line carries `trace_id`, `span_id` and, when one came, `parent_span_id`,
//! and so does the request's debug span (every line logged while the request is handled), so a
//! request can be followed from the caller's trace into this service's lines.
//!
//! Ids are kept as integers and written as lowercase hex, into a buffer on the stack, only when a
//! line or span is written: no allocation per request, and no trip through `fmt`'s padding.

use std::fmt;

use actix_web::http::header::HeaderMap;

use super::request_id::next_random;

/// The `traceparent` request header.
pub(crate) const TRACEPARENT: &str = "traceparent";

/// A 16-byte trace id, written as 32 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceId(u128);

/// An 8-byte span id, written as 16 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpanId(u64);

impl TraceId {
    /// The id's 32 lowercase hex digits.
    pub(crate) fn hex(self) -> Hex<32> {
        Hex::of(self.0)
    }
}

impl SpanId {
    /// The id's 16 lowercase hex digits.
    pub(crate) fn hex(self) -> Hex<16> {
        Hex::of(u128::from(self.0))
    }
}

impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hex().as_str())
    }
}

impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hex().as_str())
    }
}

/// An id written as `DIGITS` lowercase hex digits, zero-padded on the left.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hex<const DIGITS: usize>([u8; DIGITS]);

impl<const DIGITS: usize> Hex<DIGITS> {
    fn of(mut value: u128) -> Self {
        const ALPHABET: &[u8; 16] = b"0123456789abcdef";
        let mut digits = [b'0'; DIGITS];
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET[(value & 0xf) as usize];
            value >>= 4;
        }
        Self(digits)
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

/// A request's place in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceContext {
    pub(crate) trace_id: TraceId,
    pub(crate) span_id: SpanId,
    /// The caller's span, when a valid `traceparent` came.
    pub(crate) parent_span_id: Option<SpanId>,
}

impl TraceContext {
    /// The caller's trace continued, or a new one.
    pub(crate) fn for_request(headers: &HeaderMap) -> Self {
        let span_id = SpanId(nonzero(next_random));
        let mut values = headers.get_all(TRACEPARENT);
        // Exactly one header (the specification: more than one is invalid, start a new trace).
        let caller = match (values.next(), values.next()) {
            (Some(value), None) => value.to_str().ok().and_then(parse),
            _ => None,
        };
        match caller {
            Some((trace_id, parent)) => Self {
                trace_id,
                span_id,
                parent_span_id: Some(parent),
            },
            None => Self {
                trace_id: TraceId(
                    u128::from(nonzero(next_random)) << 64 | u128::from(next_random()),
                ),
                span_id,
                parent_span_id: None,
            },
        }
    }
}

fn nonzero(random: impl Fn() -> u64) -> u64 {
    loop {
        let value = random();
        if value != 0 {
            return value;
        }
    }
}

/// The trace id and parent id of a `traceparent` value (`00-<32 hex>-<16 hex>-<2 hex>`; a later
/// version may append fields after a dash, version `ff` is invalid); `None` when it is not
/// valid, including all-zero ids and uppercase hex, as the specification says.
fn parse(value: &str) -> Option<(TraceId, SpanId)> {
    let value = value.trim();
    let mut fields = value.split('-');
    let (version, trace, parent, flags) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    let hex = |text: &str, len: usize| {
        text.len() == len
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(parent, 16) || !hex(flags, 2)
    {
        return None;
    }
    // Version 00 has exactly four fields; a later one may have more.
    if version == "00" && fields.next().is_some() {
        return None;
    }
    let trace = u128::from_str_radix(trace, 16).ok().filter(|id| *id != 0)?;
    let parent = u64::from_str_radix(parent, 16).ok().filter(|id| *id != 0)?;
    Some((TraceId(trace), SpanId(parent)))
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::HeaderValue;

    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn with(values: &[&str]) -> TraceContext {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                TRACEPARENT.parse().unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        TraceContext::for_request(&headers)
    }

    #[test]
    fn a_valid_traceparent_is_continued_with_a_span_of_our_own() {
        let context = with(&[VALID]);
        assert_eq!(
            context.trace_id.to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(
            context.parent_span_id.map(|id| id.to_string()).as_deref(),
            Some("00f067aa0ba902b7")
        );
        let span = context.span_id.to_string();
        assert_eq!(span.len(), 16);
        assert_ne!(span, "00f067aa0ba902b7");
        // A later version with more fields is read by its first four.
        let later = with(&["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"]);
        assert!(later.parent_span_id.is_some());
    }

    #[test]
    fn anything_else_starts_a_new_trace() {
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "not a traceparent",
        ] {
            let context = with(&[bad]);
            assert_eq!(context.parent_span_id, None, "{bad:?}");
            assert_ne!(
                context.trace_id.to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736",
                "{bad:?}"
            );
            assert_eq!(context.trace_id.to_string().len(), 32);
        }
        assert_eq!(with(&[VALID, VALID]).parent_span_id, None, "two headers");
        assert_ne!(
            with(&[]).trace_id,
            with(&[]).trace_id,
            "each new trace its own id"
        );
    }

    #[test]
    fn ids_are_written_as_zero_padded_lowercase_hex() {
        assert_eq!(SpanId(0xab).to_string(), "00000000000000ab");
        assert_eq!(SpanId(u64::MAX).hex().as_str(), "ffffffffffffffff");
        assert_eq!(
            TraceId(0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c).to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(TraceId(1).hex().as_str(), format!("{:032x}", 1));
    }
}
