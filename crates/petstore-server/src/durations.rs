//! Durations as settings take them (`500ms`, `30s`, `90d`), with a lower bound: the command
//! line's options and the webhook settings parse them alike.

use std::time::Duration;

/// A period of at least a second: retentions (a client's immediate retry is always replayed),
/// leases, the wait before disabling, the time between backups (each one's name, its UTC
/// second, is its own).
pub(crate) fn at_least_a_second(text: &str) -> Result<Duration, String> {
    at_least(text, Duration::from_secs(1))
}

/// A body or head deadline: at least a millisecond (zero would refuse every request).
pub(crate) fn at_least_a_millisecond(text: &str) -> Result<Duration, String> {
    at_least(text, Duration::from_millis(1))
}

fn at_least(text: &str, minimum: Duration) -> Result<Duration, String> {
    let period = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    if period < minimum {
        return Err(format!(
            "must be at least {}",
            humantime::format_duration(minimum)
        ));
    }
    Ok(period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_is_at_least_a_second_and_has_a_unit() {
        assert_eq!(
            at_least_a_second("90d"),
            Ok(Duration::from_secs(90 * 86_400))
        );
        assert_eq!(
            at_least_a_second("500ms"),
            Err("must be at least 1s".to_owned())
        );
        assert!(at_least_a_second("90").is_err());
        assert_eq!(at_least_a_millisecond("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(
            at_least_a_millisecond("0s"),
            Err("must be at least 1ms".to_owned())
        );
    }
}
