//! A price on the wire (`{"amount": "12.50", "currency": "EUR"}`), as pets and orders carry it.

use petstore_domain::Price;
use serde::Serialize;
use utoipa::ToSchema;

/// A price as the API writes it: the amount as a decimal string, with exactly the currency's
/// decimals, and the ISO 4217 code. A pet without a price (and an order of one) has no `price` member at all; an order's is
/// its pet's price when it was placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = Price, example = json!({"amount": "12.50", "currency": "EUR"}))]
pub(crate) struct PriceDto {
    /// A decimal string: digits, a point, as many decimals as the currency has (`"12.50"` EUR,
    /// `"1200"` JPY). Never a JSON number: a binary float holds most amounts only roughly.
    #[schema(pattern = r"^(0|[1-9][0-9]{0,8})(\.[0-9]{1,3})?$")]
    pub(crate) amount: String,
    /// An active ISO 4217 currency code.
    #[schema(pattern = "^[A-Z]{3}$")]
    pub(crate) currency: String,
}

impl From<Price> for PriceDto {
    fn from(price: Price) -> Self {
        Self {
            amount: price.amount(),
            currency: price.currency().code().to_owned(),
        }
    }
}
