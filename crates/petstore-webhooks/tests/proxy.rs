//! The sender reads no proxy setting: with `HTTPS_PROXY` and `HTTP_PROXY` naming a server that
//! would see every request sent through it, deliveries still go straight to the endpoint. Alone
//! in its test binary: it sets the process's environment.

#![allow(clippy::unwrap_used)]

mod support;

use petstore_application::webhooks::WebhookSender;
use petstore_test_support::webhook_receiver::WebhookReceiver;
use petstore_webhooks::{HttpsSender, SenderSettings};
use support::outgoing;

#[tokio::test]
async fn a_proxy_in_the_environment_is_not_used() {
    let proxy = WebhookReceiver::builder().plain_http().start();
    let endpoint = WebhookReceiver::start();
    for variable in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
    ] {
        std::env::set_var(variable, proxy.url_on("127.0.0.1", ""));
    }
    std::env::remove_var("NO_PROXY");
    std::env::remove_var("no_proxy");

    let sender = HttpsSender::new(&SenderSettings {
        allow_loopback: true,
        ca_file: Some(endpoint.ca_pem_path().to_owned()),
        ..SenderSettings::default()
    })
    .unwrap();
    let outcome = sender.send(outgoing(&endpoint.url("/hooks"))).await;

    assert_eq!(outcome.error, None, "{outcome:?}");
    assert_eq!(endpoint.requests().len(), 1);
    assert!(proxy.requests().is_empty());
    assert_eq!(proxy.connections_closed(), 0);
}
