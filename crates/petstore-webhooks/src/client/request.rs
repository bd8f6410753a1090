//! What an attempt sends and how its answer's head reads: the `POST` with exactly the headers
//! Standard Webhooks needs, and the outcome a status stands for.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST, RETRY_AFTER, USER_AGENT};
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::Full;
use petstore_application::webhooks::{Outgoing, SendOutcome};
use petstore_domain::{AttemptError, WebhookUrl};

use crate::signature::signature_header;

const USER_AGENT_VALUE: &str = concat!("petstore-webhooks/", env!("CARGO_PKG_VERSION"));

/// The attempt's request; `None` when it cannot be made (no secret signs, or the URL's path is
/// not one a request line can carry).
pub(super) fn post(outgoing: Outgoing) -> Option<Request<Full<Bytes>>> {
    let signature = signature_header(
        &outgoing.secrets,
        outgoing.webhook_id.as_str(),
        outgoing.timestamp_s,
        &outgoing.body,
    )?;
    Request::post(outgoing.url.path_and_query())
        .header(HOST, authority(&outgoing.url))
        .header(CONTENT_TYPE, "application/json")
        .header(USER_AGENT, USER_AGENT_VALUE)
        .header("webhook-id", outgoing.webhook_id.as_str())
        .header("webhook-timestamp", outgoing.timestamp_s.to_string())
        .header("webhook-signature", signature)
        .body(Full::new(Bytes::from(outgoing.body)))
        .ok()
}

/// The `Host` header: the URL's host, and its port unless it is the scheme's default.
fn authority(url: &WebhookUrl) -> String {
    let default_port = if url.is_https() { 443 } else { 80 };
    if url.port() == default_port {
        url.host().to_string()
    } else {
        format!("{}:{}", url.host(), url.port())
    }
}

/// What an answer's head means for the attempt: a 2xx succeeds, a 3xx is a redirect (never
/// followed), anything else a failed status; a 429 or 503 may say when to come back.
pub(super) fn outcome_of<B>(response: &Response<B>, latency_ms: u32) -> SendOutcome {
    let status = response.status();
    let error = if status.is_success() {
        None
    } else if status.is_redirection() {
        Some(AttemptError::Redirect)
    } else {
        Some(AttemptError::Status)
    };
    let asks_to_wait = [
        StatusCode::TOO_MANY_REQUESTS,
        StatusCode::SERVICE_UNAVAILABLE,
    ];
    SendOutcome {
        status_code: Some(status.as_u16()),
        latency_ms,
        error,
        retry_after_s: asks_to_wait
            .contains(&status)
            .then(|| retry_after_seconds(response.headers()))
            .flatten(),
    }
}

/// `Retry-After` in its seconds form; its date form is not used.
fn retry_after_seconds(headers: &HeaderMap) -> Option<u64> {
    headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::client::tests::outgoing;

    fn response(status: u16, retry_after: Option<&str>) -> Response<()> {
        let mut builder = Response::builder().status(status);
        if let Some(value) = retry_after {
            builder = builder.header(RETRY_AFTER, value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn the_request_carries_the_signed_headers_and_nothing_else() {
        let attempt = outgoing("https://hooks.example.com/in?shop=1");
        let webhook_id = attempt.webhook_id.clone();
        let request = post(attempt).unwrap();
        assert_eq!(request.method(), "POST");
        assert_eq!(request.uri(), "/in?shop=1");
        let headers: Vec<(&str, &str)> = request
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str(), value.to_str().unwrap()))
            .collect();
        let signature = headers[5].1;
        assert_eq!(
            headers,
            [
                ("host", "hooks.example.com"),
                ("content-type", "application/json"),
                ("user-agent", USER_AGENT_VALUE),
                ("webhook-id", webhook_id.as_str()),
                ("webhook-timestamp", "1700000000"),
                ("webhook-signature", signature),
            ]
        );
        assert!(signature.starts_with("v1,"));
        assert!(USER_AGENT_VALUE.starts_with("petstore-webhooks/"));
    }

    #[test]
    fn the_host_header_names_a_port_other_than_the_default() {
        let host = |url| {
            post(outgoing(url)).unwrap().headers()[HOST]
                .to_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            host("https://hooks.example.com:8443/"),
            "hooks.example.com:8443"
        );
        assert_eq!(host("https://[::1]:8443/"), "[::1]:8443");
        assert_eq!(host("http://127.0.0.1:80/"), "127.0.0.1");
        assert_eq!(host("http://127.0.0.1:443/"), "127.0.0.1:443");
    }

    #[test]
    fn without_a_usable_secret_nothing_is_sent() {
        let mut unsigned = outgoing("https://hooks.example.com/");
        unsigned.secrets.clear();
        assert!(post(unsigned).is_none());
    }

    #[test]
    fn a_status_decides_the_outcome() {
        let outcome = |status| outcome_of(&response(status, None), 12);
        assert_eq!(outcome(200).error, None);
        assert_eq!(outcome(204).error, None);
        assert_eq!(outcome(301).error, Some(AttemptError::Redirect));
        assert_eq!(outcome(307).error, Some(AttemptError::Redirect));
        assert_eq!(outcome(404).error, Some(AttemptError::Status));
        assert_eq!(outcome(500).error, Some(AttemptError::Status));
        assert_eq!(outcome(302).status_code, Some(302));
        assert_eq!(outcome(200).latency_ms, 12);
    }

    #[test]
    fn retry_after_is_taken_from_a_429_or_503_in_seconds() {
        let retry_after =
            |status, value| outcome_of(&response(status, Some(value)), 0).retry_after_s;
        assert_eq!(retry_after(429, "30"), Some(30));
        assert_eq!(retry_after(503, " 120 "), Some(120));
        assert_eq!(retry_after(500, "30"), None);
        assert_eq!(retry_after(503, "Fri, 27 Nov 2026 12:00:00 GMT"), None);
        assert_eq!(retry_after(429, "-1"), None);
    }
}
