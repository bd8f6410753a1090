//! Human durations for flags and environment variables: `500ms`, `45s`, `30m`, `12h`, `90d`.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a duration; write a whole number and a unit: ms, s, m, h or d (e.g. `30s`, `90d`)")]
pub struct DurationError(String);

pub fn parse_duration(raw: &str) -> Result<Duration, DurationError> {
    let error = || DurationError(raw.to_owned());
    let trimmed = raw.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(error)?;
    let (digits, unit) = trimmed.split_at(split);
    let amount: u64 = digits.parse().map_err(|_| error())?;
    let seconds_per_unit = match unit {
        "ms" => return Ok(Duration::from_millis(amount)),
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(error()),
    };
    amount
        .checked_mul(seconds_per_unit)
        .map(Duration::from_secs)
        .ok_or_else(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1_800)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(43_200)));
        assert_eq!(parse_duration("90d"), Ok(Duration::from_secs(7_776_000)));
    }

    #[test]
    fn rejects_missing_or_unknown_units_and_overflow() {
        for raw in [
            "",
            "90",
            "d",
            "1.5h",
            "-3s",
            "10 years",
            "3w",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn error_says_how_to_write_one() {
        let message = parse_duration("soon").unwrap_err().to_string();
        assert!(
            message.contains("`soon`") && message.contains("`90d`"),
            "{message}"
        );
    }
}
