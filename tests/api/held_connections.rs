//! Clients that hold connections without finishing a request: every request head, the later
//! ones on a keep-alive connection included, has a deadline, and idle connections close after
//! the keep-alive time. (What happens past the bound on connections: `connection_bound.rs`.)

use std::cell::Cell;
use std::time::{Duration, Instant};

use futures_util::{stream, StreamExt as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use petstore_test_support::{send, Backend, TestApp};

const HEAD_TIMEOUT: Duration = Duration::from_secs(2);
const HELD: usize = 1_000;
/// How often a holding client sends one more byte of its next head.
const TRICKLE_EVERY: Duration = Duration::from_millis(250);
/// Beyond the deadline, for a busy machine to get round to closing 1,000 connections.
const MARGIN: Duration = Duration::from_secs(3);

/// A head that never ends: a request line and a header line that goes on and on.
fn endless_head() -> impl Iterator<Item = u8> {
    b"GET /v1/pets HTTP/1.1\r\nX-Slow: "
        .iter()
        .copied()
        .chain(std::iter::repeat(b'a'))
}

pub(crate) fn host(app: &TestApp) -> &str {
    app.address.trim_start_matches("http://")
}

/// Sends one complete request and reads its whole response (a `Content-Length` one).
pub(crate) async fn one_request(stream: &mut TcpStream, host: &str) -> String {
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut received = Vec::new();
    let mut buf = [0; 1024];
    loop {
        let read = stream.read(&mut buf).await.expect("read the response");
        assert!(read > 0, "closed before the response was complete");
        received.extend_from_slice(&buf[..read]);
        let text = String::from_utf8_lossy(&received);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .expect("a Content-Length");
            if body.len() >= length {
                return text.into_owned();
            }
        }
    }
}

/// Sends the next head a byte at a time until the server closes the connection; how long that
/// took from the first byte, or what went wrong.
async fn trickle_until_closed(
    mut stream: TcpStream,
    give_up: Duration,
) -> Result<Duration, String> {
    let started = Instant::now();
    let (mut reader, mut writer) = stream.split();
    let mut head = endless_head();
    let mut ticks = tokio::time::interval(TRICKLE_EVERY);
    let mut buf = [0; 256];
    loop {
        tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) | Err(_) => return Ok(started.elapsed()),
                Ok(_) => {}
            },
            _ = ticks.tick() => {
                if started.elapsed() > give_up {
                    return Err(format!("still open {:?} after its head started", started.elapsed()));
                }
                let byte = head.next().unwrap_or(b'a');
                if writer.write_all(&[byte]).await.is_err() {
                    return Ok(started.elapsed());
                }
            }
        }
    }
}

/// Requests from a client that behaves, one after the other until `done`; their latencies.
async fn well_behaved_client(app: &TestApp, done: &Cell<bool>) -> Vec<Duration> {
    let mut latencies = Vec::new();
    while !done.get() {
        let asked = Instant::now();
        let response = send(app.get("/v1/pets?limit=5"), None).await;
        assert_eq!(response.status, 200, "{}", response.body);
        latencies.push(asked.elapsed());
    }
    latencies
}

fn p99(mut latencies: Vec<Duration>) -> Duration {
    latencies.sort();
    latencies[(latencies.len() * 99).div_ceil(100) - 1]
}

#[actix_web::test]
async fn a_thousand_clients_trickling_their_next_head_are_closed_by_the_deadline() {
    // A keep-alive far longer than the test: the head deadline is what must close them.
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_HEAD_TIMEOUT", "2s")
        .setting("PETSTORE_KEEP_ALIVE", "60s")
        // All from one address, which may hold them all.
        .setting("PETSTORE_MAX_CONNECTIONS_PER_CLIENT", "4096")
        .in_a_process()
        .spawn()
        .await;
    let host = host(&app);

    // Each connection makes one complete request first: the deadline that matters is the one
    // of a later head, which actix-web's own head timer does not cover.
    let held: Vec<TcpStream> = stream::iter(0..HELD)
        .map(|_| async move {
            let mut stream = TcpStream::connect(host).await.expect("connect");
            let response = one_request(&mut stream, host).await;
            assert!(response.starts_with("HTTP/1.1 200"), "{response}");
            stream
        })
        .buffer_unordered(100)
        .collect()
        .await;

    let done = Cell::new(false);
    let trickling = async {
        let closed = futures_util::future::join_all(
            held.into_iter()
                .map(|stream| trickle_until_closed(stream, HEAD_TIMEOUT + MARGIN)),
        )
        .await;
        done.set(true);
        closed
    };
    let (closed, latencies) = tokio::join!(trickling, well_behaved_client(&app, &done));

    let failures: Vec<&String> = closed.iter().filter_map(|c| c.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {HELD} connections were not closed in time; first: {}",
        failures.len(),
        failures[0]
    );
    let slowest = closed.iter().flatten().max().expect("some connections");
    let fastest = closed.iter().flatten().min().expect("some connections");
    assert!(
        *fastest >= HEAD_TIMEOUT,
        "a connection was closed {fastest:?} into its head, before the deadline"
    );
    eprintln!(
        "{HELD} held connections closed {fastest:?}..{slowest:?} after their next head started"
    );

    let answered = latencies.len();
    let p99 = p99(latencies);
    eprintln!("well-behaved client beside them: {answered} requests, p99 {p99:?}");
    assert!(answered >= 10, "only {answered} requests answered");
    assert!(p99 < Duration::from_secs(1), "p99 {p99:?}");

    // The server is as good as new.
    let response = send(app.get("/v1/pets"), None).await;
    assert_eq!(response.status, 200, "{}", response.body);
}

#[actix_web::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_keep_alive_time() {
    let keep_alive = Duration::from_secs(1);
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_KEEP_ALIVE", "1s")
        .spawn()
        .await;
    let mut stream = TcpStream::connect(host(&app)).await.expect("connect");
    let response = one_request(&mut stream, host(&app)).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    let idle = Instant::now();
    let mut buf = [0; 64];
    let read = tokio::time::timeout(keep_alive + MARGIN, stream.read(&mut buf))
        .await
        .unwrap_or_else(|_| panic!("still open {:?} after its response", idle.elapsed()));
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    // actix-web times keep-alive from a clock it updates every 500 ms.
    assert!(
        idle.elapsed() >= keep_alive / 2,
        "closed after {:?}",
        idle.elapsed()
    );
}

/// Reads one response whatever its framing is not needed for: up to the end of its head and
/// `Content-Length` bytes of body.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut buf = [0; 1024];
    loop {
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            if !head.starts_with("HTTP/1.1 100") {
                let length = head
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= length {
                    return text;
                }
            } else if body.is_empty() {
                return text;
            }
        }
        let read = stream.read(&mut buf).await.expect("read the response");
        assert!(read > 0, "closed before the response was complete: {text}");
        received.extend_from_slice(&buf[..read]);
    }
}

#[actix_web::test]
async fn slow_heads_within_the_deadline_and_slow_bodies_after_100_continue_are_served() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_HEAD_TIMEOUT", "1s")
        .setting("PETSTORE_BODY_TIMEOUT", "10s")
        .spawn()
        .await;
    let host = host(&app);
    let mut stream = TcpStream::connect(host).await.expect("connect");
    assert!(one_request(&mut stream, host)
        .await
        .starts_with("HTTP/1.1 200"));

    // A later head in pieces, well within its deadline.
    let head = format!(
        "GET /v1/pets HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\r\n",
        app.api_key
    );
    for piece in head.as_bytes().chunks(16) {
        stream.write_all(piece).await.expect("send");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answer = read_response(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // A body after `100 Continue` is the body's business: it may take longer than a head may.
    let body = r#"{"name":"Slowpoke","categoryId":1}"#;
    let head = format!(
        "POST /v1/pets HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        app.api_key,
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .await
        .expect("send the head");
    let interim = read_response(&mut stream).await;
    assert_eq!(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    let started = Instant::now();
    for piece in body.as_bytes().chunks(8) {
        stream.write_all(piece).await.expect("send the body");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(started.elapsed() > Duration::from_secs(2));
    let answer = read_response(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("Slowpoke"), "{answer}");
}

#[actix_web::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_head_timeout() {
    let app = TestApp::builder(Backend::Memory)
        .setting("PETSTORE_HEAD_TIMEOUT", "1s")
        .spawn()
        .await;
    let mut stream = TcpStream::connect(host(&app)).await.expect("connect");
    let connected = Instant::now();
    let mut received = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(1) + MARGIN,
        stream.read_to_end(&mut received),
    )
    .await
    .unwrap_or_else(|_| panic!("still open {:?} after connecting", connected.elapsed()))
    .ok();
    assert!(
        connected.elapsed() >= Duration::from_millis(500),
        "{:?}",
        connected.elapsed()
    );
}
