//! `Idempotency-Key` in the OpenAPI document: on every POST and PATCH, the optional header parameter,
//! the 409 of a retry while the first request is in flight, the 422 of a key reused for another
//! request, and `Idempotent-Replayed` on what a retry can get back. A modifier, like
//! `CommonResponses`, so a POST added later is documented the same way.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required};
use utoipa::Modify;

pub(crate) struct IdempotentPosts;

const KEY_SCHEMA: &str = "IdempotencyKey";

/// What `IdempotencyKey::parse` accepts, as an ECMA-262 pattern: a bare key (visible ASCII
/// without a comma, not starting with a quote) or a quoted one whose contents unescape to
/// visible ASCII; each at most 255 characters of key.
const KEY_PATTERN: &str = r#"^(?:[!#-+\--~][!-+\--~]{0,254}|"(?:[!#-\[\]-~]|\\["\\]){1,255}")$"#;

/// The statuses a retry may get from the kept response: the operation's success, and its
/// refusal of the request itself (400). 401, 403 and 429 come before the key is looked at, 408,
/// 413 and 415 before the body is read; 422 answers the retry itself; refusals that depend on
/// what is stored (404, 409) and 5xx are never kept.
fn can_be_replayed(status: &str) -> bool {
    status.starts_with('2') || status == "400"
}

fn error_response(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("Error")))
            .build(),
    )
}

impl Modify for IdempotentPosts {
    fn modify(&self, openapi: &mut OpenApi) {
        let parameter = ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "Makes a retry safe (IETF draft-ietf-httpapi-idempotency-key-header): the first \
                 request with a key is carried out and its response kept for 24 hours; a retry \
                 with the same key and the same request (method, path, body) gets that response \
                 again, byte for byte, with `Idempotent-Replayed: true`, and changes nothing. A \
                 Structured Field string (`\"8e03978e-40d5\"`) or the bare value; 1 to 255 \
                 visible ASCII characters; a comma outside quotes separates values, so a key \
                 with a comma is sent quoted. Keys belong to the API key that sent them. A \
                 refusal of the request itself (400) is kept too; refusals that depend on what \
                 is stored (404, 409) and failures of the service (5xx) are not, so their retry \
                 is carried out again.",
            ))
            .schema(Some(Ref::from_schema_name(KEY_SCHEMA)))
            .build();
        // One schema for every operation's header, so a generated client has one key type.
        openapi
            .components
            .get_or_insert_with(Default::default)
            .schemas
            .insert(
                KEY_SCHEMA.to_owned(),
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some(
                        "An idempotency key: 1 to 255 visible ASCII characters, bare (not \
                         starting with `\"`) or as a Structured Field string (in double quotes, \
                         `\\\"` and `\\\\` escaped).",
                    ))
                    .pattern(Some(KEY_PATTERN))
                    .examples([serde_json::json!(
                        "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""
                    )])
                    .into(),
            );
        let replayed = HeaderBuilder::new()
            .description(Some(
                "`true` when this is the response kept for the request's `Idempotency-Key`, \
                 sent again to a retry.",
            ))
            .build();
        // Every write that creates or changes takes a key: POST and PATCH (DELETE is answered
        // 404 the second time, which a retry can tell from success).
        let writes = openapi
            .paths
            .paths
            .values_mut()
            .flat_map(|item| [item.post.as_mut(), item.patch.as_mut()])
            .flatten();
        for post in writes {
            post.parameters
                .get_or_insert_with(Vec::new)
                .push(parameter.clone().into());
            let responses = &mut post.responses.responses;
            let in_flight = "or a request with the same `Idempotency-Key` is still being \
                             processed (`Retry-After`: retry once it has been answered)";
            match responses.get_mut("409") {
                Some(RefOr::T(conflict)) => {
                    conflict.description = format!(
                        "{}; {in_flight}.",
                        conflict.description.trim_end_matches('.')
                    );
                    conflict.headers.insert(
                        "Retry-After".to_owned(),
                        HeaderBuilder::new()
                            .description(Some("Only for a request still in flight: seconds."))
                            .build()
                            .into(),
                    );
                }
                _ => {
                    let conflict = error_response(&format!(
                        "`conflict`: a request {}.",
                        in_flight.trim_start_matches("or a request ")
                    ))
                    .header(
                        "Retry-After",
                        HeaderBuilder::new()
                            .description(Some("Seconds to wait before retrying."))
                            .build(),
                    )
                    .build();
                    responses.insert("409".to_owned(), conflict.into());
                }
            }
            responses.insert(
                "422".to_owned(),
                error_response(
                    "`idempotency_key_reused`: this `Idempotency-Key` was used before for \
                     another request (another method, path or body); nothing was done.",
                )
                .build()
                .into(),
            );
            for (status, response) in responses.iter_mut() {
                if let (RefOr::T(response), true) = (response, can_be_replayed(status)) {
                    response
                        .headers
                        .insert("Idempotent-Replayed".to_owned(), replayed.clone().into());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use petstore_domain::IdempotencyKey;

    use super::KEY_PATTERN;

    /// The document's pattern accepts exactly what the server does, so a generated valid key is
    /// never refused and a refused one is never called valid.
    #[test]
    fn the_pattern_accepts_what_the_server_accepts() {
        let pattern = regex::Regex::new(KEY_PATTERN).expect("the pattern compiles");
        let long = "k".repeat(255);
        let too_long = "k".repeat(256);
        let quoted_long = format!("\"{long}\"");
        let quoted_too_long = format!("\"{too_long}\"");
        for value in [
            "a",
            "order-7f3a",
            "\"order-7f3a\"",
            r#""a\"b\\c""#,
            "a\"b",
            "~!#$%&'()*+-./:;<=>?@[]^_`{|}",
            "\"a,b\"",
            "a,b",
            "a, b",
            "\"a\", \"b\"",
            long.as_str(),
            quoted_long.as_str(),
            "",
            "\"\"",
            "a b",
            "\"a b\"",
            "\"open",
            "\"a\"b",
            r#""a\x""#,
            "clé",
            too_long.as_str(),
            quoted_too_long.as_str(),
        ] {
            assert_eq!(
                pattern.is_match(value),
                IdempotencyKey::parse(value).is_ok(),
                "{value:?}"
            );
        }
    }
}
