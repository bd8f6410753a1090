//! `Currency`: an ISO 4217 currency a price is in, with the number of decimal places of its
//! minor unit (its exponent), which decides how many decimals an amount in it may have.

use std::fmt;

/// A currency from [`CURRENCIES`]. Holding one proves the code is known and gives its exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency {
    code: &'static str,
    exponent: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurrencyError {
    #[error("must be an ISO 4217 currency code of three uppercase letters, such as \"EUR\"")]
    Malformed,
    #[error("must be an active ISO 4217 currency code (\"{code}\" is not one)")]
    Unknown { code: String },
}

/// The active ISO 4217 currencies, by code, with their minor units' exponents, sorted by code.
/// Left out: fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), precious metals, bond
/// market units, SDR and the testing and "no currency" codes (X.. other than XAF, XCD, XCG,
/// XOF, XPF), and codes withdrawn (HRK, ANG, BGN, SLL, CUC and older). A table kept here rather
/// than a crate: it is short, changes a few times a decade, and a price needs only code and
/// exponent.
const CURRENCIES: &[(&str, u8)] = &[
    ("AED", 2),
    ("AFN", 2),
    ("ALL", 2),
    ("AMD", 2),
    ("AOA", 2),
    ("ARS", 2),
    ("AUD", 2),
    ("AWG", 2),
    ("AZN", 2),
    ("BAM", 2),
    ("BBD", 2),
    ("BDT", 2),
    ("BHD", 3),
    ("BIF", 0),
    ("BMD", 2),
    ("BND", 2),
    ("BOB", 2),
    ("BRL", 2),
    ("BSD", 2),
    ("BTN", 2),
    ("BWP", 2),
    ("BYN", 2),
    ("BZD", 2),
    ("CAD", 2),
    ("CDF", 2),
    ("CHF", 2),
    ("CLP", 0),
    ("CNY", 2),
    ("COP", 2),
    ("CRC", 2),
    ("CUP", 2),
    ("CVE", 2),
    ("CZK", 2),
    ("DJF", 0),
    ("DKK", 2),
    ("DOP", 2),
    ("DZD", 2),
    ("EGP", 2),
    ("ERN", 2),
    ("ETB", 2),
    ("EUR", 2),
    ("FJD", 2),
    ("FKP", 2),
    ("GBP", 2),
    ("GEL", 2),
    ("GHS", 2),
    ("GIP", 2),
    ("GMD", 2),
    ("GNF", 0),
    ("GTQ", 2),
    ("GYD", 2),
    ("HKD", 2),
    ("HNL", 2),
    ("HTG", 2),
    ("HUF", 2),
    ("IDR", 2),
    ("ILS", 2),
    ("INR", 2),
    ("IQD", 3),
    ("IRR", 2),
    ("ISK", 0),
    ("JMD", 2),
    ("JOD", 3),
    ("JPY", 0),
    ("KES", 2),
    ("KGS", 2),
    ("KHR", 2),
    ("KMF", 0),
    ("KPW", 2),
    ("KRW", 0),
    ("KWD", 3),
    ("KYD", 2),
    ("KZT", 2),
    ("LAK", 2),
    ("LBP", 2),
    ("LKR", 2),
    ("LRD", 2),
    ("LSL", 2),
    ("LYD", 3),
    ("MAD", 2),
    ("MDL", 2),
    ("MGA", 2),
    ("MKD", 2),
    ("MMK", 2),
    ("MNT", 2),
    ("MOP", 2),
    ("MRU", 2),
    ("MUR", 2),
    ("MVR", 2),
    ("MWK", 2),
    ("MXN", 2),
    ("MYR", 2),
    ("MZN", 2),
    ("NAD", 2),
    ("NGN", 2),
    ("NIO", 2),
    ("NOK", 2),
    ("NPR", 2),
    ("NZD", 2),
    ("OMR", 3),
    ("PAB", 2),
    ("PEN", 2),
    ("PGK", 2),
    ("PHP", 2),
    ("PKR", 2),
    ("PLN", 2),
    ("PYG", 0),
    ("QAR", 2),
    ("RON", 2),
    ("RSD", 2),
    ("RUB", 2),
    ("RWF", 0),
    ("SAR", 2),
    ("SBD", 2),
    ("SCR", 2),
    ("SDG", 2),
    ("SEK", 2),
    ("SGD", 2),
    ("SHP", 2),
    ("SLE", 2),
    ("SOS", 2),
    ("SRD", 2),
    ("SSP", 2),
    ("STN", 2),
    ("SVC", 2),
    ("SYP", 2),
    ("SZL", 2),
    ("THB", 2),
    ("TJS", 2),
    ("TMT", 2),
    ("TND", 3),
    ("TOP", 2),
    ("TRY", 2),
    ("TTD", 2),
    ("TWD", 2),
    ("TZS", 2),
    ("UAH", 2),
    ("UGX", 0),
    ("USD", 2),
    ("UYU", 2),
    ("UZS", 2),
    ("VED", 2),
    ("VES", 2),
    ("VND", 0),
    ("VUV", 0),
    ("WST", 2),
    ("XAF", 0),
    ("XCD", 2),
    ("XCG", 2),
    ("XOF", 0),
    ("XPF", 0),
    ("YER", 2),
    ("ZAR", 2),
    ("ZMW", 2),
    ("ZWG", 2),
];

impl Currency {
    /// The largest exponent in the table: amounts have at most this many decimals.
    pub const MAX_EXPONENT: u8 = 3;

    /// A code as a client sends it: exactly three uppercase ASCII letters (`"eur"` is refused
    /// rather than read leniently, so a client bug shows) naming a currency in the table.
    pub fn parse(raw: &str) -> Result<Self, CurrencyError> {
        if raw.len() != 3 || !raw.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(CurrencyError::Malformed);
        }
        CURRENCIES
            .binary_search_by(|(code, _)| (*code).cmp(raw))
            .map(|index| {
                let (code, exponent) = CURRENCIES[index];
                Self { code, exponent }
            })
            .map_err(|_| CurrencyError::Unknown {
                code: raw.to_owned(),
            })
    }

    /// The ISO 4217 code, such as `"EUR"`.
    pub const fn code(self) -> &'static str {
        self.code
    }

    /// How many decimal places the minor unit has: 2 for EUR (cents), 0 for JPY, 3 for KWD.
    pub const fn exponent(self) -> u8 {
        self.exponent
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_unique_and_well_formed() {
        for pair in CURRENCIES.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{:?} before {:?}", pair[0], pair[1]);
        }
        for &(code, exponent) in CURRENCIES {
            assert_eq!(Currency::parse(code).unwrap().code(), code);
            assert!(exponent <= Currency::MAX_EXPONENT, "{code}");
        }
    }

    #[test]
    fn knows_the_exponents_of_common_currencies() {
        for (code, exponent) in [
            ("EUR", 2),
            ("USD", 2),
            ("GBP", 2),
            ("CHF", 2),
            ("JPY", 0),
            ("KRW", 0),
            ("KWD", 3),
            ("BHD", 3),
            ("TND", 3),
        ] {
            assert_eq!(
                Currency::parse(code).unwrap().exponent(),
                exponent,
                "{code}"
            );
        }
    }

    #[test]
    fn refuses_codes_not_written_as_three_uppercase_letters() {
        for raw in [
            "", "eur", "Eur", "EU", "EURO", " EUR", "EUR ", "E1R", "€", "ÉUR",
        ] {
            assert_eq!(
                Currency::parse(raw),
                Err(CurrencyError::Malformed),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn refuses_unknown_withdrawn_and_non_currency_codes() {
        for raw in ["ABC", "HRK", "DEM", "XXX", "XAU", "XTS", "BTC"] {
            assert_eq!(
                Currency::parse(raw),
                Err(CurrencyError::Unknown {
                    code: raw.to_owned()
                }),
                "{raw:?}"
            );
        }
        let err = Currency::parse("ABC").unwrap_err();
        assert_eq!(
            err.to_string(),
            "must be an active ISO 4217 currency code (\"ABC\" is not one)"
        );
    }
}
