//! The headers every response carries so that browsers neither guess content types nor pass
//! the API's URLs on to other sites.

use actix_web::http::header;

/// On every response: browsers must not guess content types or leak our URLs onwards.
pub(crate) const SECURITY_HEADERS: [(header::HeaderName, &str); 2] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "no-referrer"),
];

pub(crate) fn insert_security_headers(headers: &mut header::HeaderMap) {
    for (name, value) in SECURITY_HEADERS {
        if !headers.contains_key(&name) {
            headers.insert(name, header::HeaderValue::from_static(value));
        }
    }
}
