//! Unit tests of the query and path parameters and of the next-page link.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::error::ErrorCode;

fn cursors() -> CursorCodec {
    CursorCodec::new(b"test secret, thirty-two bytes...")
}

/// The page part of a request (its ids must be none).
fn parse(query: &str) -> Result<PetListQuery, ApiError> {
    parse_list_request(query, &cursors()).map(|request| {
        assert_eq!(request.ids, None, "{query}");
        request.query
    })
}

fn parse_by_id(query: &str) -> (Vec<i64>, Option<PetStatus>) {
    let request = parse_list_request(query, &cursors()).unwrap();
    let ids = request.ids.expect("ids");
    (
        ids.as_slice().iter().map(|id| id.get()).collect(),
        request.query.status,
    )
}

#[track_caller]
fn invalid(query: &str, mentions: &str) {
    let err = parse(query).expect_err(query);
    assert_eq!(err.code(), ErrorCode::InvalidParameter, "{query}");
    assert!(
        err.message().contains(mentions),
        "{query}: {}",
        err.message()
    );
}

#[test]
fn defaults_to_20_of_any_status_from_the_start() {
    assert_eq!(parse("").unwrap(), PetListQuery::default());
}

#[test]
fn reads_limit_status_and_cursor() {
    let cursor = cursors().encode(PetId::new(41), Some(PetStatus::Sold));
    let query = parse(&format!("limit=5&status=sold&cursor={cursor}")).unwrap();
    assert_eq!(query.limit.get(), 5);
    assert_eq!(query.status, Some(PetStatus::Sold));
    assert_eq!(query.after, Some(PetId::new(41)));
}

#[test]
fn accepts_the_limit_bounds() {
    assert_eq!(parse("limit=1").unwrap().limit.get(), 1);
    assert_eq!(parse("limit=100").unwrap().limit.get(), 100);
}

#[test]
fn rejects_bad_limits_naming_the_parameter() {
    for raw in [
        "0",
        "101",
        "-1",
        "abc",
        "1.5",
        "",
        "+5",
        "1e1",
        " 5",
        "99999999999999999999",
    ] {
        invalid(
            &format!("limit={raw}"),
            "query parameter `limit` must be an integer from 1 to 100",
        );
    }
}

#[test]
fn rejects_bad_statuses_naming_the_parameter() {
    for raw in ["SOLD", "", "adopted", "available,sold"] {
        invalid(&format!("status={raw}"), "query parameter `status`");
    }
}

#[test]
fn rejects_repeated_parameters() {
    invalid("limit=1&limit=2", "`limit` must be given at most once");
}

#[test]
fn unknown_parameters_are_refused_by_name() {
    invalid("foo=bar&limit=3", "`foo`");
    invalid("limit=3&stauts=sold", "`stauts`");
    invalid("_=123", "`_`");
}

#[test]
fn ids_look_pets_up_sorted_and_once_each_with_an_optional_status() {
    assert_eq!(parse_by_id("id=7&id=3&id=7"), (vec![3, 7], None));
    assert_eq!(
        parse_by_id("status=sold&id=-1"),
        (vec![-1], Some(PetStatus::Sold))
    );
    let hundred: Vec<String> = (1..=100).map(|n| format!("id={n}")).collect();
    assert_eq!(parse_by_id(&hundred.join("&")).0.len(), 100);
    let too_many = format!("{}&id=101", hundred.join("&"));
    let err = parse_list_request(&too_many, &cursors()).unwrap_err();
    assert!(err.message().contains("1 to 100 ids"), "{}", err.message());
    let with_limit = parse_list_request("id=3&limit=5", &cursors()).unwrap();
    assert_eq!(with_limit.query.limit.get(), 5);
    for (query, mentions) in [("id=abc", "`id`"), ("id=1.5", "`id`")] {
        let err = parse_list_request(query, &cursors()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter, "{query}");
        assert!(
            err.message().contains(mentions),
            "{query}: {}",
            err.message()
        );
    }
}

#[test]
fn percent_encoded_values_are_decoded() {
    assert_eq!(
        parse("status=%73old").unwrap().status,
        Some(PetStatus::Sold)
    );
}

#[test]
fn rejects_malformed_cursors() {
    for raw in ["", "!!!", "djE6NQ", "5"] {
        invalid(&format!("cursor={raw}"), "query parameter `cursor`");
    }
}

/// A cursor is signed, so an edited one, or one from another filter, is refused.
#[test]
fn rejects_a_tampered_cursor_and_one_from_another_filter() {
    let cursor = cursors().encode(PetId::new(41), Some(PetStatus::Sold));
    let mut tampered = cursor.clone().into_bytes();
    tampered[5] = if tampered[5] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    invalid(
        &format!("status=sold&cursor={tampered}"),
        "query parameter `cursor`",
    );
    invalid(
        &format!("status=pending&cursor={cursor}"),
        "another `status` filter",
    );
    invalid(&format!("cursor={cursor}"), "another `status` filter");
    // The limit is free to change between pages.
    let query = parse(&format!("limit=7&status=sold&cursor={cursor}")).unwrap();
    assert_eq!(query.after, Some(PetId::new(41)));
}

#[test]
fn pet_id_must_be_an_int64() {
    assert_eq!(parse_pet_id("7").unwrap().get(), 7);
    assert_eq!(parse_pet_id("-7").unwrap().get(), -7);
    for raw in ["abc", "1.5", "", "+1", "9223372036854775808", "1e3", "0x10"] {
        let err = parse_pet_id(raw).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter);
        assert!(err.message().contains("`petId`"));
    }
}

#[test]
fn next_link_keeps_limit_and_status() {
    let query = parse("limit=2&status=pending").unwrap();
    let link = next_page_link(&query, None, PetId::new(9), None, &cursors());
    let cursor = cursors().encode(PetId::new(9), Some(PetStatus::Pending));
    assert_eq!(
        link,
        format!("</v1/pets?limit=2&status=pending&cursor={cursor}>; rel=\"next\"")
    );
    let without_status = next_page_link(
        &PetListQuery::default(),
        None,
        PetId::new(9),
        None,
        &cursors(),
    );
    let cursor = cursors().encode(PetId::new(9), None);
    assert_eq!(
        without_status,
        format!("</v1/pets?limit=20&cursor={cursor}>; rel=\"next\"")
    );
}

#[test]
fn the_next_link_of_a_lookup_by_id_keeps_the_ids() {
    let request = parse_list_request("id=9&id=2&limit=1", &cursors()).unwrap();
    let link = next_page_link(
        &request.query,
        request.ids.as_ref(),
        PetId::new(2),
        None,
        &cursors(),
    );
    assert!(
        link.starts_with("</v1/pets?limit=1&id=2&id=9&cursor="),
        "{link}"
    );
}

#[test]
fn a_search_by_name_pages_with_a_cursor_that_carries_the_name() {
    let request = parse_list_request("name=Re&limit=2", &cursors()).unwrap();
    let link = next_page_link(&request.query, None, PetId::new(4), Some("rex"), &cursors());
    let cursor = link
        .split("cursor=")
        .nth(1)
        .and_then(|rest| rest.split('>').next())
        .unwrap();
    let next = parse_list_request(&format!("name=Re&limit=2&cursor={cursor}"), &cursors()).unwrap();
    assert_eq!(next.query.after, Some(PetId::new(4)));
    assert_eq!(next.query.after_name.as_deref(), Some("rex"));
    for other in [
        format!("name=R&limit=2&cursor={cursor}"),
        format!("name=Re&tag=dog&limit=2&cursor={cursor}"),
        format!("limit=2&cursor={cursor}"),
    ] {
        let err = parse_list_request(&other, &cursors()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidParameter, "{other}");
    }
}
