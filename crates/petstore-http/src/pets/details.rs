//! A pet's optional details on the wire: `price` (`{"amount": "12.50", "currency": "EUR"}`),
//! `description`, `photoUrls` and `tags`, read from a request body member by member (each
//! refusal naming its member, and a list's item by its position) and written back only when
//! the pet has them, so a client of the spec's fields alone sees what it always saw.

use petstore_domain::{ItemError, ListError, PetDescription, PetDetails, PhotoUrls, Price, Tags};

pub(crate) use crate::wire::price::PriceDto;
use serde_json::{Map, Value};

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
pub(crate) fn parse_price(value: &Value) -> Result<Price, String> {
    let Value::Object(members) = value else {
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
        Some(Value::String(text)) => Ok(text.as_str()),
        Some(Value::Number(_)) if name == "amount" => Err(
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
pub(crate) fn parse_description(value: &Value) -> Result<PetDescription, String> {
    match value {
        Value::String(text) => {
            PetDescription::parse(text.as_str()).map_err(|error| format!("`{DESCRIPTION}` {error}"))
        }
        _ => Err(format!("`{DESCRIPTION}` must be a string")),
    }
}

/// `photoUrls`: an array of strings.
pub(crate) fn parse_photo_urls(value: &Value) -> Result<PhotoUrls, String> {
    let items = strings(value, PHOTO_URLS)?;
    PhotoUrls::parse(&items).map_err(|error| list_message(PHOTO_URLS, error))
}

/// `tags`: an array of strings.
pub(crate) fn parse_tags(value: &Value) -> Result<Tags, String> {
    let items = strings(value, TAGS)?;
    Tags::parse(&items).map_err(|error| list_message(TAGS, error))
}

fn strings<'a>(value: &'a Value, member: &str) -> Result<Vec<&'a str>, String> {
    let Value::Array(items) = value else {
        return Err(format!("`{member}` must be an array of strings"));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            Value::String(text) => Ok(text.as_str()),
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
pub(crate) fn parse_details(fields: &Map<String, Value>) -> Result<PetDetails, Vec<String>> {
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

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(members) => members,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn details_read_back_as_they_are_written() {
        let details = parse_details(&object(json!({
            "price": {"amount": "12.5", "currency": "EUR"},
            "description": "A good dog.\nHouse-trained.",
            "photoUrls": ["https://example.com/rex.jpg"],
            "tags": ["  Friendly ", "friendly", "Small  Dog"]
        })))
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
        let details = parse_details(&object(json!({"description": null}))).unwrap();
        assert!(details.is_empty());
        assert_eq!(DetailsOut::from(details), DetailsOut::default());
    }

    #[test]
    fn every_refusal_names_its_member_and_item() {
        let problems = parse_details(&object(json!({
            "price": {"amount": 12.5, "currency": "EUR"},
            "description": 7,
            "photoUrls": ["https://example.com/a.jpg", "http://example.com/b.jpg", 3],
            "tags": ["ok", ""]
        })))
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
        let urls = parse_photo_urls(&json!(["https://example.com/a.jpg", "http://x.org/b"]));
        assert!(urls.unwrap_err().starts_with("`photoUrls[1]`"));
        let price = parse_price(&json!({"amount": "1.005", "currency": "EUR"}));
        assert!(price.unwrap_err().starts_with("`price.amount`"), "decimals");
        let price = parse_price(&json!({"amount": "1", "currency": "EUR", "x": 1}));
        assert!(price.unwrap_err().contains("`x`"));
    }
}
