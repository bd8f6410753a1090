//! The size of a listing page, the same rule for every resource.

/// How many items one listing page may hold: 1 to 100, 20 when not given. Every listing
/// (pets, orders) pages by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageLimit(u8);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an integer from {min} to {max}", min = PageLimit::MIN, max = PageLimit::MAX)]
pub struct PageLimitError;

impl PageLimit {
    pub const MIN: u8 = 1;
    pub const MAX: u8 = 100;
    pub const DEFAULT: PageLimit = PageLimit(20);

    pub fn parse(value: i64) -> Result<Self, PageLimitError> {
        u8::try_from(value)
            .ok()
            .filter(|v| (Self::MIN..=Self::MAX).contains(v))
            .map(Self)
            .ok_or(PageLimitError)
    }

    /// A limit as written in a query string: plain decimal digits, within the range.
    pub fn parse_text(raw: &str) -> Result<Self, PageLimitError> {
        crate::decimal::parse_i64(raw).map_or(Err(PageLimitError), Self::parse)
    }

    pub const fn get(self) -> u8 {
        self.0
    }
}

impl Default for PageLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_limit_is_20() {
        assert_eq!(PageLimit::default().get(), 20);
    }

    #[test]
    fn accepts_the_bounds() {
        assert_eq!(PageLimit::parse(1).unwrap().get(), 1);
        assert_eq!(PageLimit::parse(100).unwrap().get(), 100);
    }

    #[test]
    fn rejects_out_of_range_values() {
        for value in [0, -1, 101, 256, 257, i64::MAX, i64::MIN] {
            assert_eq!(PageLimit::parse(value), Err(PageLimitError), "{value}");
        }
    }

    #[test]
    fn error_message_gives_the_range() {
        assert_eq!(
            PageLimitError.to_string(),
            "must be an integer from 1 to 100"
        );
    }
}
