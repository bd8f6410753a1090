//! What a cross-origin request may carry and what its script may read, read from the OpenAPI
//! document itself, so that a header or method the document gains is allowed and exposed
//! without a list of its own to forget:
//!
//! - **methods**: every operation's method, and HEAD wherever GET is (the router serves HEAD
//!   there);
//! - **request headers**: every `in: header` parameter, `Authorization` for an HTTP, OAuth 2 or
//!   OpenID Connect security scheme (an API key scheme in a header: its header), `Content-Type`
//!   when an operation takes a body, and the headers any request may carry that the middleware
//!   reads rather than an operation ([`EVERY_REQUEST`]);
//! - **response headers**: every header of every response.
//!
//! `$ref`s are followed within the document.

use std::collections::BTreeSet;

use actix_web::http::header::{self, HeaderName};
use actix_web::http::Method;
use serde_json::Value;

use crate::observability::request_id::REQUEST_ID;
use crate::observability::trace_context::TRACEPARENT;

/// Headers any request may carry, read around every operation (the request id, the caller's
/// trace) and so not parameters of any one operation in the document.
const EVERY_REQUEST: [HeaderName; 2] = [REQUEST_ID, HeaderName::from_static(TRACEPARENT)];

/// The methods and headers of the document, each list sorted and without repeats; header names
/// are lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CrossOriginContract {
    pub(crate) methods: Vec<Method>,
    pub(crate) request_headers: Vec<HeaderName>,
    pub(crate) response_headers: Vec<HeaderName>,
}

impl CrossOriginContract {
    /// Reads `document` (an OpenAPI 3.x document as JSON).
    pub(crate) fn of(document: &Value) -> Self {
        let document = Document(document);
        let mut methods = BTreeSet::new();
        let mut request = BTreeSet::from(EVERY_REQUEST.map(|name| name.to_string()));
        let mut response = BTreeSet::new();
        for (_, item) in document.entries(document.0, "paths") {
            request.extend(document.header_parameters(&item));
            for (key, operation) in document.entries(&item, "") {
                let Some(method) = operation_method(&key) else {
                    continue;
                };
                if method == Method::GET {
                    methods.insert(Method::HEAD.to_string());
                }
                methods.insert(method.to_string());
                request.extend(document.header_parameters(&operation));
                if operation.get("requestBody").is_some() {
                    request.insert(header::CONTENT_TYPE.to_string());
                }
                for (_, answer) in document.entries(&operation, "responses") {
                    for (name, _) in document.entries(&answer, "headers") {
                        response.insert(name.to_ascii_lowercase());
                    }
                }
            }
        }
        for (_, scheme) in document.entries(&document.0["components"], "securitySchemes") {
            match (scheme["type"].as_str(), scheme["in"].as_str()) {
                (Some("http" | "oauth2" | "openIdConnect"), _) => {
                    request.insert(header::AUTHORIZATION.to_string());
                }
                (Some("apiKey"), Some("header")) => {
                    request.extend(scheme["name"].as_str().map(str::to_ascii_lowercase));
                }
                _ => {}
            }
        }
        Self {
            methods: methods
                .iter()
                .filter_map(|method| method.parse().ok())
                .collect(),
            request_headers: header_names(request),
            response_headers: header_names(response),
        }
    }
}

/// An OpenAPI document as JSON, read with its `$ref`s followed.
struct Document<'a>(&'a Value);

impl Document<'_> {
    /// `value` itself, or what its `$ref` points to (nothing when it points nowhere).
    fn resolve(&self, value: &Value) -> Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => self
                .0
                .pointer(reference.trim_start_matches('#'))
                .cloned()
                .unwrap_or(Value::Null),
            None => value.clone(),
        }
    }

    /// The members of the object at `key` of `value` (of `value` itself for `""`), resolved.
    fn entries(&self, value: &Value, key: &str) -> Vec<(String, Value)> {
        let object = if key.is_empty() {
            value.as_object()
        } else {
            value.get(key).and_then(Value::as_object)
        };
        object
            .into_iter()
            .flatten()
            .map(|(name, value)| (name.clone(), self.resolve(value)))
            .collect()
    }

    /// The lowercase names of the `in: header` parameters of a path item or operation.
    fn header_parameters(&self, owner: &Value) -> Vec<String> {
        owner
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|parameter| self.resolve(parameter))
            .filter(|parameter| parameter["in"] == "header")
            .filter_map(|parameter| parameter["name"].as_str().map(str::to_ascii_lowercase))
            .collect()
    }
}

/// The method a path item's `key` names, if it names one (OpenAPI's lowercase method keys).
fn operation_method(key: &str) -> Option<Method> {
    Some(match key {
        "get" => Method::GET,
        "put" => Method::PUT,
        "post" => Method::POST,
        "delete" => Method::DELETE,
        "options" => Method::OPTIONS,
        "head" => Method::HEAD,
        "patch" => Method::PATCH,
        "trace" => Method::TRACE,
        _ => return None,
    })
}

/// The valid header names among `names`, in order. A name that is not one (the document's
/// lint keeps them valid) could not be sent or read anyway.
fn header_names(names: BTreeSet<String>) -> Vec<HeaderName> {
    names
        .into_iter()
        .filter_map(|name| HeaderName::try_from(name).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::security::SecurityScheme;
    use utoipa::openapi::RefOr;

    use super::*;
    use crate::openapi;
    use crate::routing::servers::ApiServers;

    fn names(list: &[HeaderName]) -> Vec<&str> {
        list.iter().map(HeaderName::as_str).collect()
    }

    /// The lists are what the served document defines, read here from its typed form (not the
    /// JSON the contract reads): every header parameter and the security scheme's header are
    /// allowed, every header of every response is exposed, and nothing else but the request id
    /// and trace headers any request may carry.
    #[test]
    fn the_lists_are_what_the_served_document_defines() {
        let document = openapi::document(&ApiServers::default());
        let mut methods = BTreeSet::new();
        let mut request: BTreeSet<String> = [REQUEST_ID, HeaderName::from_static(TRACEPARENT)]
            .iter()
            .map(ToString::to_string)
            .collect();
        let schemes = &document.components.as_ref().unwrap().security_schemes;
        if schemes
            .values()
            .any(|scheme| matches!(scheme, RefOr::T(SecurityScheme::Http(_))))
        {
            request.insert("authorization".to_owned());
        }
        let mut response = BTreeSet::new();
        for item in document.paths.paths.values() {
            for (method, operation) in [
                ("GET", &item.get),
                ("HEAD", &item.get),
                ("POST", &item.post),
                ("PUT", &item.put),
                ("DELETE", &item.delete),
                ("PATCH", &item.patch),
            ] {
                let Some(operation) = operation else {
                    continue;
                };
                methods.insert(method.to_owned());
                for parameter in operation.parameters.iter().flatten() {
                    let RefOr::T(parameter) = parameter else {
                        panic!("the document's parameters are inline");
                    };
                    if matches!(parameter.parameter_in, ParameterIn::Header) {
                        request.insert(parameter.name.to_ascii_lowercase());
                    }
                }
                if operation.request_body.is_some() {
                    request.insert("content-type".to_owned());
                }
                for answer in operation.responses.responses.values() {
                    let RefOr::T(answer) = answer else {
                        panic!("the document's responses are inline");
                    };
                    response.extend(answer.headers.keys().map(|name| name.to_ascii_lowercase()));
                }
            }
        }
        let contract = &*crate::app::CROSS_ORIGIN_CONTRACT;
        let methods_allowed: BTreeSet<String> =
            contract.methods.iter().map(ToString::to_string).collect();
        assert_eq!(methods_allowed, methods);
        assert_eq!(
            names(&contract.request_headers),
            request.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert_eq!(
            names(&contract.response_headers),
            response.iter().map(String::as_str).collect::<Vec<_>>()
        );
        // What browsers need today, pinned: the retry key may be sent, its replay read; a
        // page's tag may be read and sent back to revalidate it.
        assert!(names(&contract.request_headers).contains(&"idempotency-key"));
        assert!(names(&contract.response_headers).contains(&"idempotent-replayed"));
        assert!(names(&contract.request_headers).contains(&"if-none-match"));
        assert!(names(&contract.request_headers).contains(&"if-match"));
        assert!(names(&contract.response_headers).contains(&"etag"));
        assert_eq!(names(&contract.request_headers).len(), 7, "{contract:?}");
    }

    /// A header or method a document gains is in the lists, wherever the document defines it:
    /// on a path item or an operation, inline or behind a `$ref`.
    #[test]
    fn whatever_a_document_gains_is_allowed_and_exposed() {
        let document = json!({
            "paths": {
                "/things": {
                    "parameters": [{"$ref": "#/components/parameters/Tenant"}],
                    "put": {
                        "parameters": [
                            {"name": "If-Match", "in": "header"},
                            {"name": "q", "in": "query"}
                        ],
                        "requestBody": {"content": {}},
                        "responses": {
                            "200": {"$ref": "#/components/responses/Ok"},
                            "412": {"headers": {"X-Current-Version": {}}}
                        }
                    },
                    "summary": "not an operation"
                }
            },
            "components": {
                "parameters": {"Tenant": {"name": "X-Tenant", "in": "header"}},
                "responses": {"Ok": {"headers": {"ETag": {}}}},
                "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}
            }
        });
        let contract = CrossOriginContract::of(&document);
        assert_eq!(contract.methods, [Method::PUT]);
        assert_eq!(
            names(&contract.request_headers),
            [
                "content-type",
                "if-match",
                "traceparent",
                "x-api-key",
                "x-request-id",
                "x-tenant"
            ]
        );
        assert_eq!(
            names(&contract.response_headers),
            ["etag", "x-current-version"]
        );
    }
}
