//! `Price`: what a pet costs, an exact amount of money in one currency.

use std::fmt;

use super::currency::{Currency, CurrencyError};

/// An exact, non-negative amount of money in one [`Currency`], never a binary float.
///
/// In JSON it is `{"amount": "12.50", "currency": "EUR"}`: the amount a **decimal string**, the
/// currency an ISO 4217 code. A string, because a JSON number is read as a binary double by most
/// clients (JavaScript's `0.1 + 0.2` is not `0.3`), so an amount would not survive the trip
/// exactly; a decimal rather than minor units, because `1250` means 12.50 in EUR but 1250 in
/// JPY, and a client that did not know the exponent would be wrong by a factor of 100 without
/// noticing. The amount is given with at most as many decimals as the currency's minor unit has
/// (`"12.5"` and `"12.50"` are the same EUR price, `"12.505"` is refused, never rounded) and is
/// always written back with exactly that many (`"12.50"`, `"1200"` for JPY, `"1.250"` for KWD).
///
/// Kept as an integer count of minor units (cents): exact, and what storage keeps. An amount is
/// less than [`MAX_MAJOR_UNITS`](Self::MAX_MAJOR_UNITS) + 1 whole units (under a billion), so
/// at most 999 999 999 999 minor units: far above any pet's price, and below 2^53, so even a
/// client holding minor units as a double holds them exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Price {
    minor_units: i64,
    currency: Currency,
}

/// Why a price's amount is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceAmountError {
    #[error(
        "must be a decimal string of digits with an optional fraction after a point, such as \
         \"12.50\" (no sign, exponent, spaces or leading zeros)"
    )]
    NotDecimal,
    #[error("must not be negative")]
    Negative,
    #[error("{}", too_many_decimals(*currency, *actual))]
    TooManyDecimals { currency: Currency, actual: usize },
    #[error("must be less than {} (a billion whole units)", Price::MAX_MAJOR_UNITS + 1)]
    TooLarge,
}

fn too_many_decimals(currency: Currency, actual: usize) -> String {
    match currency.exponent() {
        0 => format!(
            "must be a whole number in {currency}, which has no minor unit (got {actual} decimal \
             places)"
        ),
        max => format!("must have at most {max} decimal places in {currency} (got {actual})"),
    }
}

/// Why a price is refused: its amount or its currency, which [`field`](Self::field) names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    #[error(transparent)]
    Amount(#[from] PriceAmountError),
    #[error(transparent)]
    Currency(#[from] CurrencyError),
}

impl PriceError {
    /// The member of the JSON price the error is about: `"amount"` or `"currency"`.
    pub const fn field(&self) -> &'static str {
        match self {
            Self::Amount(_) => "amount",
            Self::Currency(_) => "currency",
        }
    }
}

impl Price {
    /// The largest whole-unit part of an amount.
    pub const MAX_MAJOR_UNITS: i64 = 999_999_999;

    /// A price as a client sends it: the amount's decimal string and the currency's code.
    pub fn parse(amount: &str, currency: &str) -> Result<Self, PriceError> {
        let currency = Currency::parse(currency)?;
        Ok(Self::from_decimal(amount, currency)?)
    }

    /// `amount` written as a decimal string, in `currency`. For an adapter that checked the
    /// currency on its own, to report both members' problems at once.
    pub fn from_decimal(amount: &str, currency: Currency) -> Result<Self, PriceAmountError> {
        if let Some(magnitude) = amount.strip_prefix('-') {
            return Err(if split_decimal(magnitude).is_some() {
                PriceAmountError::Negative
            } else {
                PriceAmountError::NotDecimal
            });
        }
        let (whole, fraction) = split_decimal(amount).ok_or(PriceAmountError::NotDecimal)?;
        if fraction.len() > usize::from(currency.exponent()) {
            return Err(PriceAmountError::TooManyDecimals {
                currency,
                actual: fraction.len(),
            });
        }
        // At most nine digits, so it fits; the bound keeps every amount within `i64` below.
        let whole: i64 = match whole.parse() {
            Ok(whole) if whole <= Self::MAX_MAJOR_UNITS => whole,
            _ => return Err(PriceAmountError::TooLarge),
        };
        let mut minor_units = whole;
        let mut fraction = fraction.bytes();
        for _ in 0..currency.exponent() {
            let digit = fraction.next().map_or(0, |b| i64::from(b - b'0'));
            minor_units = minor_units * 10 + digit;
        }
        Ok(Self {
            minor_units,
            currency,
        })
    }

    /// A price as storage keeps it: a count of `currency`'s minor units.
    pub fn from_minor_units(
        minor_units: i64,
        currency: Currency,
    ) -> Result<Self, PriceAmountError> {
        if minor_units < 0 {
            return Err(PriceAmountError::Negative);
        }
        if minor_units > max_minor_units(currency) {
            return Err(PriceAmountError::TooLarge);
        }
        Ok(Self {
            minor_units,
            currency,
        })
    }

    /// The amount in minor units (cents for EUR, yen for JPY, fils for KWD).
    pub const fn minor_units(&self) -> i64 {
        self.minor_units
    }

    pub const fn currency(&self) -> Currency {
        self.currency
    }

    /// The amount as the API writes it: a decimal string with exactly the currency's number of
    /// decimals (`"12.50"` EUR, `"1200"` JPY, `"1.250"` KWD).
    pub fn amount(&self) -> String {
        let exponent = usize::from(self.currency.exponent());
        if exponent == 0 {
            return self.minor_units.to_string();
        }
        let scale = 10_i64.pow(u32::from(self.currency.exponent()));
        format!(
            "{}.{:0exponent$}",
            self.minor_units / scale,
            self.minor_units % scale
        )
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount(), self.currency)
    }
}

/// The whole and fractional digits of `-?`-less `digits(.digits)?`, with no leading zero in the
/// whole part but for `0` itself; `None` for anything else (`+1`, `1e3`, `.5`, `5.`, ` 5`).
fn split_decimal(raw: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = match raw.split_once('.') {
        Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
        Some(_) => return None,
        None => (raw, ""),
    };
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = whole.len() > 1 && whole.starts_with('0');
    if whole.is_empty() || leading_zero || !digits(whole) || !digits(fraction) {
        return None;
    }
    Some((whole, fraction))
}

fn max_minor_units(currency: Currency) -> i64 {
    let scale = 10_i64.pow(u32::from(currency.exponent()));
    Price::MAX_MAJOR_UNITS * scale + (scale - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    fn price(amount: &str, code: &str) -> Result<Price, PriceError> {
        Price::parse(amount, code)
    }

    #[test]
    fn keeps_the_exact_amount_in_minor_units() {
        let cases = [
            ("12.50", "EUR", 1250),
            ("12.5", "EUR", 1250),
            ("12", "EUR", 1200),
            ("0.10", "USD", 10),
            ("0", "GBP", 0),
            ("1200", "JPY", 1200),
            ("1.25", "KWD", 1250),
            ("0.001", "BHD", 1),
        ];
        for (amount, code, minor_units) in cases {
            let price = price(amount, code).unwrap();
            assert_eq!(price.minor_units(), minor_units, "{amount} {code}");
            assert_eq!(price.currency().code(), code);
        }
    }

    #[test]
    fn writes_the_amount_with_exactly_the_currencys_decimals() {
        for (given, code, written) in [
            ("12.5", "EUR", "12.50"),
            ("0.07", "EUR", "0.07"),
            ("3", "USD", "3.00"),
            ("1200", "JPY", "1200"),
            ("1.25", "KWD", "1.250"),
            ("999999999.99", "EUR", "999999999.99"),
        ] {
            assert_eq!(
                price(given, code).unwrap().amount(),
                written,
                "{given} {code}"
            );
        }
        assert_eq!(price("12.5", "EUR").unwrap().to_string(), "12.50 EUR");
    }

    #[test]
    fn refuses_more_decimals_than_the_currency_has_rather_than_rounding() {
        assert_eq!(
            price("12.505", "EUR"),
            Err(PriceError::Amount(PriceAmountError::TooManyDecimals {
                currency: currency("EUR"),
                actual: 3
            }))
        );
        assert_eq!(
            price("12.500", "EUR").unwrap_err().to_string(),
            "must have at most 2 decimal places in EUR (got 3)"
        );
        assert_eq!(
            price("1200.0", "JPY").unwrap_err().to_string(),
            "must be a whole number in JPY, which has no minor unit (got 1 decimal places)"
        );
        assert!(price("1.2345", "KWD").is_err());
    }

    #[test]
    fn refuses_negative_amounts() {
        for amount in ["-1", "-0.01", "-0"] {
            assert_eq!(
                price(amount, "EUR"),
                Err(PriceError::Amount(PriceAmountError::Negative)),
                "{amount}"
            );
        }
    }

    #[test]
    fn refuses_anything_but_plain_decimal_digits() {
        for amount in [
            "", "+1", "1e3", "1E3", "1.5e1", ".5", "5.", " 5", "5 ", "05", "00.5", "1,50", "1.2.3",
            "0x10", "NaN", "Infinity", "٣", "--1", "-", "-+1", "1_000",
        ] {
            assert_eq!(
                price(amount, "EUR"),
                Err(PriceError::Amount(PriceAmountError::NotDecimal)),
                "{amount:?}"
            );
        }
    }

    #[test]
    fn refuses_a_billion_whole_units_or_more() {
        assert!(price("999999999.99", "EUR").is_ok());
        for amount in ["1000000000", "1000000000.00", "99999999999999999999999"] {
            assert_eq!(
                price(amount, "EUR"),
                Err(PriceError::Amount(PriceAmountError::TooLarge)),
                "{amount}"
            );
        }
        assert!(price("999999999.999", "KWD").unwrap().minor_units() < 1 << 53);
    }

    #[test]
    fn a_bad_currency_is_reported_as_the_currency() {
        let err = price("12.50", "eur").unwrap_err();
        assert_eq!(err, PriceError::Currency(CurrencyError::Malformed));
        assert_eq!(err.field(), "currency");
        assert_eq!(price("-1", "EUR").unwrap_err().field(), "amount");
    }

    #[test]
    fn restores_from_minor_units_within_the_same_bounds() {
        let eur = currency("EUR");
        let stored = Price::from_minor_units(1250, eur).unwrap();
        assert_eq!(stored, price("12.50", "EUR").unwrap());
        assert_eq!(
            Price::from_minor_units(99_999_999_999, eur)
                .unwrap()
                .amount(),
            "999999999.99"
        );
        assert_eq!(
            Price::from_minor_units(100_000_000_000, eur),
            Err(PriceAmountError::TooLarge)
        );
        assert_eq!(
            Price::from_minor_units(-1, eur),
            Err(PriceAmountError::Negative)
        );
        assert!(Price::from_minor_units(999_999_999_999, currency("KWD")).is_ok());
        assert!(Price::from_minor_units(1_000_000_000, currency("JPY")).is_err());
    }
}
