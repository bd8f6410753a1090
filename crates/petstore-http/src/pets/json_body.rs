//! A pet and a page of pets written as JSON by hand: the member names as literal bytes and only
//! the text values checked for escapes. The bytes are the ones serde writes for `PetDto` (the
//! tests compare the two); serde's derived path escapes every member name as a string and steps
//! through its serializer for each member, which for a page of pets is most of the page's work.

use super::dto::{PetDto, PetsDto};
use crate::wire::json_out::JsonBody;

/// The body of a single pet: [`PetDto`] as JSON.
pub(crate) struct PetJson<'a>(pub(crate) &'a PetDto);

/// The body of a page of pets: [`PetsDto`] as JSON.
pub(crate) struct PetsJson<'a>(pub(crate) &'a PetsDto);

impl JsonBody for PetJson<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        write_pet(out, self.0)
    }
}

impl JsonBody for PetsJson<'_> {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        write_array(out, &self.0 .0, write_pet)
    }
}

/// `pet`'s members in `PetDto`'s order, each detail left out when the pet has none.
fn write_pet(out: &mut Vec<u8>, pet: &PetDto) -> serde_json::Result<()> {
    out.extend_from_slice(b"{\"id\":");
    serde_json::to_writer(&mut *out, &pet.id)?;
    out.extend_from_slice(b",\"name\":");
    write_str(out, &pet.name)?;
    out.extend_from_slice(b",\"categoryId\":");
    serde_json::to_writer(&mut *out, &pet.category_id)?;
    out.extend_from_slice(b",\"status\":");
    write_unescaped(out, pet.status.0.as_str());
    if let Some(price) = &pet.price {
        out.extend_from_slice(b",\"price\":{\"amount\":");
        write_unescaped(out, &price.amount);
        out.extend_from_slice(b",\"currency\":");
        write_unescaped(out, &price.currency);
        out.push(b'}');
    }
    if let Some(description) = &pet.description {
        out.extend_from_slice(b",\"description\":");
        write_str(out, description)?;
    }
    if let Some(photo_urls) = &pet.photo_urls {
        out.extend_from_slice(b",\"photoUrls\":");
        write_strs(out, photo_urls)?;
    }
    if let Some(tags) = &pet.tags {
        out.extend_from_slice(b",\"tags\":");
        write_strs(out, tags)?;
    }
    out.push(b'}');
    Ok(())
}

fn write_strs(out: &mut Vec<u8>, texts: &[String]) -> serde_json::Result<()> {
    write_array(out, texts, |out, text| write_str(out, text))
}

/// `items` as a JSON array, each written by `write_item`.
fn write_array<T>(
    out: &mut Vec<u8>,
    items: &[T],
    write_item: impl Fn(&mut Vec<u8>, &T) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    out.push(b'[');
    for (at, item) in items.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        write_item(out, item)?;
    }
    out.push(b']');
    Ok(())
}

/// `text` as a JSON string, as serde_json writes it: a text with a quote, a backslash or a
/// control character goes through serde_json's own escaping; any other is copied as it is.
fn write_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if text
        .bytes()
        .any(|byte| byte < 0x20 || byte == b'"' || byte == b'\\')
    {
        return serde_json::to_writer(out, text);
    }
    write_unescaped(out, text);
    Ok(())
}

/// `text` quoted as it is: for the texts the domain spells in letters, digits and points
/// alone (a status, a price's amount and currency), which have nothing to escape.
fn write_unescaped(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use petstore_domain::PetStatus;

    use super::super::details::PriceDto;
    use super::super::dto::PetStatusDto;
    use super::*;
    use crate::wire::json_out::json_bytes;

    fn plain(id: i64, name: &str, status: PetStatus) -> PetDto {
        PetDto {
            id,
            name: name.to_owned(),
            category_id: -7,
            status: PetStatusDto(status),
            price: None,
            description: None,
            photo_urls: None,
            tags: None,
        }
    }

    fn with_every_detail(id: i64, text: &str) -> PetDto {
        PetDto {
            price: Some(PriceDto {
                amount: "249.50".to_owned(),
                currency: "EUR".to_owned(),
            }),
            description: Some(format!("{text}\nsecond line")),
            photo_urls: Some(vec![
                "https://example.com/a.jpg".to_owned(),
                format!("https://example.com/{text}"),
            ]),
            tags: Some(vec!["small dog".to_owned(), text.to_owned()]),
            ..plain(id, text, PetStatus::Sold)
        }
    }

    /// Texts serde_json escapes, and ones it leaves as they are.
    const TEXTS: [&str; 8] = [
        "Rex",
        "",
        "say \"hi\"",
        "back\\slash",
        "tab\there\r\u{8}\u{c}",
        "\u{0}\u{1f} control",
        "del \u{7f} and / slash",
        "Ünïcødé 猫 \u{1F408} \u{2028}",
    ];

    #[test]
    fn a_pet_is_written_as_serde_writes_it() {
        for (at, text) in TEXTS.iter().enumerate() {
            let id = i64::try_from(at).unwrap();
            for pet in [
                plain(id, text, PetStatus::Pending),
                with_every_detail(id, text),
            ] {
                assert_eq!(
                    String::from_utf8(json_bytes(&PetJson(&pet)).unwrap()).unwrap(),
                    serde_json::to_string(&pet).unwrap(),
                );
            }
        }
    }

    #[test]
    fn every_status_and_extreme_number_is_written_as_serde_writes_it() {
        for status in PetStatus::ALL {
            for id in [i64::MIN, -1, 0, i64::MAX] {
                let pet = plain(id, "Rex", status);
                assert_eq!(
                    json_bytes(&PetJson(&pet)).unwrap(),
                    serde_json::to_vec(&pet).unwrap()
                );
            }
        }
    }

    #[test]
    fn a_page_is_written_as_serde_writes_it() {
        for page in [
            PetsDto(Vec::new()),
            PetsDto(vec![plain(1, "Rex", PetStatus::Available)]),
            PetsDto(
                TEXTS
                    .iter()
                    .enumerate()
                    .map(|(at, text)| with_every_detail(i64::try_from(at).unwrap(), text))
                    .chain([plain(99, "Tom", PetStatus::Available)])
                    .collect(),
            ),
        ] {
            assert_eq!(
                json_bytes(&PetsJson(&page)).unwrap(),
                serde_json::to_vec(&page).unwrap()
            );
        }
    }
}
