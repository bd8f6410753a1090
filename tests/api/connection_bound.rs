//! Past the bound on connections, a client is answered at once: an idle keep-alive connection
//! makes room for it, or it is answered 429 (its address holds its share) or 503 (every
//! connection is busy) and the connection closed; `/healthz` and `/readyz` answer all the while,
//! on the API's address and on the metrics address; a trusted proxy has no share of its own.
//! Each address here is another client: the test connects from `127.0.0.2`, `127.0.0.3`, ...
//!
//! The full scenario (2,000 connections reconnecting when closed) is the reliability suite's
//! `connection_bound`.

use std::time::{Duration, Instant};

use petstore_test_support::eventually;
use tokio::net::TcpStream;

pub(crate) mod raw_http;

use raw_http::{client_address, closed_within, connect_from, get, Response, Server};

/// What "at once" means for a client past the bound (the issue: 10 s and more).
const AT_ONCE: Duration = Duration::from_secs(1);

/// `GET path` on a new connection from client address `n`, answered within [`AT_ONCE`].
async fn answered_at_once(server: &Server, n: u32, path: &str) -> (Response, TcpStream) {
    let started = Instant::now();
    let answer = tokio::time::timeout(AT_ONCE, async {
        let mut stream = connect_from(client_address(n), server.address).await?;
        let response = get(&mut stream, path, Some(&server.key)).await?;
        Ok::<_, std::io::Error>((response, stream))
    })
    .await;
    match answer {
        Ok(Ok(answer)) => answer,
        Ok(Err(err)) => panic!("GET {path} from client {n}: {err}"),
        Err(_) => panic!(
            "GET {path} from client {n} not answered within {:?}",
            started.elapsed()
        ),
    }
}

/// `count` connections from client address `n`, each after one request, idle.
async fn idle_connections(server: &Server, n: u32, count: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..count {
        let mut stream = connect_from(client_address(n), server.address)
            .await
            .expect("connect");
        let response = get(&mut stream, "/healthz", None).await.expect("answered");
        assert_eq!(response.status, 200, "{response:?}");
        assert!(
            !response.closes(),
            "refused within the bounds: {response:?}"
        );
        held.push(stream);
    }
    held
}

/// The spec's `Error`, with `Retry-After` and `Connection: close`, and the connection closed.
async fn assert_refused(mut answer: (Response, TcpStream), status: u16, code: &str) {
    let (response, stream) = &mut answer;
    assert_eq!(response.status, status, "{response:?}");
    let body = response.json();
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(response.header("retry-after"), Some("1"), "{response:?}");
    assert!(response.header("x-request-id").is_some(), "{response:?}");
    assert!(response.closes(), "{response:?}");
    assert!(
        closed_within(stream, AT_ONCE).await,
        "the connection stayed open"
    );
}

/// A probe's answer on a connection past a bound: served, and the connection closed after it.
async fn assert_probe_answers(server: &Server, n: u32) {
    for (path, status) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let (response, _) = answered_at_once(server, n, path).await;
        assert_eq!(response.status, 200, "{path}: {response:?}");
        assert_eq!(response.json()["status"], status, "{path}: {response:?}");
    }
}

#[actix_web::test]
async fn past_the_bound_a_new_client_is_answered_at_once_in_place_of_the_oldest_idle() {
    let server = Server::start(&[
        ("PETSTORE_MAX_CONNECTIONS", "40"),
        ("PETSTORE_MAX_CONNECTIONS_PER_CLIENT", "20"),
        ("PETSTORE_KEEP_ALIVE", "60s"),
        ("PETSTORE_METRICS_BIND", "127.0.0.1:0"),
    ]);
    let mut first = idle_connections(&server, 0, 20).await;
    let _second = idle_connections(&server, 1, 20).await;

    let (response, _) = answered_at_once(&server, 2, "/v1/pets").await;
    assert_eq!(response.status, 200, "{response:?}");
    assert!(!response.closes(), "{response:?}");
    // The oldest idle connection made room; the others are still open.
    assert!(
        closed_within(&mut first[0], AT_ONCE).await,
        "the oldest idle connection is still open"
    );
    assert!(!closed_within(&mut first[1], Duration::from_millis(100)).await);
    let ended = server
        .metric(
            "petstore_http_connections_ended_total",
            &[r#"listener="api""#, r#"state="idle""#],
        )
        .await;
    assert_eq!(ended, 1.0);
}

#[actix_web::test]
async fn an_address_past_its_share_is_answered_429_at_once_and_its_probes_still_answer() {
    let server = Server::start(&[
        ("PETSTORE_MAX_CONNECTIONS", "40"),
        ("PETSTORE_MAX_CONNECTIONS_PER_CLIENT", "5"),
        ("PETSTORE_KEEP_ALIVE", "60s"),
        ("PETSTORE_METRICS_BIND", "127.0.0.1:0"),
    ]);
    let _held = idle_connections(&server, 0, 5).await;

    assert_refused(
        answered_at_once(&server, 0, "/v1/pets").await,
        429,
        "rate_limited",
    )
    .await;
    assert_probe_answers(&server, 0).await;
    // Other addresses are served as ever.
    let (response, _) = answered_at_once(&server, 1, "/v1/pets").await;
    assert_eq!(response.status, 200, "{response:?}");
    let refused = server
        .metric(
            "petstore_http_connections_refused_total",
            &[r#"listener="api""#, r#"reason="per_client""#],
        )
        .await;
    assert_eq!(refused, 3.0, "the request and the two probes");
}

#[actix_web::test]
async fn with_every_connection_busy_a_newcomer_is_answered_503_and_probes_answer_everywhere() {
    let server = Server::start(&[
        ("PETSTORE_MAX_CONNECTIONS", "40"),
        ("PETSTORE_MAX_CONNECTIONS_PER_CLIENT", "40"),
        ("PETSTORE_HEAD_TIMEOUT", "60s"),
        ("PETSTORE_METRICS_BIND", "127.0.0.1:0"),
    ]);
    // Connections that never send a request: none is idle, none can be closed early.
    let mut silent = Vec::new();
    for _ in 0..40 {
        silent.push(
            connect_from(client_address(0), server.address)
                .await
                .expect("connect"),
        );
    }
    let admitted = || {
        server.metric(
            "petstore_http_connections",
            &[r#"listener="api""#, r#"state="admitted""#],
        )
    };
    eventually(
        Duration::from_secs(10),
        "the server to take all 40 connections",
        async || match admitted().await {
            all if all >= 40.0 => Ok(()),
            taken => Err(taken),
        },
    )
    .await;

    assert_refused(
        answered_at_once(&server, 1, "/v1/pets").await,
        503,
        "service_unavailable",
    )
    .await;
    assert_probe_answers(&server, 1).await;
    let metrics = server.metrics.as_ref().expect("a metrics address");
    let metrics_address = metrics
        .trim_start_matches("http://")
        .parse()
        .expect("an address");
    for (path, status) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let mut stream = connect_from(client_address(1), metrics_address)
            .await
            .expect("connect");
        let response = tokio::time::timeout(AT_ONCE, get(&mut stream, path, None))
            .await
            .unwrap_or_else(|_| panic!("{path} on the metrics address: no answer"))
            .expect("answered");
        assert_eq!(response.status, 200, "{path}: {response:?}");
        assert_eq!(response.json()["status"], status, "{path}: {response:?}");
    }
    drop(silent);
}

#[actix_web::test]
async fn a_trusted_proxy_has_no_share_of_its_own_while_other_addresses_do() {
    let server = Server::start(&[
        ("PETSTORE_MAX_CONNECTIONS", "40"),
        ("PETSTORE_MAX_CONNECTIONS_PER_CLIENT", "2"),
        ("PETSTORE_KEEP_ALIVE", "60s"),
        ("PETSTORE_TRUSTED_PROXIES", "127.0.0.3"),
    ]);
    // The proxy at 127.0.0.3 carries many clients: ten connections are served.
    let _proxied = idle_connections(&server, 1, 10).await;
    let (response, _) = answered_at_once(&server, 1, "/v1/pets").await;
    assert_eq!(response.status, 200, "{response:?}");
    // Any other address holds two.
    let _held = idle_connections(&server, 0, 2).await;
    assert_refused(
        answered_at_once(&server, 0, "/v1/pets").await,
        429,
        "rate_limited",
    )
    .await;
}
