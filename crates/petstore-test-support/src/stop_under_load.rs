//! A graceful stop under load, as its clients see it: clients that send each request on a
//! connection of their own (so that connections wait in the listener's accept queue as it
//! closes), SIGTERM, and what became of every request. A stop may refuse a connection, or answer
//! 503 with `Connection: close`, but never leave a request sent on a connection without an
//! answer: its client could not tell whether it was carried out.

use std::cell::Cell;
use std::collections::HashSet;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::app::TestApp;
use crate::eventually;

/// Far beyond any answer, or the refusal of a connection that was not accepted.
const GIVE_UP: Duration = Duration::from_secs(15);

/// Who sends what through the stop.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    /// Clients creating pets.
    pub creating: usize,
    /// Clients reading one pet (`GET /v1/pets/{id}`).
    pub reading: usize,
    /// The pet the readers read.
    pub pet_id: i64,
}

/// What the client of one request, sent on a new connection, saw.
#[derive(Debug)]
enum Outcome {
    /// 201, with the new pet's id.
    Created(i64),
    /// 200 to a read.
    Read,
    /// 503 with `Connection: close`: nothing was done, and the client knows it.
    Unavailable,
    /// The connection was refused: nothing was sent.
    Refused,
    /// Connected, sent its request and got no answer.
    CutOff(String),
}

/// What became of every request sent through one or more stops.
#[derive(Debug, Default)]
pub struct Outcomes(Vec<Outcome>);

impl Outcomes {
    /// The ids of the pets answered 201.
    pub fn created(&self) -> Vec<i64> {
        self.0
            .iter()
            .filter_map(|outcome| match outcome {
                Outcome::Created(id) => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// Panics, with the counts and the first few, if any request sent on a connection got no
    /// answer.
    pub fn assert_every_request_answered(&self) {
        let cut_off: Vec<&str> = self
            .0
            .iter()
            .filter_map(|outcome| match outcome {
                Outcome::CutOff(what) => Some(what.as_str()),
                _ => None,
            })
            .collect();
        let refused = self.count(|outcome| matches!(outcome, Outcome::Refused));
        assert!(
            cut_off.is_empty(),
            "{} of {} requests sent on an accepted connection got no answer ({} created, {} \
             read, {} 503, {refused} refused); the first: {:?}",
            cut_off.len(),
            self.0.len() - refused,
            self.created().len(),
            self.count(|outcome| matches!(outcome, Outcome::Read)),
            self.count(|outcome| matches!(outcome, Outcome::Unavailable)),
            &cut_off[..cut_off.len().min(5)]
        );
    }

    fn count(&self, which: impl Fn(&Outcome) -> bool) -> usize {
        self.0.iter().filter(|outcome| which(outcome)).count()
    }
}

/// Stops `app` (a server in a process) `stops` times under `load`, starting it again after
/// each stop (and after the last), and says what every request's client saw. Each stop must
/// end in exit status 0.
pub async fn stop_repeatedly(app: &mut TestApp, load: Load, stops: usize) -> Outcomes {
    let mut outcomes = Outcomes::default();
    for stop in 0..stops {
        stop_once(app, load, &mut outcomes).await;
        let status = app.wait_for_exit();
        assert!(status.success(), "stop {stop}: exit status {status}");
        app.restart();
    }
    outcomes
}

/// Runs the clients, sends SIGTERM once each has been answered, and adds what every request's
/// client saw to `outcomes`, until each client is refused.
async fn stop_once(app: &TestApp, load: Load, outcomes: &mut Outcomes) {
    let host = app.address.trim_start_matches("http://").to_owned();
    let answered = Rc::new(Cell::new(0_usize));
    let requests = std::iter::repeat_n(Request::Create, load.creating).chain(std::iter::repeat_n(
        Request::Read(load.pet_id),
        load.reading,
    ));
    let clients: Vec<_> = requests
        .map(|request| {
            let (host, key, answered) = (host.clone(), app.api_key.clone(), Rc::clone(&answered));
            actix_web::rt::spawn(async move {
                let mut outcomes = Vec::new();
                loop {
                    let outcome = request.on_a_new_connection(&host, &key).await;
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
    eventually(
        GIVE_UP,
        "as many answers as there are clients",
        async || match answered.get() {
            all if all >= clients.len() => Ok(()),
            so_far => Err(so_far),
        },
    )
    .await;
    app.terminate();
    for client in clients {
        outcomes.0.extend(client.await.expect("a client"));
    }
}

/// Panics unless the pets stored are exactly `expected`: every create answered 201, and none
/// whose client was not told.
pub async fn assert_stored_exactly(app: &TestApp, expected: &[i64]) {
    let stored: HashSet<i64> = app
        .list_following_next_links("/v1/pets?limit=100")
        .await
        .iter()
        .map(|pet| pet["id"].as_i64().expect("an id"))
        .collect();
    let lost: Vec<&i64> = expected.iter().filter(|id| !stored.contains(id)).collect();
    assert!(lost.is_empty(), "answered 201 but not stored: {lost:?}");
    assert_eq!(
        stored.len(),
        expected.len(),
        "pets stored whose clients were not told"
    );
}

#[derive(Debug, Clone, Copy)]
enum Request {
    Create,
    Read(i64),
}

impl Request {
    /// Sends the request on a connection of its own and says what came back.
    async fn on_a_new_connection(self, host: &str, key: &str) -> Outcome {
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
            if let Err(err) = stream.write_all(self.bytes(host, key).as_bytes()).await {
                return Outcome::CutOff(format!("sending: {err}"));
            }
            let mut response = Vec::new();
            let ended = stream.read_to_end(&mut response).await;
            let response = String::from_utf8_lossy(&response);
            let Some((head, body)) = response.split_once("\r\n\r\n") else {
                return Outcome::CutOff(match ended {
                    Ok(_) => format!("closed after {response:?}"),
                    Err(err) => format!("{err} after {response:?}"),
                });
            };
            match (self, head.get(..13)) {
                (Self::Create, Some("HTTP/1.1 201 ")) => {
                    let pet: Value = serde_json::from_str(body).expect("a pet");
                    Outcome::Created(pet["id"].as_i64().expect("an id"))
                }
                (Self::Read(_), Some("HTTP/1.1 200 ")) => Outcome::Read,
                (_, Some("HTTP/1.1 503 ")) => {
                    assert!(
                        head.to_ascii_lowercase().contains("\r\nconnection: close"),
                        "a 503 that keeps its connection: {head}"
                    );
                    Outcome::Unavailable
                }
                _ => panic!("unexpected answer to {self:?}: {response}"),
            }
        };
        tokio::time::timeout(GIVE_UP, exchange)
            .await
            .unwrap_or_else(|_| Outcome::CutOff(format!("no answer within {GIVE_UP:?}")))
    }

    /// The whole request, asking the server to close the connection after its answer.
    fn bytes(self, host: &str, key: &str) -> String {
        match self {
            Self::Create => {
                let body = json!({"name": "Late", "categoryId": 1}).to_string();
                format!(
                    "POST /v1/pets HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                )
            }
            Self::Read(id) => format!(
                "GET /v1/pets/{id} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\
                 Connection: close\r\n\r\n"
            ),
        }
    }
}
