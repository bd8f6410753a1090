//! Durations as settings take them (`500ms`, `30s`, `90d`), with the lower bound most of them
//! share: the command line's options and the webhook settings parse them alike.

use std::time::Duration;

/// A period of at least a second: retentions, leases, the wait before disabling.
pub(crate) fn at_least_a_second(text: &str) -> Result<Duration, String> {
    let period = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    if period < Duration::from_secs(1) {
        return Err("must be at least 1s".to_owned());
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
    }
}
