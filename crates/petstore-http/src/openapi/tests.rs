//! Tests of the OpenAPI document: the facts clients rely on, and that its constraints are the
//! ones the code applies (the name rule stated, the field list against the
//! parser's, the bounds against the domain's constants).

#![allow(clippy::unwrap_used)]

use petstore_application::deprecation::get_pet_sunset;
use petstore_domain::{PageLimit, PetName, PetStatus};
use serde_json::{json, Value};
use strum::IntoEnumIterator as _;

use super::*;
use crate::error::ErrorCode;
use crate::pets::{DETAIL_FIELDS, NEW_PET_FIELDS};
use crate::routing::servers::{ApiServers, ServerUrl};

fn configured() -> ApiServers {
    ApiServers::new(
        ServerUrl::parse("https://petstore.example.com").unwrap(),
        Some(ServerUrl::parse("https://staging.petstore.example.com/v1").unwrap()),
    )
}

fn doc() -> Value {
    serde_json::from_str(&document_json(&configured())).unwrap()
}

/// Every operation as `(path, method, operation)`.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            found.push((path.clone(), method.clone(), operation.clone()));
        }
    }
    found
}

fn operation(doc: &Value, id: &str) -> Value {
    operations(doc)
        .into_iter()
        .find(|(_, _, op)| op["operationId"] == id)
        .unwrap_or_else(|| panic!("no operation {id}"))
        .2
}

fn statuses(operation: &Value) -> Vec<String> {
    operation["responses"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn is_openapi_3_1_version_1_0_0_with_production_then_staging() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "petstore");
    assert_eq!(doc["info"]["version"], "1.0.0");
    assert_eq!(
        doc["servers"],
        json!([
            {"url": "https://petstore.example.com/v1", "description": "production"},
            {"url": "https://staging.petstore.example.com/v1", "description": "staging"},
        ])
    );
}

/// The document is all its readers get: its description says what every call needs, and sends
/// them to no file of this repository and to no made-up contact.
#[test]
fn the_description_says_what_every_call_needs_without_pointing_elsewhere() {
    let doc = doc();
    assert!(doc["info"].get("contact").is_none(), "{}", doc["info"]);
    let description = doc["info"]["description"].as_str().unwrap();
    for needed in [
        "Authorization: Bearer <key>",
        "`Error`",
        "rel=\"next\"",
        "`Sunset`",
        "`Idempotency-Key`",
        "`Idempotent-Replayed: true`",
        "`Retry-After`",
        "`X-Request-Id`",
    ] {
        assert!(description.contains(needed), "{needed}: {description}");
    }
    for elsewhere in [".md", "docs/", "example.com"] {
        assert!(
            !description.contains(elsewhere),
            "{elsewhere}: {description}"
        );
    }
}

#[test]
fn without_configuration_the_server_is_the_relative_base_path() {
    let doc: Value = serde_json::from_str(&document_json(&ApiServers::default())).unwrap();
    assert_eq!(
        doc["servers"],
        json!([{"url": "/v1", "description": "this server"}])
    );
}

/// Which operations the document has, with their methods, paths and scopes, the route table
/// says (`app/route_table_tests.rs`); here, that their paths are relative to the servers.
#[test]
fn every_path_is_relative_to_the_v1_servers() {
    let operations = operations(&doc());
    assert!(!operations.is_empty());
    for (path, method, _) in operations {
        assert!(path.starts_with('/'), "{method} {path}");
        assert!(!path.starts_with("/v1/"), "{method} {path}");
    }
}

#[test]
fn every_operation_needs_the_bearer_key_and_has_one_of_the_tags() {
    let doc = doc();
    assert_eq!(
        doc["components"]["securitySchemes"][BEARER_AUTH],
        json!({
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": doc["components"]["securitySchemes"][BEARER_AUTH]["description"],
        })
    );
    let tags: Vec<&Value> = doc["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| &tag["name"])
        .collect();
    for (path, method, op) in operations(&doc) {
        // One scope, which `app/route_table_tests.rs` checks against the route table.
        let scopes = &op["security"][0][BEARER_AUTH];
        assert_eq!(scopes.as_array().map(Vec::len), Some(1), "{method} {path}");
        assert_eq!(
            op["security"],
            json!([{BEARER_AUTH: scopes}]),
            "{method} {path}"
        );
        let tag = &op["tags"][0];
        assert!(tags.contains(&tag), "{method} {path}: {tag}");
        assert_eq!(
            op["tags"].as_array().map(Vec::len),
            Some(1),
            "{method} {path}"
        );
        let stability = if tag == "store" {
            json!("experimental")
        } else {
            Value::Null
        };
        assert_eq!(op["x-stability"], stability, "{method} {path}");
        // The responses every operation shares, and the headers its resource puts on every
        // response, on those too.
        assert!(
            !op["responses"]["429"]["headers"]["Retry-After"].is_null(),
            "{method} {path}"
        );
        for (code, response) in op["responses"].as_object().unwrap() {
            assert!(
                !response["headers"]["X-Request-Id"].is_null(),
                "{method} {path} {code}"
            );
            if tag == "store" {
                assert!(
                    !response["headers"]["X-API-Stability"].is_null(),
                    "{method} {path} {code}"
                );
            }
        }
    }
    assert_eq!(doc["tags"][0]["name"], "pets");
    assert_eq!(doc["tags"][1]["name"], "store");
}

#[test]
fn lists_every_status_each_operation_returns_with_the_error_schema() {
    let doc = doc();
    let expected = [
        (
            "listPets",
            &["200", "304", "400", "401", "429", "500", "503"][..],
        ),
        (
            "createPet",
            &[
                "201", "400", "401", "403", "408", "409", "413", "415", "422", "429", "500", "503",
            ][..],
        ),
        (
            "getPet",
            &[
                "200", "304", "400", "401", "404", "410", "429", "500", "503",
            ][..],
        ),
        (
            "updatePet",
            &[
                "200", "400", "401", "403", "404", "408", "409", "412", "413", "415", "422", "428",
                "429", "500", "503",
            ][..],
        ),
        (
            "deletePet",
            &[
                "204", "400", "401", "403", "404", "409", "412", "428", "429", "500", "503",
            ][..],
        ),
        (
            "getInventory",
            &["200", "400", "401", "429", "500", "503"][..],
        ),
    ];
    for (id, codes) in expected {
        let op = operation(&doc, id);
        assert_eq!(statuses(&op), codes, "{id}");
        for code in codes.iter().filter(|code| code.as_bytes()[0] >= b'4') {
            assert_eq!(
                op["responses"][code]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Error",
                "{id} {code}"
            );
        }
        let header = |code: &str, name: &str| !op["responses"][code]["headers"][name].is_null();
        assert!(header("401", "WWW-Authenticate"), "{id}");
        assert!(header("503", "Retry-After"), "{id}");
    }
    let list = operation(&doc, "listPets");
    assert!(!list["responses"]["200"]["headers"]["Link"].is_null());
    for code in ["200", "304"] {
        assert!(
            !list["responses"][code]["headers"]["ETag"].is_null(),
            "{code}"
        );
    }
    let create = operation(&doc, "createPet");
    assert!(!create["responses"]["201"]["headers"]["Location"].is_null());
}

/// Every POST and PATCH takes `Idempotency-Key` and documents what a retry can get: the
/// in-flight 409, the reused-key 422, and `Idempotent-Replayed` on the responses it may be
/// replayed.
#[test]
fn every_post_documents_its_idempotency_key() {
    let doc = doc();
    let mut keyed = Vec::new();
    for (path, method, op) in operations(&doc) {
        if method != "post" && method != "patch" {
            assert!(
                op["parameters"]
                    .as_array()
                    .is_none_or(|params| params.iter().all(|p| p["name"] != "Idempotency-Key")),
                "{method} {path}"
            );
            continue;
        }
        keyed.push(op["operationId"].as_str().unwrap_or_default().to_owned());
        let parameter = op["parameters"]
            .as_array()
            .and_then(|params| params.iter().find(|p| p["name"] == "Idempotency-Key"))
            .unwrap_or_else(|| panic!("{path}: no Idempotency-Key"));
        assert_eq!(parameter["in"], "header", "{path}");
        assert_eq!(parameter["required"], false, "{path}");
        let responses = &op["responses"];
        assert!(
            responses["409"]["description"]
                .as_str()
                .unwrap()
                .contains("Idempotency-Key"),
            "{path}"
        );
        assert!(
            !responses["409"]["headers"]["Retry-After"].is_null(),
            "{path}"
        );
        assert!(
            responses["422"]["description"]
                .as_str()
                .unwrap()
                .contains("idempotency_key_reused"),
            "{path}"
        );
        for (code, response) in responses.as_object().unwrap() {
            // Refusals that depend on what is stored (404, 409) are not kept for the retry.
            let replayable = code.starts_with('2') || code == "400";
            assert_eq!(
                !response["headers"]["Idempotent-Replayed"].is_null(),
                replayable,
                "{path} {code}"
            );
        }
    }
    // The document was read: a POST and a PATCH of the pets are among them.
    for id in ["createPet", "updatePet"] {
        assert!(keyed.iter().any(|done| done == id), "{keyed:?}");
    }
}

#[test]
fn get_pet_is_deprecated_with_its_sunset_replacement_and_headers_on_every_response() {
    let doc = doc();
    let op = operation(&doc, "getPet");
    assert_eq!(op["deprecated"], true);
    let description = op["description"].as_str().unwrap();
    assert!(
        description.contains(&httpdate::fmt_http_date(get_pet_sunset())),
        "{description}"
    );
    assert!(
        description.contains("`GET /pets?id={petId}`"),
        "{description}"
    );
    for (code, response) in op["responses"].as_object().unwrap() {
        for name in ["Deprecation", "Sunset", "Link"] {
            assert!(!response["headers"][name].is_null(), "{code} lacks {name}");
        }
    }
    for id in ["listPets", "createPet"] {
        assert!(operation(&doc, id)["deprecated"].is_null(), "{id}");
    }
}

/// `NewPet.name` states the domain's rule for human-entered names in words, and no `pattern`:
/// written out, the rule is thousands of ranges above the Basic Multilingual Plane, which the
/// OpenAPI linters (ECMA-262 without the `u` flag) refuse. `Pet.name` states none either: names
/// stored before the rule are served as stored.
#[test]
fn the_name_rule_is_stated_in_words() {
    let doc = doc();
    let stored = &doc["components"]["schemas"]["Pet"]["properties"]["name"];
    assert!(stored["pattern"].is_null(), "{stored}");
    let name = &doc["components"]["schemas"]["NewPet"]["properties"]["name"];
    assert!(name["pattern"].is_null(), "{name}");
    let description = name["description"].as_str().unwrap();
    for stated in [
        "Default_Ignorable_Code_Point",
        "Bidi_Control",
        "U+2800",
        "Cc",
    ] {
        assert!(description.contains(stated), "{description}");
    }
}

#[test]
fn schemas_carry_the_rules_the_code_applies() {
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    for name in ["Pet", "NewPet", "PetStatus", "Pets", "Error"] {
        assert!(!schemas[name].is_null(), "no schema {name}");
    }

    let statuses: Vec<_> = PetStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(schemas["PetStatus"]["enum"], json!(statuses));
    // An open set: a string with the known codes listed, never a closed `enum` that generated
    // clients would refuse a new code with.
    let codes: Vec<_> = ErrorCode::iter().map(ErrorCode::as_str).collect();
    let code = &schemas["Error"]["properties"]["code"];
    assert_eq!(code["type"], "string", "{code}");
    assert!(
        code.get("enum").is_none() && code.get("$ref").is_none(),
        "{code}"
    );
    assert_eq!(code["examples"], json!(codes));
    assert_eq!(code["x-extensible-enum"], json!(codes));
    for known in &codes {
        assert!(
            code["description"].as_str().unwrap().contains(known),
            "{known}"
        );
    }

    let new_pet = &schemas["NewPet"];
    let mut fields: Vec<_> = new_pet["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut allowed: Vec<String> = NEW_PET_FIELDS
        .iter()
        .chain(&DETAIL_FIELDS)
        .map(|field| (*field).to_owned())
        .collect();
    fields.sort();
    allowed.sort();
    assert_eq!(fields, allowed);
    assert_eq!(new_pet["additionalProperties"], false);
    assert_eq!(new_pet["required"], json!(["name", "categoryId"]));
    let null_allowed = new_pet["properties"]["status"]["oneOf"]
        .as_array()
        .unwrap()
        .contains(&json!({"type": "null"}));
    assert!(null_allowed, "status accepts null");

    for schema in [&schemas["Pet"], new_pet] {
        let name = &schema["properties"]["name"];
        assert_eq!(name["minLength"], 1);
        assert_eq!(name["maxLength"], PetName::MAX_CHARS);
        let category = &schema["properties"]["categoryId"];
        assert_eq!(
            (category["format"].as_str(), category["minimum"].as_i64()),
            (Some("int64"), Some(1))
        );
    }
    assert_eq!(schemas["Pet"]["properties"]["id"]["format"], "int64");
    assert_eq!(
        schemas["Pet"]["required"],
        json!(["id", "name", "categoryId", "status"])
    );
    assert_eq!(schemas["Pets"]["type"], "array");
    assert_eq!(schemas["Pets"]["items"]["$ref"], "#/components/schemas/Pet");
    assert_eq!(
        schemas["Error"]["required"],
        json!(["code", "message", "status"])
    );
}

#[test]
fn list_parameters_carry_the_limit_bounds_and_the_cursor() {
    let doc = doc();
    let params = operation(&doc, "listPets")["parameters"].clone();
    let param = |name: &str| {
        params
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no parameter {name}"))
            .clone()
    };
    let limit = param("limit")["schema"].clone();
    assert_eq!(limit["minimum"], PageLimit::MIN);
    assert_eq!(limit["maximum"], PageLimit::MAX);
    assert_eq!(limit["default"], PageLimit::DEFAULT.get());
    assert_eq!(
        param("status")["schema"]["$ref"],
        "#/components/schemas/PetStatus"
    );
    let cursor = param("cursor");
    assert_eq!(cursor["in"], "query");
    assert!(cursor["description"]
        .as_str()
        .unwrap()
        .contains("rel=\"next\""));
    for name in ["limit", "status", "cursor"] {
        assert_eq!(param(name)["required"], false, "{name}");
    }
    let pet_id = &operation(&doc, "getPet")["parameters"][0];
    assert_eq!(
        (pet_id["name"].as_str(), pet_id["in"].as_str()),
        (Some("petId"), Some("path"))
    );
    assert_eq!(pet_id["schema"]["format"], "int64");
}

/// What a client developer reads first: every operation has a description, every schema an
/// example (Spectral's `oas3-valid-schema-example`, in `make lint`, checks each against its
/// schema), and every operation states the statuses the parts every request passes through can
/// answer (429, 500; 408 and 413 where a body is read), from one place (`CommonResponses`).
#[test]
fn every_operation_is_described_and_every_schema_has_an_example() {
    let doc = doc();
    for (_, _, operation) in operations(&doc) {
        let id = operation["operationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            operation["description"]
                .as_str()
                .is_some_and(|text| text.len() > 40),
            "{id} has no description"
        );
        let responses = operation["responses"].as_object().expect("responses");
        for status in ["429", "500"] {
            assert!(responses.contains_key(status), "{id} omits {status}");
        }
        if !operation["requestBody"].is_null() {
            for status in ["408", "413"] {
                assert!(responses.contains_key(status), "{id} omits {status}");
            }
        }
    }
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for (name, schema) in schemas {
        assert!(
            schema.get("examples").is_some() || schema.get("example").is_some(),
            "the {name} schema has no example"
        );
    }
}
