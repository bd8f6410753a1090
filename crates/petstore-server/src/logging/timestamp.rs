//! A log line's `timestamp`: RFC 3339 in UTC to the microsecond, as humantime writes it. The
//! date and time of day change once a second, so each thread keeps them written for the second
//! it is in and adds only the microseconds to each line.

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

thread_local! {
    /// The Unix second last written on this thread, and its text up to the seconds' digits.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// Pushes `at` as `2026-11-28T08:35:12.123456Z`.
pub(super) fn push_timestamp(line: &mut String, at: SystemTime) {
    // A clock before 1970 is a broken machine (humantime would panic on it): the epoch then.
    let since_epoch = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let second = since_epoch.as_secs();
    SECOND.with_borrow_mut(|(cached, text)| {
        if *cached != second {
            text.clear();
            let whole = humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(second));
            text.push_str(whole.to_string().trim_end_matches('Z'));
            *cached = second;
        }
        line.push_str(text);
    });
    // The leading 1 makes the six digits zero-padded; a `.` takes its place.
    let mut digits = itoa::Buffer::new();
    let micros = digits.format(since_epoch.subsec_micros() + 1_000_000);
    line.push('.');
    line.push_str(&micros[1..]);
    line.push('Z');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_reads_as_humantime_writes_it() {
        let base = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        for offset_micros in [
            0,
            1,
            999_999,
            1_000_000,
            1_000_001,
            59_000_007,
            86_400_000_000,
        ] {
            let at = base + Duration::from_micros(offset_micros);
            let mut line = String::new();
            push_timestamp(&mut line, at);
            assert_eq!(line, humantime::format_rfc3339_micros(at).to_string());
        }
        let mut before_1970 = String::new();
        push_timestamp(&mut before_1970, UNIX_EPOCH - Duration::from_secs(1));
        assert_eq!(before_1970, "1970-01-01T00:00:00.000000Z");
    }
}
