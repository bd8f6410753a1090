//! `HttpsSender` against a real HTTPS receiver on 127.0.0.1 (its own CA, trusted through the
//! CA file setting, and loopback allowed): what arrives, and how each kind of answer ends the
//! attempt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

mod support;

use petstore_application::webhooks::{SendOutcome, WebhookSender};
use petstore_domain::{AttemptError, EventId};
use petstore_test_support::webhook_receiver::{Reply, WebhookReceiver};
use petstore_webhooks::{HttpsSender, SenderSettings};
use support::{outgoing, BODY};

const WAIT: Duration = Duration::from_secs(10);

fn settings(receiver: &WebhookReceiver) -> SenderSettings {
    SenderSettings {
        allow_loopback: true,
        ca_file: Some(receiver.ca_pem_path().to_owned()),
        ..SenderSettings::default()
    }
}

fn sender(settings: &SenderSettings) -> HttpsSender {
    HttpsSender::new(settings).unwrap()
}

fn succeeded(outcome: &SendOutcome, status: u16) {
    assert_eq!(outcome.error, None, "{outcome:?}");
    assert_eq!(outcome.status_code, Some(status));
    assert_eq!(outcome.retry_after_s, None);
}

#[tokio::test]
async fn a_delivery_arrives_over_https_with_the_signed_headers_and_nothing_else() {
    let receiver = WebhookReceiver::start();
    let outcome = sender(&settings(&receiver))
        .send(outgoing(&receiver.url("/hooks?shop=1")))
        .await;
    succeeded(&outcome, 204);

    let requests = receiver.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/hooks?shop=1");
    assert_eq!(request.body, BODY);
    let mut names = request.header_names();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "content-length",
            "content-type",
            "host",
            "user-agent",
            "webhook-id",
            "webhook-signature",
            "webhook-timestamp",
        ]
    );
    let port = receiver.port();
    assert_eq!(request.header("host"), Some(&*format!("localhost:{port}")));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.header("webhook-id"),
        Some(EventId::from_random([9; 16]).as_str())
    );
    assert_eq!(request.header("webhook-timestamp"), Some("1700000000"));
    let signature = request.header("webhook-signature").unwrap();
    assert!(
        signature.starts_with("v1,") && signature.len() == 3 + 44,
        "{signature}"
    );
    assert!(request
        .header("user-agent")
        .unwrap()
        .starts_with("petstore-webhooks/"));
}

#[tokio::test]
async fn an_address_literal_and_a_name_of_the_table_are_verified_against_the_certificate() {
    let receiver = WebhookReceiver::builder().name("hooks.test").start();
    let mut settings = settings(&receiver);
    settings.hosts = vec![("hooks.test".to_owned(), "127.0.0.1".parse().unwrap())];
    let sender = sender(&settings);
    succeeded(
        &sender
            .send(outgoing(&receiver.url_on("127.0.0.1", "/")))
            .await,
        204,
    );
    succeeded(
        &sender
            .send(outgoing(&receiver.url_on("hooks.test", "/")))
            .await,
        204,
    );
    let hosts: Vec<String> = receiver
        .requests()
        .iter()
        .map(|request| request.header("host").unwrap().to_owned())
        .collect();
    let port = receiver.port();
    assert_eq!(
        hosts,
        [format!("127.0.0.1:{port}"), format!("hooks.test:{port}")]
    );
}

#[tokio::test]
async fn a_certificate_from_an_untrusted_ca_fails_the_handshake_and_sends_nothing() {
    let receiver = WebhookReceiver::start();
    let other = WebhookReceiver::start();
    let outcome = sender(&settings(&other))
        .send(outgoing(&receiver.url("/")))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::Tls));
    assert_eq!(outcome.status_code, None);
    assert!(receiver.requests().is_empty());
}

#[tokio::test]
async fn loopback_is_refused_unless_allowed() {
    let receiver = WebhookReceiver::start();
    let strict = SenderSettings {
        allow_loopback: false,
        ..settings(&receiver)
    };
    let outcome = sender(&strict).send(outgoing(&receiver.url("/"))).await;
    assert_eq!(outcome.error, Some(AttemptError::BlockedAddress));
    assert_eq!(receiver.connections_closed(), 0);
    assert!(receiver.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_fails_the_attempt_and_is_not_followed() {
    let receiver = WebhookReceiver::start();
    receiver.answer([Reply::redirect(302, &receiver.url("/elsewhere"))]);
    let outcome = sender(&settings(&receiver))
        .send(outgoing(&receiver.url("/hooks")))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::Redirect));
    assert_eq!(outcome.status_code, Some(302));
    // A client following it would have asked for /elsewhere before its answer.
    let targets: Vec<String> = receiver.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["/hooks"]);
}

#[tokio::test]
async fn an_error_status_fails_the_attempt_and_a_503_may_say_when_to_come_back() {
    let receiver = WebhookReceiver::start();
    receiver.answer([
        Reply::status(503).header("retry-after", "7"),
        Reply::status(500).header("retry-after", "7"),
        Reply::status(200).body("thanks"),
    ]);
    let sender = sender(&settings(&receiver));
    let url = receiver.url("/");
    let unavailable = sender.send(outgoing(&url)).await;
    assert_eq!(unavailable.error, Some(AttemptError::Status));
    assert_eq!(unavailable.status_code, Some(503));
    assert_eq!(unavailable.retry_after_s, Some(7));
    let failed = sender.send(outgoing(&url)).await;
    assert_eq!(failed.status_code, Some(500));
    assert_eq!(failed.retry_after_s, None);
    succeeded(&sender.send(outgoing(&url)).await, 200);
}

#[tokio::test]
async fn a_receiver_slower_than_the_deadline_times_out() {
    let receiver = WebhookReceiver::start();
    receiver.answer([Reply::status(200).after(Duration::from_secs(3))]);
    let settings = SenderSettings {
        timeout: Duration::from_secs(1),
        ..settings(&receiver)
    };
    let started = Instant::now();
    let outcome = sender(&settings).send(outgoing(&receiver.url("/"))).await;
    let took = started.elapsed();
    assert_eq!(outcome.error, Some(AttemptError::Timeout));
    assert_eq!(outcome.status_code, None);
    assert!(outcome.latency_ms >= 1_000, "{outcome:?}");
    assert!(
        took < Duration::from_millis(2_500),
        "the attempt took {took:?}"
    );
    // The request did arrive; the connection is not kept waiting for the late answer.
    assert_eq!(receiver.requests().len(), 1);
    receiver.wait_for_connections_closed(1, WAIT).await;
}

#[tokio::test]
async fn a_body_is_read_no_further_than_4_kib() {
    let receiver = WebhookReceiver::start();
    // 5 KiB at once, then a body that never ends: reading it to its end would last until the
    // deadline, and the receiver would see the connection stay open.
    receiver.answer([Reply::status(200).never_ending_body(5 * 1024)]);
    let started = Instant::now();
    let outcome = sender(&settings(&receiver))
        .send(outgoing(&receiver.url("/")))
        .await;
    let took = started.elapsed();
    succeeded(&outcome, 200);
    assert!(took < Duration::from_secs(5), "the attempt took {took:?}");
    receiver.wait_for_connections_closed(1, WAIT).await;
}

#[tokio::test]
async fn a_port_nobody_listens_on_fails_to_connect() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let receiver = WebhookReceiver::start();
    let outcome = sender(&settings(&receiver))
        .send(outgoing(&format!("https://localhost:{port}/")))
        .await;
    // `localhost` may resolve to ::1 and 127.0.0.1: both refuse.
    assert_eq!(outcome.error, Some(AttemptError::Connect));
}

#[tokio::test]
async fn an_http_url_is_posted_in_plain_text_where_loopback_is_allowed() {
    let receiver = WebhookReceiver::builder().plain_http().start();
    let settings = SenderSettings {
        allow_loopback: true,
        ..SenderSettings::default()
    };
    let outcome = sender(&settings)
        .send(outgoing(&receiver.url_on("127.0.0.1", "/plain")))
        .await;
    succeeded(&outcome, 204);
    let requests = receiver.wait_for_requests(1, WAIT).await;
    assert_eq!(requests[0].target, "/plain");
    assert_eq!(requests[0].body, BODY);
}
