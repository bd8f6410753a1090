//! A pet's optional details on the wire: `price` (`{"amount": "12.50", "currency": "EUR"}`),
//! `description`, `photoUrls` and `tags`, read from a request body member by member (each
//! refusal naming its member, and a list's item by its position) and written back only when
//! the pet has them, so a client of the spec's fields alone sees what it always saw.

use petstore_domain::{ItemError, ListError, PetDescription, PetDetails, PhotoUrls, Price, Tags};

use crate::wire::json_value::{JsonValue, Members};
pub(crate) use crate::wire::price::PriceDto;

pub(crate) const PRICE: &str = "price";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const PHOTO_URLS: &str = "photoUrls";
pub(crate) const TAGS: &str = "tags";

/// The detail members a pet's body may have.
pub(crate) const DETAIL_FIELDS: [&str; 4] = [PRICE, DESCRIPTION, PHOTO_URLS, TAGS];

/// The detail members of a pet going out, each absent when the pet has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DetailsOut {
    pub(crate) price: Option<PriceDto>,
    pub(crate) description: Option<String>,
    pub(crate) photo_urls: Option<Vec<String>>,
    pub(crate) tags: Option<Vec<String>>,
}

impl From<PetDetails> for DetailsOut {
    fn from(details: PetDetails) -> Self {
        let photo_urls: Vec<String> = details
            .photo_urls
            .into_inner()
            .into_iter()
            .map(petstore_domain::PhotoUrl::into_inner)
            .collect();
        let tags: Vec<String> = details
            .tags
            .into_inner()
            .into_iter()
            .map(petstore_domain::Tag::into_inner)
            .collect();
        Self {
            price: details.price.map(PriceDto::from),
            description: details.description.map(PetDescription::into_inner),
            photo_urls: (!photo_urls.is_empty()).then_some(photo_urls),
            tags: (!tags.is_empty()).then_some(tags),
        }
    }
}

/// `price`: an object of `amount` and `currency`, nothing else.
pub(crate) fn parse_price(value: &JsonValue<'_>) -> Result<Price, String> {
    let JsonValue::Object(members) = value else {
        return Err(
            "`price` must be an object like {\"amount\": \"12.50\", \"currency\": \"EUR\"}"
                .to_owned(),
        );
    };
    if let Some(other) = members
        .keys()
        .find(|key| *key != "amount" && *key != "currency")
    {
        return Err(format!(
            "`price` has an unknown member `{other}`; it takes `amount` and `currency`"
        ));
    }
    let text = |name: &str| match members.get(name) {
        Some(JsonValue::String(text)) => Ok(text.as_ref()),
        Some(JsonValue::Number(_)) if name == "amount" => Err(
            "`price.amount` must be a string holding a decimal (`\"12.50\"`), not a JSON number"
                .to_owned(),
        ),
        Some(_) => Err(format!("`price.{name}` must be a string")),
        None => Err(format!("`price.{name}` is required")),
    };
    let (amount, currency) = (text("amount")?, text("currency")?);
    Price::parse(amount, currency).map_err(|error| format!("`price.{}` {error}", error.field()))
}

/// `description`: a string.
pub(crate) fn parse_description(value: &JsonValue<'_>) -> Result<PetDescription, String> {
    match value {
        JsonValue::String(text) => {
            PetDescription::parse(text.as_ref()).map_err(|error| format!("`{DESCRIPTION}` {error}"))
        }
        _ => Err(format!("`{DESCRIPTION}` must be a string")),
    }
}

/// `photoUrls`: an array of strings.
pub(crate) fn parse_photo_urls(value: &JsonValue<'_>) -> Result<PhotoUrls, String> {
    let items = strings(value, PHOTO_URLS)?;
    PhotoUrls::parse(&items).map_err(|error| list_message(PHOTO_URLS, error))
}

/// `tags`: an array of strings.
pub(crate) fn parse_tags(value: &JsonValue<'_>) -> Result<Tags, String> {
    let items = strings(value, TAGS)?;
    Tags::parse(&items).map_err(|error| list_message(TAGS, error))
}

fn strings<'a>(value: &'a JsonValue<'_>, member: &str) -> Result<Vec<&'a str>, String> {
    let JsonValue::Array(items) = value else {
        return Err(format!("`{member}` must be an array of strings"));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            JsonValue::String(text) => Ok(text.as_ref()),
            _ => Err(format!("`{member}[{index}]` must be a string")),
        })
        .collect()
}

/// A list's refusal, naming each refused item by its position (`photoUrls[2]`).
fn list_message<E: std::fmt::Display>(member: &str, error: ListError<E>) -> String {
    match error {
        ListError::TooMany { .. } => format!("`{member}` {error}"),
        ListError::Items(items) => items
            .iter()
            .map(|ItemError { index, error }| format!("`{member}[{index}]` {error}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The details a create's body gives (absent members: none), or every refusal among them.
pub(crate) fn parse_details(fields: &Members<'_>) -> Result<PetDetails, Vec<String>> {
    let mut problems = Vec::new();
    let mut take = |problem: Result<(), String>| problems.extend(problem.err());
    let mut details = PetDetails::default();
    // `null` is the same as absent for a field a pet may lack.
    let given = |name: &str| fields.get(name).filter(|value| !value.is_null());
    if let Some(value) = given(PRICE) {
        take(parse_price(value).map(|price| details.price = Some(price)));
    }
    if let Some(value) = given(DESCRIPTION) {
        take(parse_description(value).map(|text| details.description = Some(text)));
    }
    if let Some(value) = given(PHOTO_URLS) {
        take(parse_photo_urls(value).map(|urls| details.photo_urls = urls));
    }
    if let Some(value) = given(TAGS) {
        take(parse_tags(value).map(|tags| details.tags = tags));
    }
    if problems.is_empty() {
        Ok(details)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `f` of `value` as a request body's value reads.
    fn with_value<T>(value: &serde_json::Value, f: impl FnOnce(&JsonValue<'_>) -> T) -> T {
        let text = value.to_string();
        f(&serde_json::from_str(&text).unwrap())
    }

    fn details_of(value: &serde_json::Value) -> Result<PetDetails, Vec<String>> {
        with_value(value, |parsed| match parsed {
            JsonValue::Object(members) => parse_details(members),
            _ => panic!("an object"),
        })
    }

    #[test]
    fn details_read_back_as_they_are_written() {
        let details = details_of(&json!({
            "price": {"amount": "12.5", "currency": "EUR"},
            "description": "A good dog.\nHouse-trained.",
            "photoUrls": ["https://example.com/rex.jpg"],
            "tags": ["  Friendly ", "friendly", "Small  Dog"]
        }))
        .unwrap();
        let out = DetailsOut::from(details);
        assert_eq!(
            out.price,
            Some(PriceDto {
                amount: "12.50".to_owned(),
                currency: "EUR".to_owned()
            })
        );
        assert_eq!(
            out.tags,
            Some(vec!["friendly".to_owned(), "small dog".to_owned()])
        );
        assert_eq!(out.photo_urls.map(|urls| urls.len()), Some(1));
    }

    #[test]
    fn none_given_is_none_kept_and_none_written() {
        let details = details_of(&json!({"description": null})).unwrap();
        assert!(details.is_empty());
        assert_eq!(DetailsOut::from(details), DetailsOut::default());
    }

    #[test]
    fn every_refusal_names_its_member_and_item() {
        let problems = details_of(&json!({
            "price": {"amount": 12.5, "currency": "EUR"},
            "description": 7,
            "photoUrls": ["https://example.com/a.jpg", "http://example.com/b.jpg", 3],
            "tags": ["ok", ""]
        }))
        .unwrap_err();
        let message = problems.join("; ");
        for named in [
            "`price.amount` must be a string",
            "`description` must be a string",
            "`photoUrls[2]` must be a string",
            "`tags[1]`",
        ] {
            assert!(message.contains(named), "{named}: {message}");
        }
        let urls = with_value(
            &json!(["https://example.com/a.jpg", "http://x.org/b"]),
            parse_photo_urls,
        );
        assert!(urls.unwrap_err().starts_with("`photoUrls[1]`"));
        let price = with_value(&json!({"amount": "1.005", "currency": "EUR"}), parse_price);
        assert!(price.unwrap_err().starts_with("`price.amount`"), "decimals");
        let price = with_value(
            &json!({"amount": "1", "currency": "EUR", "x": 1}),
            parse_price,
        );
        assert!(price.unwrap_err().contains("`x`"));
    }
}
