//! Cross-origin requests from browsers, off unless configured (`PETSTORE_CORS_ORIGINS`): a list
//! of origins, or `*` for any (scripts then call without cookies, which this API never uses
//! anyway: keys travel in `Authorization`). Preflights are answered for the API's methods and
//! the headers clients send; the headers scripts need to read are exposed.

use std::str::FromStr;

use actix_cors::Cors;
use actix_web::http::{header, Method};

use crate::observability::request_id::REQUEST_ID;
use crate::security::rate_limit::{RATE_LIMIT, RATE_LIMIT_POLICY};

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

/// The actix-cors middleware for `origins` (unused when they are [`CorsOrigins::Off`]).
pub(crate) fn middleware(origins: &CorsOrigins) -> Cors {
    let cors = Cors::default()
        .allowed_methods([Method::GET, Method::HEAD, Method::POST])
        .allowed_headers([header::AUTHORIZATION, header::CONTENT_TYPE, REQUEST_ID])
        .expose_headers([
            header::LINK,
            header::LOCATION,
            header::RETRY_AFTER,
            REQUEST_ID,
            header::HeaderName::from_static("deprecation"),
            header::HeaderName::from_static("sunset"),
            RATE_LIMIT,
            RATE_LIMIT_POLICY,
        ])
        .max_age(3600);
    match origins {
        CorsOrigins::Off => cors,
        CorsOrigins::Any => cors.allow_any_origin().send_wildcard(),
        CorsOrigins::List(list) => list
            .iter()
            .fold(cors, |cors, origin| cors.allowed_origin(origin)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
