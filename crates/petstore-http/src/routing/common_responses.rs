//! What every operation may answer beyond its own statuses, for the OpenAPI document (of every
//! method: [`every_operation`]): each
//! resource's part lists [`CommonResponses`] first among its modifiers, so that the resource's
//! own modifiers (getPet's deprecation headers, the orders' stability header) see these
//! responses too. `openapi/tests.rs` checks that every operation has them.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr};
use utoipa::Modify;

/// Every operation of a path, whatever its method: what the middleware adds to a response (the
/// request id, rate limits) it adds to all of them, so the document must say so for all of them,
/// a method added later included.
pub(crate) fn every_operation(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        item.get.as_mut(),
        item.put.as_mut(),
        item.post.as_mut(),
        item.delete.as_mut(),
        item.options.as_mut(),
        item.head.as_mut(),
        item.patch.as_mut(),
        item.trace.as_mut(),
        item.query.as_mut(),
    ]
    .into_iter()
    .flatten()
}

/// What every operation may answer beyond its own statuses, from the parts every request passes
/// through rather than from its handler: 429 when rate limits are on or the client's address
/// holds its share of connections, 503 when the instance holds its bound of connections with
/// none idle, 500 for an unexpected failure (a panic included), and for an operation that reads
/// a body 408 (the body deadline) and 413 (the size limit); the rate-limit headers on every
/// response to a key, and `X-Request-Id` on every response. An operation that documents one of these statuses itself
/// keeps its own wording.
pub(crate) struct CommonResponses;

/// Why any operation may answer 503, besides its own reasons.
const AT_THE_CONNECTION_BOUND: &str = "Also when the instance serves as many connections as it \
    may and none is idle (this connection is closed after the answer).";

/// An `Error` response with `description`.
fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Error")))
                .build(),
        )
        .build()
}

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        let string_header =
            |description: &str| HeaderBuilder::new().description(Some(description)).build();
        let request_id = string_header(
            "The request's id: the client's `X-Request-Id` when it sent a sane one (1 to 128 \
             printable ASCII characters), else a UUIDv7. Every log line of the request carries it.",
        );
        let policy = string_header(
            "Only when per-key rate limits are on (IETF httpapi rate-limit headers draft): \
             `\"per-key\";q=BURST;w=SECONDS`, the bucket of this key and how long it takes to refill.",
        );
        let state = string_header(
            "Only when per-key rate limits are on: `\"per-key\";r=REMAINING;t=SECONDS`, requests \
             left now and seconds until the next is allowed.",
        );
        let challenge = string_header(
            "`Bearer realm=\"petstore\"`, plus `error=\"invalid_token\"` when a key was sent but \
             refused.",
        );
        let retry_after = string_header("Seconds to wait before retrying.");
        for item in openapi.paths.paths.values_mut() {
            for operation in every_operation(item) {
                let too_many = ResponseBuilder::new()
                    .description(
                        "`rate_limited`: this API key has used up its rate limit (per instance), \
                         or this client address already holds as many connections as one \
                         address may (this connection is closed after the answer); retry after \
                         `Retry-After` seconds.",
                    )
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Error")))
                            .build(),
                    )
                    .header(
                        "Retry-After",
                        HeaderBuilder::new()
                            .description(Some("Seconds until the key may call again."))
                            .build(),
                    )
                    .build();
                let responses = &mut operation.responses.responses;
                responses.insert("429".to_owned(), too_many.into());
                match responses.get_mut("503") {
                    Some(RefOr::T(unavailable)) => {
                        unavailable.description.push(' ');
                        unavailable.description.push_str(AT_THE_CONNECTION_BOUND);
                    }
                    Some(RefOr::Ref(_)) => {}
                    None => {
                        let description =
                            format!("`service_unavailable`: {AT_THE_CONNECTION_BOUND}");
                        responses.insert("503".to_owned(), error_response(&description).into());
                    }
                }
                responses.entry("500".to_owned()).or_insert_with(|| {
                    error_response(
                        "`internal_error`: an unexpected failure; details are only logged.",
                    )
                    .into()
                });
                if operation.request_body.is_some() {
                    let responses = &mut operation.responses.responses;
                    responses.entry("408".to_owned()).or_insert_with(|| {
                        error_response(
                            "`request_timeout`: the body did not arrive within the body \
                             deadline; the connection is closed.",
                        )
                        .into()
                    });
                    responses.entry("413".to_owned()).or_insert_with(|| {
                        error_response("`payload_too_large`: the body is over 64 KiB.").into()
                    });
                }
                for (status, response) in operation.responses.responses.iter_mut() {
                    let RefOr::T(response) = response else {
                        continue;
                    };
                    response
                        .headers
                        .insert("X-Request-Id".to_owned(), request_id.clone().into());
                    // Every 401 comes from the key check and every 503 from `ApiError::unavailable`,
                    // whichever operation answers it; an operation's own wording is kept.
                    let always = match status.as_str() {
                        "401" => Some(("WWW-Authenticate", &challenge)),
                        "503" => Some(("Retry-After", &retry_after)),
                        _ => None,
                    };
                    if let Some((name, header)) = always {
                        response
                            .headers
                            .entry(name.to_owned())
                            .or_insert_with(|| header.clone().into());
                    }
                    if status.starts_with('2') || status == "429" {
                        response
                            .headers
                            .insert("RateLimit-Policy".to_owned(), policy.clone().into());
                        response
                            .headers
                            .insert("RateLimit".to_owned(), state.clone().into());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
    use utoipa::openapi::{OpenApiBuilder, PathsBuilder};

    use super::*;

    #[test]
    fn every_method_gets_the_common_responses() {
        let ok = || {
            OperationBuilder::new()
                .response("200", ResponseBuilder::new().description("ok").build())
                .build()
        };
        let mut item = PathItem::new(HttpMethod::Put, ok());
        item.delete = Some(ok());
        let mut openapi = OpenApiBuilder::new()
            .paths(PathsBuilder::new().path("/things", item))
            .build();
        CommonResponses.modify(&mut openapi);
        let item = &openapi.paths.paths["/things"];
        for operation in [item.put.as_ref(), item.delete.as_ref()] {
            let responses = &operation.expect("the operation").responses.responses;
            assert!(responses.contains_key("429"));
            assert!(responses.contains_key("500"));
            assert!(
                !responses.contains_key("413"),
                "no body, no body limit to document"
            );
            let RefOr::T(ok) = &responses["200"] else {
                panic!("an inline response");
            };
            assert!(ok.headers.contains_key("X-Request-Id"));
            assert!(ok.headers.contains_key("RateLimit"));
        }
    }

    #[test]
    fn every_operation_may_answer_503_at_the_connection_bound_after_its_own_reasons() {
        let error = |description| ResponseBuilder::new().description(description).build();
        let own = OperationBuilder::new()
            .response(
                "503",
                error("`service_unavailable`: storage is unreachable."),
            )
            .build();
        let mut item = PathItem::new(HttpMethod::Get, own);
        item.delete = Some(OperationBuilder::new().build());
        let mut openapi = OpenApiBuilder::new()
            .paths(PathsBuilder::new().path("/things", item))
            .build();
        CommonResponses.modify(&mut openapi);
        let item = &openapi.paths.paths["/things"];
        for (operation, starts) in [
            (
                item.get.as_ref(),
                "`service_unavailable`: storage is unreachable. Also when",
            ),
            (item.delete.as_ref(), "`service_unavailable`: Also when"),
        ] {
            let responses = &operation.expect("the operation").responses.responses;
            let RefOr::T(unavailable) = &responses["503"] else {
                panic!("an inline response");
            };
            assert!(
                unavailable.description.starts_with(starts),
                "{}",
                unavailable.description
            );
            assert!(unavailable.description.contains("none is idle"));
            assert!(unavailable.headers.contains_key("Retry-After"));
        }
    }

    #[test]
    fn every_401_has_its_challenge_and_every_503_its_retry_after() {
        let error = |description| ResponseBuilder::new().description(description).build();
        let operation = OperationBuilder::new()
            .response("401", error("unauthorized"))
            .response("503", error("unavailable"))
            .build();
        let mut openapi = OpenApiBuilder::new()
            .paths(PathsBuilder::new().path("/things", PathItem::new(HttpMethod::Get, operation)))
            .build();
        CommonResponses.modify(&mut openapi);
        let responses = &openapi.paths.paths["/things"]
            .get
            .as_ref()
            .expect("the operation")
            .responses
            .responses;
        for (status, header) in [("401", "WWW-Authenticate"), ("503", "Retry-After")] {
            let RefOr::T(response) = &responses[status] else {
                panic!("an inline response");
            };
            assert!(response.headers.contains_key(header), "{status}: {header}");
        }
    }
}
