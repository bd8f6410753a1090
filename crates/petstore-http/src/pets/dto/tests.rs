//! Unit tests of the `createPet` body rules: each bad input the API promises to reject, and the
//! shape of a `Pet` on the wire.

#![allow(clippy::unwrap_used)]

use petstore_domain::PetId;

use super::*;
use crate::error::ErrorCode;

fn parse(body: &str) -> Result<NewPet, ApiError> {
    NewPetDto::from_json(body.as_bytes())?.try_into_domain()
}

#[track_caller]
fn rejected(body: &str, code: ErrorCode, mentions: &str) {
    let err = parse(body).expect_err(body);
    assert_eq!(err.code(), code, "{body}: {err}");
    assert!(
        err.message().contains(mentions),
        "{body}: message {:?} should mention {mentions:?}",
        err.message()
    );
}

#[test]
fn accepts_a_full_body() {
    let pet = parse(r#"{"name": "Rex", "categoryId": 3, "status": "pending"}"#).unwrap();
    assert_eq!(pet.name().as_str(), "Rex");
    assert_eq!(pet.category_id().get(), 3);
    assert_eq!(pet.status(), PetStatus::Pending);
}

#[test]
fn absent_or_null_status_means_available() {
    for body in [
        r#"{"name": "Rex", "categoryId": 3}"#,
        r#"{"name": "Rex", "categoryId": 3, "status": null}"#,
    ] {
        assert_eq!(
            parse(body).unwrap().status(),
            PetStatus::Available,
            "{body}"
        );
    }
}

#[test]
fn accepts_the_largest_int64_category_and_a_255_char_name() {
    let name = "é".repeat(255);
    let body = format!(r#"{{"name": "{name}", "categoryId": 9223372036854775807}}"#);
    let pet = parse(&body).unwrap();
    assert_eq!(pet.category_id().get(), i64::MAX);
    assert_eq!(pet.name().as_str(), name);
}

#[test]
fn rejects_bad_names() {
    let long = "a".repeat(256);
    for (body, mentions) in [
        (r#"{"categoryId": 1}"#.to_owned(), "`name` is required"),
        (r#"{"name": "", "categoryId": 1}"#.to_owned(), "`name`"),
        (
            r#"{"name": "   ", "categoryId": 1}"#.to_owned(),
            "`name` must not be blank",
        ),
        (
            format!(r#"{{"name": "{long}", "categoryId": 1}}"#),
            "`name` must be at most 255",
        ),
        (
            r#"{"name": null, "categoryId": 1}"#.to_owned(),
            "`name` must be a string",
        ),
        (
            r#"{"name": 5, "categoryId": 1}"#.to_owned(),
            "`name` must be a string",
        ),
        (
            r#"{"name": ["Rex"], "categoryId": 1}"#.to_owned(),
            "`name` must be a string",
        ),
    ] {
        rejected(&body, ErrorCode::ValidationFailed, mentions);
    }
}

#[test]
fn rejects_category_ids_that_are_not_whole_numbers_from_1_to_int64_max_saying_why() {
    rejected(
        r#"{"name": "Rex"}"#,
        ErrorCode::ValidationFailed,
        "`categoryId` is required",
    );
    for (raw, why) in [
        ("0", "must be from 1 to 9223372036854775807 (got 0)"),
        ("-1", "must be from 1 to 9223372036854775807 (got -1)"),
        ("0.0", "must be from 1 to 9223372036854775807"),
        (
            "9223372036854775808",
            "must be from 1 to 9223372036854775807",
        ),
        (
            "18446744073709551616",
            "must be from 1 to 9223372036854775807",
        ),
        (
            "-9223372036854775809",
            "must be from 1 to 9223372036854775807",
        ),
        ("1e19", "must be from 1 to 9223372036854775807"),
        ("3.5", "must be a whole number (got 3.5)"),
        ("1.000001", "must be a whole number"),
        ("\"3\"", "must be an integer from 1 to 9223372036854775807"),
        ("null", "must be an integer from 1"),
        ("true", "must be an integer from 1"),
        ("{}", "must be an integer from 1"),
        ("[1]", "must be an integer from 1"),
    ] {
        let body = format!(r#"{{"name": "Rex", "categoryId": {raw}}}"#);
        rejected(
            &body,
            ErrorCode::ValidationFailed,
            &format!("`categoryId` {why}"),
        );
    }
}

/// JSON Schema's `integer` is any number with a whole value, which is what the schema says.
#[test]
fn accepts_category_ids_written_as_whole_floats_or_with_exponents() {
    for (raw, expected) in [
        ("3", 3),
        ("3.0", 3),
        ("1e3", 1000),
        ("1.5e1", 15),
        ("9223372036854775807", i64::MAX),
        // Whole doubles near 2^53 need correctly rounded parsing (serde_json's
        // `float_roundtrip`): the fast parser reads this as ...246.5, a fraction.
        ("2251799813685247.0", 2_251_799_813_685_247),
        ("9007199254740991.0", 9_007_199_254_740_991),
        ("4.503599627370495e15", 4_503_599_627_370_495),
    ] {
        let body = format!(r#"{{"name": "Rex", "categoryId": {raw}}}"#);
        let new_pet = NewPetDto::from_json(body.as_bytes())
            .and_then(NewPetDto::try_into_domain)
            .unwrap_or_else(|err| panic!("{raw}: {}", err.message()));
        assert_eq!(new_pet.category_id().get(), expected, "{raw}");
    }
}

#[test]
fn rejects_statuses_other_than_the_three_values() {
    for raw in [
        "\"SOLD\"",
        "\"Sold\"",
        "\"\"",
        "\"adopted\"",
        "\" sold\"",
        "1",
        "true",
    ] {
        let body = format!(r#"{{"name": "Rex", "categoryId": 1, "status": {raw}}}"#);
        rejected(
            &body,
            ErrorCode::ValidationFailed,
            "`status` must be one of `available`, `pending`, `sold`",
        );
    }
}

#[test]
fn rejects_unknown_fields_including_id_naming_them() {
    rejected(
        r#"{"id": 7, "name": "Rex", "categoryId": 1}"#,
        ErrorCode::ValidationFailed,
        "unknown field `id`",
    );
    rejected(
        r#"{"name": "Rex", "categoryId": 1, "colour": "red", "Name": "x"}"#,
        ErrorCode::ValidationFailed,
        "unknown fields `Name`, `colour`",
    );
    // Field names are case-sensitive, as in the spec.
    rejected(
        r#"{"name": "Rex", "category_id": 1}"#,
        ErrorCode::ValidationFailed,
        "unknown field `category_id`",
    );
}

#[test]
fn reports_every_problem_at_once() {
    let err = parse(r#"{"id": 1, "name": "", "categoryId": "x", "status": "gone"}"#).unwrap_err();
    for field in ["`id`", "`name`", "`categoryId`", "`status`"] {
        assert!(err.message().contains(field), "{}", err.message());
    }
}

#[test]
fn rejects_a_field_given_twice() {
    rejected(
        r#"{"name": "Rex", "categoryId": 1, "name": "Max"}"#,
        ErrorCode::ValidationFailed,
        "field `name` is given more than once",
    );
}

#[test]
fn rejects_bodies_that_are_not_a_json_object_as_malformed() {
    for body in [
        "",
        "  \n",
        "[]",
        "[{\"name\": \"Rex\"}]",
        "\"Rex\"",
        "42",
        "null",
        "true",
    ] {
        rejected(body, ErrorCode::MalformedJson, "request body");
    }
}

#[test]
fn rejects_syntax_errors_as_malformed_with_a_position() {
    for body in [
        "{",
        "{\"name\": \"Rex\",}",
        "{'name': 'Rex'}",
        "name=Rex&categoryId=1",
        "{\"name\": \"Rex\"} trailing",
    ] {
        rejected(body, ErrorCode::MalformedJson, "not valid JSON");
    }
    let err = parse("{\"name\": }").unwrap_err();
    assert!(err.message().contains("line 1"), "{}", err.message());
}

#[test]
fn pet_serializes_in_camel_case_with_exactly_four_fields() {
    let pet = NewPet::new(
        PetName::parse("Rex").unwrap(),
        CategoryId::parse(3).unwrap(),
        None,
    )
    .into_pet(PetId::new(1));
    assert_eq!(
        serde_json::to_value(PetDto::from(pet)).unwrap(),
        serde_json::json!({"id": 1, "name": "Rex", "categoryId": 3, "status": "available"})
    );
}
