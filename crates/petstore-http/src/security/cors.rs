//! Cross-origin requests from browsers, off unless configured (`PETSTORE_CORS_ORIGINS`): a list
//! of origins, or `*` for any (scripts then call without cookies, which this API never uses
//! anyway: keys travel in `Authorization`). What a cross-origin request may carry and what its
//! script may read are the OpenAPI document's own methods and headers ([`contract`]), so a
//! header the document gains is allowed or exposed with it.
//!
//! A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered here,
//! before any route: 200 with the allowed methods and headers, or 403 `cors_refused` naming the
//! origin, method or header refused. Any other request from an allowed origin is served as
//! usual, with `Access-Control-Allow-Origin` and the exposed headers added; from another origin,
//! without them, so the browser withholds the answer from the script.

mod contract;

pub(crate) use contract::CrossOriginContract;

use std::rc::Rc;
use std::str::FromStr;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{HttpResponse, ResponseError};

use crate::error::{ApiError, ErrorCode};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE_SECS: &str = "3600";

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CorsOrigins {
    /// No cross-origin access (browsers enforce the same-origin policy).
    #[default]
    Off,
    /// Any origin (`*`).
    Any,
    /// These origins exactly, as `scheme://host[:port]`.
    List(Vec<String>),
}

impl FromStr for CorsOrigins {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Self::Off);
        }
        if text == "*" {
            return Ok(Self::Any);
        }
        let origins: Vec<String> = text
            .split(',')
            .map(str::trim)
            .filter(|origin| !origin.is_empty())
            .map(|origin| origin.trim_end_matches('/').to_owned())
            .collect();
        for origin in &origins {
            let Some((scheme, host)) = origin.split_once("://") else {
                return Err(format!(
                    "`{origin}` is not an origin like `https://app.example.com`"
                ));
            };
            if !matches!(scheme, "http" | "https") || host.is_empty() || host.contains('/') {
                return Err(format!(
                    "`{origin}` is not an origin: `http(s)://host[:port]`, no path"
                ));
            }
        }
        Ok(Self::List(origins))
    }
}

impl CorsOrigins {
    pub fn is_enabled(&self) -> bool {
        *self != Self::Off
    }
}

/// The document's lists as the header values the middleware sends, joined once.
#[derive(Debug)]
struct HeaderValues {
    allow_methods: HeaderValue,
    allow_headers: HeaderValue,
    expose_headers: HeaderValue,
}

impl HeaderValues {
    fn of(contract: &CrossOriginContract) -> Self {
        let joined = |names: &mut dyn Iterator<Item = &str>| {
            HeaderValue::from_str(&names.collect::<Vec<_>>().join(", "))
                .expect("method and header names are valid in a header value")
        };
        Self {
            allow_methods: joined(&mut contract.methods.iter().map(Method::as_str)),
            allow_headers: joined(&mut contract.request_headers.iter().map(HeaderName::as_str)),
            expose_headers: joined(&mut contract.response_headers.iter().map(HeaderName::as_str)),
        }
    }
}

/// What the middleware answers for: the configured origins, and the document's lists.
#[derive(Debug)]
pub(crate) struct CrossOrigin {
    origins: CorsOrigins,
    contract: &'static CrossOriginContract,
    values: HeaderValues,
}

impl CrossOrigin {
    /// Answers for `origins` with what `contract` (the served document's) allows and exposes.
    pub(crate) fn new(origins: &CorsOrigins, contract: &'static CrossOriginContract) -> Rc<Self> {
        Rc::new(Self {
            origins: origins.clone(),
            contract,
            values: HeaderValues::of(contract),
        })
    }

    /// What `Access-Control-Allow-Origin` says to a request from `origin`, if it is allowed:
    /// its own spelling, which is what the browser compares, matched without regard to case
    /// (schemes and hosts have none).
    fn allow_origin(&self, origin: &HeaderValue) -> Option<HeaderValue> {
        match &self.origins {
            CorsOrigins::Off => None,
            CorsOrigins::Any => Some(HeaderValue::from_static("*")),
            CorsOrigins::List(list) => list
                .iter()
                .any(|allowed| allowed.as_bytes().eq_ignore_ascii_case(origin.as_bytes()))
                .then(|| origin.clone()),
        }
    }

    /// The answer to a preflight from `origin`: the headers of a 200, or the refusal.
    fn preflight(
        &self,
        origin: &HeaderValue,
        headers: &HeaderMap,
    ) -> Result<HttpResponse, ApiError> {
        let refused = |what: String| ApiError::new(ErrorCode::CorsRefused, what);
        let allow_origin = self.allow_origin(origin).ok_or_else(|| {
            refused(format!(
                "origin `{}` is not allowed to call this API from a browser",
                text(origin)
            ))
        })?;
        let method = headers
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .map(text)
            .unwrap_or_default();
        let values = &self.values;
        if !self
            .contract
            .methods
            .iter()
            .any(|allowed| allowed.as_str() == method)
        {
            return Err(refused(format!(
                "method `{method}` is not allowed in a cross-origin request; allowed: {}",
                text(&values.allow_methods)
            )));
        }
        let requested = headers
            .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .flat_map(|value| {
                text(value)
                    .split(',')
                    .map(|name| name.trim().to_ascii_lowercase())
                    .collect::<Vec<_>>()
            })
            .filter(|name| !name.is_empty());
        for name in requested {
            if !self
                .contract
                .request_headers
                .iter()
                .any(|allowed| allowed.as_str() == name)
            {
                return Err(refused(format!(
                    "header `{name}` is not allowed in a cross-origin request; allowed: {}",
                    text(&values.allow_headers)
                )));
            }
        }
        let mut answer = HttpResponse::Ok();
        answer
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin))
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_METHODS,
                values.allow_methods.clone(),
            ))
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                values.allow_headers.clone(),
            ))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE_SECS));
        let mut answer = answer.finish();
        self.vary(answer.headers_mut());
        Ok(answer)
    }

    /// Adds what a script on an allowed origin needs to read `headers`' response.
    fn expose(&self, allow_origin: Option<HeaderValue>, headers: &mut HeaderMap) {
        if let Some(allow_origin) = allow_origin {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin);
            headers.insert(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                self.values.expose_headers.clone(),
            );
        }
        self.vary(headers);
    }

    /// `Vary: Origin` when the answer depends on the origin (a list of them), so that a cache
    /// does not hand one origin's answer to another.
    fn vary(&self, headers: &mut HeaderMap) {
        if matches!(self.origins, CorsOrigins::List(_)) {
            headers.append(header::VARY, HeaderValue::from_static("origin"));
        }
    }
}

/// A header value as text for a message (bytes that are not UTF-8 replaced).
fn text(value: &HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// The middleware: answers preflights, and adds the CORS headers to the answer of every other
/// request from an allowed origin.
pub(crate) async fn answer_cross_origin(
    cross_origin: Option<Rc<CrossOrigin>>,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(cross_origin) = cross_origin else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    };
    let Some(origin) = req.headers().get(header::ORIGIN).cloned() else {
        return next.call(req).await.map(|mut response| {
            cross_origin.vary(response.headers_mut());
            response.map_into_boxed_body()
        });
    };
    let is_preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if is_preflight {
        let answer = cross_origin
            .preflight(&origin, req.headers())
            .unwrap_or_else(|refused| refused.error_response());
        return Ok(req.into_response(answer));
    }
    let allow_origin = cross_origin.allow_origin(&origin);
    match next.call(req).await {
        Ok(mut response) => {
            cross_origin.expose(allow_origin, response.headers_mut());
            Ok(response.map_into_boxed_body())
        }
        // A middleware's error, rendered further out: it carries the headers itself.
        Err(err) => match (err.as_error::<ApiError>(), allow_origin) {
            (Some(error), Some(allow_origin)) => Err(error
                .clone()
                .with_header_value(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin)
                .with_header_value(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    cross_origin.values.expose_headers.clone(),
                )
                .into()),
            _ => Err(err),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const ORIGIN: &str = "http://localhost:3000";

    fn preflight(
        origins: &str,
        origin: &str,
        method: &str,
        headers: &str,
    ) -> Result<HttpResponse, ApiError> {
        let mut request = HeaderMap::new();
        request.insert(
            header::ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_str(method).unwrap(),
        );
        request.insert(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_str(headers).unwrap(),
        );
        CrossOrigin::new(
            &origins.parse().unwrap(),
            &crate::app::CROSS_ORIGIN_CONTRACT,
        )
        .preflight(&HeaderValue::from_str(origin).unwrap(), &request)
    }

    fn header_of(answer: &HttpResponse, name: HeaderName) -> &str {
        answer.headers().get(name).unwrap().to_str().unwrap()
    }

    /// What a browser asks before it sends a create with a retry key.
    #[test]
    fn a_preflight_for_the_documents_headers_is_answered() {
        let answer = preflight(
            ORIGIN,
            ORIGIN,
            "POST",
            "authorization,content-type,idempotency-key",
        )
        .unwrap();
        assert_eq!(answer.status(), actix_web::http::StatusCode::OK);
        assert_eq!(
            header_of(&answer, header::ACCESS_CONTROL_ALLOW_ORIGIN),
            ORIGIN
        );
        assert_eq!(
            header_of(&answer, header::ACCESS_CONTROL_ALLOW_HEADERS),
            "authorization, content-type, idempotency-key, if-match, if-none-match, \
             traceparent, x-request-id"
        );
        assert_eq!(
            header_of(&answer, header::ACCESS_CONTROL_ALLOW_METHODS),
            "DELETE, GET, HEAD, PATCH, POST"
        );
        assert_eq!(header_of(&answer, header::VARY), "origin");

        let any = preflight("*", "https://a.example", "GET", "X-Request-Id").unwrap();
        assert_eq!(header_of(&any, header::ACCESS_CONTROL_ALLOW_ORIGIN), "*");
    }

    /// A refusal names what it refused: the origin, the method, or the first header.
    #[test]
    fn a_refused_preflight_names_what_it_refused() {
        for (origin, method, headers, named) in [
            (
                "https://evil.example",
                "POST",
                "",
                "origin `https://evil.example`",
            ),
            (ORIGIN, "PUT", "content-type", "method `PUT`"),
            (
                ORIGIN,
                "POST",
                "content-type, X-Foo, x-bar",
                "header `x-foo`",
            ),
        ] {
            let refused = preflight(ORIGIN, origin, method, headers).unwrap_err();
            assert_eq!(refused.code(), ErrorCode::CorsRefused);
            assert!(refused.message().contains(named), "{}", refused.message());
        }
    }

    #[test]
    fn origins_parse_as_off_any_or_a_list() {
        assert_eq!("".parse(), Ok(CorsOrigins::Off));
        assert_eq!("*".parse(), Ok(CorsOrigins::Any));
        assert_eq!(
            "https://a.example, http://localhost:3000/".parse(),
            Ok(CorsOrigins::List(vec![
                "https://a.example".into(),
                "http://localhost:3000".into()
            ]))
        );
        for bad in [
            "a.example",
            "ftp://a.example",
            "https://a.example/app",
            "https://",
        ] {
            assert!(bad.parse::<CorsOrigins>().is_err(), "{bad}");
        }
    }
}
