//! HTTP/1.1 over sockets a test controls: each connected from a loopback address of its choosing
//! (`127.0.0.2`, `127.0.0.3`, ...: each is another client address to the server), one request at
//! a time, each response read whole. Also used by the reliability suite's `connection_bound`.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Child, Stdio};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

use petstore_test_support::{client, send, start_server_logging_to};

/// A `petstore serve` process on `memory:`, killed on drop.
pub(crate) struct Server {
    child: Child,
    pub(crate) address: SocketAddr,
    pub(crate) metrics: Option<String>,
    pub(crate) key: String,
    _data_dir: tempfile::TempDir,
}

impl Server {
    /// Starts one with `settings` (`PETSTORE_*` and their values).
    pub(crate) fn start(settings: &[(&str, &str)]) -> Self {
        let data_dir = tempfile::tempdir().expect("a data directory");
        let env: Vec<(String, String)> = settings
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        let log = if std::env::var_os("TEST_LOG").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let started = start_server_logging_to(data_dir.path(), "memory:", &env, log);
        Self {
            child: started.child,
            address: started
                .address
                .trim_start_matches("http://")
                .parse()
                .expect("a socket address"),
            metrics: started.metrics_address,
            key: started.startup_key.expect("a memory: server's key"),
            _data_dir: data_dir,
        }
    }

    /// The value of one series on the metrics address: the line of `name` with every one of
    /// `labels` (`listener="api"`), 0 when there is none yet.
    pub(crate) async fn metric(&self, name: &str, labels: &[&str]) -> f64 {
        let metrics = self.metrics.as_ref().expect("a metrics address");
        let scraped = send(client().get(format!("{metrics}/metrics")), None).await;
        assert_eq!(scraped.status, 200, "{}", scraped.body);
        scraped
            .body
            .lines()
            .filter(|line| line.starts_with(&format!("{name}{{")))
            .find(|line| labels.iter().all(|label| line.contains(label)))
            .and_then(|line| line.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `n`th client address: `127.0.0.{n + 2}` (`127.0.0.1` is the test's own usual one), on to
/// `127.0.1.x` and beyond.
pub(crate) fn client_address(n: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::new(127, 0, 0, 2)) + n))
}

/// A connection to `server` from `source`.
pub(crate) async fn connect_from(source: IpAddr, server: SocketAddr) -> io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    socket.connect(server).await
}

/// One response, as read.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (header, value) = line.split_once(':')?;
            header.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// Whether the server said it closes the connection after this response.
    pub(crate) fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|value| value.eq_ignore_ascii_case("close"))
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }
}

/// Sends `GET path` (with `key` as its bearer key) and reads its response.
pub(crate) async fn get(
    stream: &mut TcpStream,
    path: &str,
    key: Option<&str>,
) -> io::Result<Response> {
    let authorization = key
        .map(|key| format!("Authorization: Bearer {key}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: petstore\r\n{authorization}\r\n");
    stream.write_all(request.as_bytes()).await?;
    read_response(stream).await
}

/// Reads one response framed by its `Content-Length`.
pub(crate) async fn read_response(stream: &mut TcpStream) -> io::Result<Response> {
    let mut received = Vec::new();
    let mut buf = [0; 4096];
    loop {
        if let Some(end) = received.windows(4).position(|bytes| bytes == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&received[..end]).into_owned();
            let mut response = Response {
                status: head
                    .split(' ')
                    .nth(1)
                    .and_then(|status| status.parse().ok())
                    .unwrap_or(0),
                head,
                body: String::new(),
            };
            let length: usize = response
                .header("content-length")
                .and_then(|length| length.parse().ok())
                .unwrap_or(0);
            if received.len() >= end + 4 + length {
                response.body =
                    String::from_utf8_lossy(&received[end + 4..end + 4 + length]).into_owned();
                return Ok(response);
            }
        }
        let read = stream.read(&mut buf).await?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "closed before a whole response: {:?}",
                    String::from_utf8_lossy(&received)
                ),
            ));
        }
        received.extend_from_slice(&buf[..read]);
    }
}

/// Whether the server closes `stream` (the end of the stream, or a reset) within `within`.
pub(crate) async fn closed_within(stream: &mut TcpStream, within: std::time::Duration) -> bool {
    let mut buf = [0; 256];
    matches!(
        tokio::time::timeout(within, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}
