//! Integers as clients write them in paths and query strings.

/// A decimal integer written as `-?[0-9]+` that fits in an `i64`. `+5`, `5.0`, `1e3` and
/// surrounding spaces are refused rather than read leniently, so a client bug shows.
pub(crate) fn parse_i64(raw: &str) -> Option<i64> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parse_i64;

    #[test]
    fn only_plain_decimal_digits_within_int64() {
        assert_eq!(parse_i64("42"), Some(42));
        assert_eq!(parse_i64("-7"), Some(-7));
        assert_eq!(parse_i64("9223372036854775807"), Some(i64::MAX));
        for raw in [
            "",
            "-",
            "+5",
            "5.0",
            "1e3",
            " 5",
            "5 ",
            "9223372036854775808",
            "0x10",
        ] {
            assert_eq!(parse_i64(raw), None, "{raw:?}");
        }
    }
}
