//! Talking to a test server: a client, requests read whole into a [`TestResponse`], and the
//! assertions on the spec's `Error` shape.

use std::time::{Duration, Instant};

use awc::http::header::HeaderMap;
use awc::http::StatusCode;
use serde_json::Value;

/// A response read whole, so tests can assert on status, headers and body together.
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl TestResponse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("body is not JSON ({err}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Asserts the spec's `Error` shape: JSON, exactly `code`, `message`, `status`, with `status`
    /// equal to the HTTP status. Returns the message.
    pub fn assert_error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        let content_type = self.header("content-type").unwrap_or_default();
        assert!(
            content_type.starts_with("application/json"),
            "error content type {content_type:?}, body {:?}",
            self.body
        );
        let body = self.json();
        let object = body.as_object().expect("error body is an object");
        let mut keys: Vec<_> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["code", "message", "status"], "{body}");
        assert_eq!(body["status"], u64::from(status), "{body}");
        assert_eq!(body["code"], code, "{body}");
        let message = body["message"].as_str().expect("message is a string");
        assert!(!message.is_empty());
        message.to_owned()
    }
}

/// The status of `GET {address}/v1/pets?limit=1` with `key`, asked again every 20 ms until
/// `done` says so or `within` has passed; the last status and how long it took.
pub async fn poll_list_status(
    address: &str,
    key: &str,
    within: Duration,
    done: impl Fn(u16) -> bool,
) -> (u16, Duration) {
    let started = Instant::now();
    loop {
        let request = client()
            .get(format!("{address}/v1/pets?limit=1"))
            .bearer_auth(key);
        let status = send(request, None).await.status.as_u16();
        if done(status) || started.elapsed() >= within {
            return (status, started.elapsed());
        }
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

pub async fn send(request: awc::ClientRequest, body: Option<String>) -> TestResponse {
    try_send(request, body)
        .await
        .unwrap_or_else(|error| panic!("no answer from the server: {error}"))
}

/// Like [`send`], but a request that gets no whole answer (the server died) is an `Err`.
pub async fn try_send(
    request: awc::ClientRequest,
    body: Option<String>,
) -> Result<TestResponse, String> {
    let result = match body {
        Some(body) => request.send_body(body).await,
        None => request.send().await,
    };
    let mut response = result.map_err(|error| error.to_string())?;
    let bytes = response
        .body()
        .limit(16 * 1024 * 1024)
        .await
        .map_err(|error| error.to_string())?;
    Ok(TestResponse {
        status: response.status(),
        headers: response.headers().clone(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

pub fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish()
}
