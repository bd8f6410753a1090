//! The attempt's address rule with a fake resolver and dialer: no network is used.

#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use petstore_domain::{EventId, SigningSecret};
use rustls::RootCertStore;

use super::*;

/// Answers each call with the next list of addresses, and counts the calls.
struct ScriptedResolver {
    answers: Mutex<VecDeque<io::Result<Vec<IpAddr>>>>,
    calls: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Resolve for ScriptedResolver {
    async fn resolve(&self, name: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        self.calls.lock().unwrap().push(name.to_owned());
        let answer = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Ok(vec![]));
        answer.map(|addresses| {
            addresses
                .into_iter()
                .map(|address| SocketAddr::new(address, port))
                .collect()
        })
    }
}

/// Records the addresses it is asked to connect to and connects to none.
struct RefusingDialer {
    dialled: Arc<Mutex<Vec<SocketAddr>>>,
}

#[async_trait]
impl Dial for RefusingDialer {
    async fn dial(&self, address: SocketAddr) -> io::Result<Box<dyn Io>> {
        self.dialled.lock().unwrap().push(address);
        Err(io::ErrorKind::ConnectionRefused.into())
    }
}

struct Fixture {
    sender: HttpsSender,
    resolved: Arc<Mutex<Vec<String>>>,
    dialled: Arc<Mutex<Vec<SocketAddr>>>,
}

fn ips(addresses: &[&str]) -> io::Result<Vec<IpAddr>> {
    Ok(addresses.iter().map(|a| a.parse().unwrap()).collect())
}

fn fixture(answers: Vec<io::Result<Vec<IpAddr>>>, allow_loopback: bool) -> Fixture {
    let resolved = Arc::default();
    let dialled = Arc::default();
    let settings = SenderSettings {
        allow_loopback,
        ..SenderSettings::default()
    };
    let sender = HttpsSender::with_parts(
        Box::new(ScriptedResolver {
            answers: Mutex::new(answers.into()),
            calls: Arc::clone(&resolved),
        }),
        Box::new(RefusingDialer {
            dialled: Arc::clone(&dialled),
        }),
        tls::with_roots(RootCertStore::empty()),
        &settings,
    );
    Fixture {
        sender,
        resolved,
        dialled,
    }
}

/// An attempt to `url` (loopback allowed in its parsing), signed with one secret.
pub(super) fn outgoing(url: &str) -> Outgoing {
    Outgoing {
        url: WebhookUrl::parse(
            url,
            AddressPolicy {
                allow_loopback: true,
            },
        )
        .unwrap(),
        webhook_id: EventId::from_random([1; 16]),
        timestamp_s: 1_700_000_000,
        secrets: vec![SigningSecret::new("whsec_c2VjcmV0".to_owned()).unwrap()],
        body: b"{}".to_vec(),
    }
}

fn socket(address: &str) -> SocketAddr {
    address.parse().unwrap()
}

#[tokio::test]
async fn a_name_is_resolved_once_and_only_the_checked_address_is_dialled() {
    // A rebinding name: public when checked, loopback if asked again.
    let fixture = fixture(vec![ips(&["93.184.215.14"]), ips(&["127.0.0.1"])], false);
    let outcome = fixture
        .sender
        .send(outgoing("https://rebind.example.com/hooks"))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::Connect));
    assert_eq!(
        *fixture.resolved.lock().unwrap(),
        vec!["rebind.example.com".to_owned()]
    );
    assert_eq!(
        *fixture.dialled.lock().unwrap(),
        vec![socket("93.184.215.14:443")]
    );
}

#[tokio::test]
async fn one_internal_address_among_public_ones_refuses_the_attempt_before_any_connection() {
    let fixture = fixture(vec![ips(&["93.184.215.14", "10.0.0.1"])], false);
    let outcome = fixture
        .sender
        .send(outgoing("https://mixed.example.com/"))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::BlockedAddress));
    assert_eq!(outcome.status_code, None);
    assert!(fixture.dialled.lock().unwrap().is_empty());
}

#[tokio::test]
async fn every_kind_of_internal_answer_is_refused() {
    for address in [
        "127.0.0.1",
        "169.254.169.254",
        "::ffff:10.0.0.1",
        "fd00:ec2::254",
        "::1",
    ] {
        let fixture = fixture(vec![ips(&[address])], false);
        let outcome = fixture
            .sender
            .send(outgoing("https://evil.example.com/"))
            .await;
        assert_eq!(
            outcome.error,
            Some(AttemptError::BlockedAddress),
            "{address}"
        );
        assert!(fixture.dialled.lock().unwrap().is_empty(), "{address}");
    }
}

#[tokio::test]
async fn an_address_literal_is_checked_without_resolving() {
    let fixture = fixture(vec![], false);
    let outcome = fixture
        .sender
        .send(outgoing("https://127.0.0.1:8443/"))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::BlockedAddress));
    assert!(fixture.resolved.lock().unwrap().is_empty());
    assert!(fixture.dialled.lock().unwrap().is_empty());

    let allowed = self::fixture(vec![], true);
    let outcome = allowed.sender.send(outgoing("https://[::1]:8443/")).await;
    assert_eq!(outcome.error, Some(AttemptError::Connect));
    assert!(allowed.resolved.lock().unwrap().is_empty());
    assert_eq!(*allowed.dialled.lock().unwrap(), vec![socket("[::1]:8443")]);
}

#[tokio::test]
async fn allowing_loopback_permits_loopback_and_nothing_more() {
    let fixture = fixture(vec![ips(&["127.0.0.1"]), ips(&["192.168.1.10"])], true);
    let loopback = fixture
        .sender
        .send(outgoing("http://hooks.test:8080/"))
        .await;
    assert_eq!(loopback.error, Some(AttemptError::Connect));
    let private = fixture
        .sender
        .send(outgoing("http://hooks.test:8080/"))
        .await;
    assert_eq!(private.error, Some(AttemptError::BlockedAddress));
    assert_eq!(
        *fixture.dialled.lock().unwrap(),
        vec![socket("127.0.0.1:8080")]
    );
}

#[tokio::test]
async fn without_loopback_allowed_an_http_url_is_not_even_resolved() {
    let fixture = fixture(vec![ips(&["93.184.215.14"])], false);
    let outcome = fixture
        .sender
        .send(outgoing("http://hooks.example.com/"))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::Tls));
    assert!(fixture.resolved.lock().unwrap().is_empty());
    assert!(fixture.dialled.lock().unwrap().is_empty());
}

#[tokio::test]
async fn at_most_two_addresses_are_tried_in_their_order() {
    let fixture = fixture(
        vec![ips(&["93.184.215.14", "2606:4700::6810:84e5", "1.1.1.1"])],
        false,
    );
    let outcome = fixture
        .sender
        .send(outgoing("https://many.example.com/"))
        .await;
    assert_eq!(outcome.error, Some(AttemptError::Connect));
    assert_eq!(
        *fixture.dialled.lock().unwrap(),
        vec![
            socket("93.184.215.14:443"),
            socket("[2606:4700::6810:84e5]:443")
        ]
    );
}

#[tokio::test]
async fn a_name_that_does_not_resolve_fails_as_dns() {
    let fixture = fixture(vec![Err(io::ErrorKind::NotFound.into()), ips(&[])], false);
    for _ in 0..2 {
        let outcome = fixture
            .sender
            .send(outgoing("https://nowhere.example.com/"))
            .await;
        assert_eq!(outcome.error, Some(AttemptError::Dns));
    }
    assert!(fixture.dialled.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_name_of_the_settings_table_is_checked_like_any_answer() {
    let dialled = Arc::default();
    let settings = SenderSettings {
        hosts: vec![("evil.test".to_owned(), "10.0.0.1".parse().unwrap())],
        ..SenderSettings::default()
    };
    let sender = HttpsSender::with_parts(
        Box::new(SystemResolver::new(&settings.hosts)),
        Box::new(RefusingDialer {
            dialled: Arc::clone(&dialled),
        }),
        tls::with_roots(RootCertStore::empty()),
        &settings,
    );
    let outcome = sender.send(outgoing("https://evil.test/")).await;
    assert_eq!(outcome.error, Some(AttemptError::BlockedAddress));
    assert!(dialled.lock().unwrap().is_empty());
}

#[test]
fn a_timeout_outside_its_range_is_refused() {
    for timeout in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_secs(16),
    ] {
        let settings = SenderSettings {
            timeout,
            ..SenderSettings::default()
        };
        assert!(
            matches!(
                HttpsSender::new(&settings),
                Err(SenderError::Timeout { .. })
            ),
            "{timeout:?}"
        );
    }
}
