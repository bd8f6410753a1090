//! The order of a graceful stop, as a balancer sees it: on SIGTERM `/readyz` turns 503 at once,
//! the API keeps answering for the drain delay, each answer closing its connection, and only
//! then does the instance stop accepting and exit 0; a client that connected before then is
//! answered, and one that did not is refused.

use std::cell::Cell;
use std::collections::HashSet;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::held_connections::{host, one_request};
use petstore_test_support::{send, try_send, Backend, TestApp};

const DRAIN_DELAY: Duration = Duration::from_secs(2);

#[actix_web::test]
async fn sigterm_turns_readyz_503_at_once_then_serves_through_the_drain_delay() {
    let mut app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_DRAIN_DELAY", "2s")
        .in_a_process()
        .spawn()
        .await;
    let host = host(&app).to_owned();
    // A balancer's pooled connection, opened and used before the stop.
    let mut pooled = TcpStream::connect(&host).await.expect("connect");
    assert!(one_request(&mut pooled, &host)
        .await
        .starts_with("HTTP/1.1 200"));
    let readyz = || send(app.client.get(app.url("/readyz")), None);
    assert_eq!(readyz().await.status, 200);

    app.terminate();
    let signalled = Instant::now();
    // The signal is delivered asynchronously: poll for the 503, well within the drain delay.
    loop {
        let response = readyz().await;
        if response.status == 503 {
            response.assert_error(503, "service_unavailable");
            break;
        }
        assert!(
            signalled.elapsed() < Duration::from_millis(500),
            "/readyz still {} after SIGTERM",
            response.status
        );
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }

    // Draining: the API still answers, and tells each client to close its connection.
    let created = send(
        app.post_json("/v1/pets"),
        Some(json!({"name": "Late", "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let answer = one_request(&mut pooled, &host).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "a draining instance kept the connection open: {answer}"
    );
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(2), pooled.read_to_end(&mut rest)).await;
    assert!(
        matches!(closed, Ok(Ok(0))),
        "the connection stayed open after Connection: close"
    );

    // Then it stops accepting, not before the drain delay, and exits 0.
    let deadline = signalled + DRAIN_DELAY + Duration::from_secs(10);
    let refused_after = loop {
        match try_send(app.client.get(app.url("/healthz")), None).await {
            Ok(response) => assert_eq!(response.status, 200, "{}", response.body),
            Err(_) => break signalled.elapsed(),
        }
        assert!(Instant::now() < deadline, "still accepting after the drain");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        refused_after >= DRAIN_DELAY,
        "stopped accepting after {refused_after:?}, before the drain delay"
    );
    let status = app.wait_for_exit();
    assert!(status.success(), "exit status {status}");
    assert!(
        signalled.elapsed() < DRAIN_DELAY + Duration::from_secs(5),
        "exited after {:?}",
        signalled.elapsed()
    );
}

/// Stops under load whose connections keep the listener's accept queue full.
const STOPS: usize = 3;
/// Clients creating pets, each request on a connection of its own.
const CLIENTS: usize = 32;
/// Long enough for the load to run through it, short enough for three stops in seconds.
const SHORT_DRAIN_DELAY: &str = "300ms";
/// Far beyond any answer, or any refusal of a connection that was not accepted.
const GIVE_UP: Duration = Duration::from_secs(15);

/// What the client of one create, sent on a new connection, saw.
#[derive(Debug)]
enum Outcome {
    /// 201, with the new pet's id.
    Created(i64),
    /// 503 with `Connection: close`: nothing was done, and the client knows it.
    Unavailable,
    /// The connection was refused: nothing was sent.
    Refused,
    /// Connected, sent its request and got no answer: whether the pet was stored, the client
    /// cannot know.
    CutOff(String),
}

#[actix_web::test]
async fn every_connection_accepted_before_the_listener_closes_is_answered() {
    let mut app = TestApp::builder(Backend::Sqlite)
        .setting("PETSTORE_DRAIN_DELAY", SHORT_DRAIN_DELAY)
        .in_a_process()
        .spawn()
        .await;
    let mut outcomes = Vec::new();
    for stop in 0..STOPS {
        if stop > 0 {
            app.restart();
        }
        outcomes.extend(stop_under_load(&app).await);
        let status = app.wait_for_exit();
        assert!(status.success(), "exit status {status}");
    }
    app.restart();

    let created: Vec<i64> = outcomes
        .iter()
        .filter_map(|outcome| match outcome {
            Outcome::Created(id) => Some(*id),
            _ => None,
        })
        .collect();
    let cut_off: Vec<&str> = outcomes
        .iter()
        .filter_map(|outcome| match outcome {
            Outcome::CutOff(what) => Some(what.as_str()),
            _ => None,
        })
        .collect();
    let unavailable = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Outcome::Unavailable))
        .count();
    let refused = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Outcome::Refused))
        .count();
    assert!(
        cut_off.is_empty(),
        "{} of {} requests sent on an accepted connection got no answer ({} created, {unavailable} \
         503, {refused} refused); the first: {:?}",
        cut_off.len(),
        outcomes.len() - refused,
        created.len(),
        &cut_off[..cut_off.len().min(5)]
    );
    assert_eq!(refused, STOPS * CLIENTS, "each client ends refused");
    let stored: HashSet<i64> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .iter()
        .map(|pet| pet["id"].as_i64().expect("an id"))
        .collect();
    let lost: Vec<&i64> = created.iter().filter(|id| !stored.contains(id)).collect();
    assert!(lost.is_empty(), "answered 201 but not stored: {lost:?}");
    assert_eq!(
        stored.len(),
        created.len(),
        "stored pets whose clients were not told"
    );
}

/// Runs the clients, sends SIGTERM once each has been answered, and collects what every
/// request's client saw, until each client is refused.
async fn stop_under_load(app: &TestApp) -> Vec<Outcome> {
    let host = host(app).to_owned();
    let answered = Rc::new(Cell::new(0_usize));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (host, key, answered) = (host.clone(), app.api_key.clone(), Rc::clone(&answered));
            actix_web::rt::spawn(async move {
                let mut outcomes = Vec::new();
                loop {
                    let outcome = create_on_a_new_connection(&host, &key).await;
                    answered.set(answered.get() + 1);
                    let refused = matches!(outcome, Outcome::Refused);
                    outcomes.push(outcome);
                    if refused {
                        return outcomes;
                    }
                }
            })
        })
        .collect();
    let started = Instant::now();
    while answered.get() < CLIENTS {
        assert!(started.elapsed() < GIVE_UP, "the clients got no answers");
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }
    app.terminate();
    let mut outcomes = Vec::new();
    for client in clients {
        outcomes.extend(client.await.expect("a client"));
    }
    outcomes
}

/// Creates a pet on a connection of its own and says what came back.
async fn create_on_a_new_connection(host: &str, key: &str) -> Outcome {
    let exchange = async {
        let mut stream = match TcpStream::connect(host).await {
            Ok(stream) => stream,
            Err(err) if err.kind() == ErrorKind::ConnectionRefused => return Outcome::Refused,
            // The handshake completed, then the connection was reset.
            Err(err) if err.kind() == ErrorKind::ConnectionReset => {
                return Outcome::CutOff(format!("connecting: {err}"))
            }
            Err(err) => panic!("connect: {err}"),
        };
        let body = json!({"name": "Late", "categoryId": 1}).to_string();
        let request = format!(
            "POST /v1/pets HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n\
             {body}",
            body.len()
        );
        if let Err(err) = stream.write_all(request.as_bytes()).await {
            return Outcome::CutOff(format!("sending: {err}"));
        }
        let mut response = Vec::new();
        let ended = stream.read_to_end(&mut response).await;
        let response = String::from_utf8_lossy(&response);
        let Some((head, body)) = response.split_once("\r\n\r\n") else {
            return Outcome::CutOff(match ended {
                Ok(_) => format!("closed after {:?}", response),
                Err(err) => format!("{err} after {:?}", response),
            });
        };
        if head.starts_with("HTTP/1.1 201 ") {
            let pet: Value = serde_json::from_str(body).expect("a pet");
            Outcome::Created(pet["id"].as_i64().expect("an id"))
        } else if head.starts_with("HTTP/1.1 503 ") {
            assert!(
                head.to_ascii_lowercase().contains("\r\nconnection: close"),
                "a 503 that keeps its connection: {head}"
            );
            Outcome::Unavailable
        } else {
            panic!("unexpected answer: {response}");
        }
    };
    tokio::time::timeout(GIVE_UP, exchange)
        .await
        .unwrap_or_else(|_| Outcome::CutOff(format!("no answer within {GIVE_UP:?}")))
}
