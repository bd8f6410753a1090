//! [`HttpsSender`]: one webhook attempt, made so that an endpoint's URL can only ever reach the
//! address that was checked. The host is resolved once; every address must pass the
//! [`AddressPolicy`] (one refused address refuses the attempt); the connection is dialled to a
//! checked address (at most two are tried), TLS names the URL's host; one `POST` with the
//! signed headers and nothing else; no proxy is read, no redirect followed, no connection kept.
//! The whole attempt has one deadline.

mod dial;
mod request;
mod resolve;
#[cfg(test)]
mod tests;
mod tls;

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper::Response;
use hyper_util::rt::TokioIo;
use petstore_application::webhooks::{Outgoing, SendOutcome, WebhookSender};
use petstore_domain::{AddressPolicy, AttemptError, WebhookUrl};
use rustls::pki_types::ServerName;
use tokio::task::JoinHandle;
use tokio::time::{timeout, timeout_at, Instant};
use tokio_rustls::TlsConnector;
use url::Host;

use crate::settings::{SenderSettings, MAX_TIMEOUT, MIN_TIMEOUT};
use dial::{Dial, Io, TcpDialer};
use request::{outcome_of, post};
use resolve::{Resolve, SystemResolver};

/// The most addresses of a name one attempt connects to, one after the other.
const MAX_ADDRESSES_TRIED: usize = 2;
/// The most bytes of a successful answer's body read before the connection is dropped.
const MAX_BODY_READ: usize = 4 * 1024;

/// Why the sender could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SenderError {
    #[error(
        "a webhook attempt's timeout must be from {}s to {}s (got {timeout:?})",
        MIN_TIMEOUT.as_secs(),
        MAX_TIMEOUT.as_secs()
    )]
    Timeout { timeout: Duration },
    #[error(
        "no trusted root certificate was found for webhooks' HTTPS: install the system's CA \
         bundle, or point SSL_CERT_FILE at one{}",
        problems_text(.problems)
    )]
    NoRoots { problems: Vec<String> },
    #[error("cannot take the trusted certificates of {}: {reason}", path.display())]
    CaFile { path: PathBuf, reason: String },
}

fn problems_text(problems: &[String]) -> String {
    if problems.is_empty() {
        String::new()
    } else {
        format!(" ({})", problems.join("; "))
    }
}

/// Sends webhook attempts over HTTPS (or plain HTTP to loopback, where the settings allow it).
pub struct HttpsSender {
    resolver: Box<dyn Resolve>,
    dialer: Box<dyn Dial>,
    tls: TlsConnector,
    policy: AddressPolicy,
    timeout: Duration,
}

impl HttpsSender {
    /// A sender with these settings; reads the system's root certificates and the settings'
    /// CA file now, once. Fails when no root certificate is trusted at all.
    pub fn new(settings: &SenderSettings) -> Result<Self, SenderError> {
        if !(MIN_TIMEOUT..=MAX_TIMEOUT).contains(&settings.timeout) {
            return Err(SenderError::Timeout {
                timeout: settings.timeout,
            });
        }
        let config = tls::client_config(settings.ca_file.as_deref())?;
        Ok(Self::with_parts(
            Box::new(SystemResolver::new(&settings.hosts)),
            Box::new(TcpDialer),
            config,
            settings,
        ))
    }

    fn with_parts(
        resolver: Box<dyn Resolve>,
        dialer: Box<dyn Dial>,
        config: rustls::ClientConfig,
        settings: &SenderSettings,
    ) -> Self {
        Self {
            resolver,
            dialer,
            tls: TlsConnector::from(Arc::new(config)),
            policy: AddressPolicy {
                allow_loopback: settings.allow_loopback,
            },
            timeout: settings.timeout,
        }
    }

    /// An attempt's whole deadline.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Everything up to the answer's head: resolve, check, connect, TLS, the request.
    async fn head(
        &self,
        url: &WebhookUrl,
        request: hyper::Request<http_body_util::Full<bytes::Bytes>>,
        deadline: Instant,
    ) -> Result<Answer, AttemptError> {
        // A stored `http` URL outlives the setting it was registered under: without it, nothing
        // is sent in plain text.
        if !url.is_https() && !self.policy.allow_loopback {
            return Err(AttemptError::Tls);
        }
        let addresses = self.checked_addresses(url).await?;
        let stream = self.connect(&addresses, deadline).await?;
        let stream: Box<dyn Io> = if url.is_https() {
            let name = server_name(url).ok_or(AttemptError::Tls)?;
            Box::new(
                self.tls
                    .connect(name, stream)
                    .await
                    .map_err(|_| AttemptError::Tls)?,
            )
        } else {
            stream
        };
        let (mut sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| AttemptError::Protocol)?;
        let connection = Connection(tokio::spawn(async move {
            // How the connection ends shows in the answer, or its absence.
            let _ = connection.await;
        }));
        sender.ready().await.map_err(|_| AttemptError::Protocol)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| AttemptError::Protocol)?;
        Ok(Answer {
            response,
            _connection: connection,
        })
    }

    /// The addresses the URL's host stands for, each permitted by the policy: an address
    /// literal as it is, a name resolved once. Refused when any of them is not permitted.
    async fn checked_addresses(&self, url: &WebhookUrl) -> Result<Vec<SocketAddr>, AttemptError> {
        let port = url.port();
        let addresses = match url.host() {
            Host::Ipv4(address) => vec![SocketAddr::new(address.into(), port)],
            Host::Ipv6(address) => vec![SocketAddr::new(address.into(), port)],
            Host::Domain(name) => self
                .resolver
                .resolve(name, port)
                .await
                .map_err(|_| AttemptError::Dns)?,
        };
        if addresses.is_empty() {
            return Err(AttemptError::Dns);
        }
        if addresses
            .iter()
            .any(|address| self.policy.permits(address.ip()).is_err())
        {
            return Err(AttemptError::BlockedAddress);
        }
        Ok(addresses)
    }

    /// A connection to the first of the addresses that takes one, trying at most
    /// [`MAX_ADDRESSES_TRIED`]; each but the last gets its share of the time left, the last
    /// whatever remains of the deadline.
    async fn connect(
        &self,
        addresses: &[SocketAddr],
        deadline: Instant,
    ) -> Result<Box<dyn Io>, AttemptError> {
        let tried = &addresses[..addresses.len().min(MAX_ADDRESSES_TRIED)];
        for (index, &address) in tried.iter().enumerate() {
            let untried = (tried.len() - index) as u32;
            let connected = if untried == 1 {
                self.dialer.dial(address).await.ok()
            } else {
                let share = deadline.saturating_duration_since(Instant::now()) / untried;
                timeout(share, self.dialer.dial(address))
                    .await
                    .ok()
                    .and_then(Result::ok)
            };
            if let Some(stream) = connected {
                return Ok(stream);
            }
        }
        Err(AttemptError::Connect)
    }
}

#[async_trait]
impl WebhookSender for HttpsSender {
    async fn send(&self, outgoing: Outgoing) -> SendOutcome {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let failed = |error, started: Instant| SendOutcome {
            status_code: None,
            latency_ms: millis(started.elapsed()),
            error: Some(error),
            retry_after_s: None,
        };
        let url = outgoing.url.clone();
        let Some(request) = post(outgoing) else {
            return failed(AttemptError::Protocol, started);
        };
        let answer = match timeout_at(deadline, self.head(&url, request, deadline)).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => return failed(error, started),
            Err(_) => return failed(AttemptError::Timeout, started),
        };
        let outcome = outcome_of(&answer.response, millis(started.elapsed()));
        if outcome.error.is_none() {
            read_some(answer.response.into_body(), deadline).await;
        }
        outcome
    }
}

impl fmt::Debug for HttpsSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpsSender")
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// An answer's head, and the task driving its connection.
struct Answer {
    response: Response<Incoming>,
    _connection: Connection,
}

/// The task driving a connection, ended (and the connection closed) when this is dropped: no
/// connection outlives its attempt.
struct Connection(JoinHandle<()>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reads at most [`MAX_BODY_READ`] bytes of `body`, until the deadline, and forgets them: the
/// receiver's text is not kept, and reading no more bounds what a receiver can make it cost.
async fn read_some(mut body: Incoming, deadline: Instant) {
    let _ = timeout_at(deadline, async {
        let mut read = 0;
        while read < MAX_BODY_READ {
            match body.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, |data| data.len()),
                _ => break,
            }
        }
    })
    .await;
}

/// The name TLS checks the certificate for: the URL's host, a name or an address.
fn server_name(url: &WebhookUrl) -> Option<ServerName<'static>> {
    match url.host() {
        Host::Domain(name) => ServerName::try_from(name.to_owned()).ok(),
        Host::Ipv4(address) => Some(ServerName::from(std::net::IpAddr::from(address))),
        Host::Ipv6(address) => Some(ServerName::from(std::net::IpAddr::from(address))),
    }
}

fn millis(elapsed: Duration) -> u32 {
    u32::try_from(elapsed.as_millis()).unwrap_or(u32::MAX)
}
