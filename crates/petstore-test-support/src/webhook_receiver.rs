//! A receiver for webhook deliveries in tests: an HTTPS server on 127.0.0.1 with a CA of its
//! own (its PEM file is what the server under test is told to trust) and a certificate for
//! `localhost`, 127.0.0.1 and any names a test adds. It records every request and answers them
//! in the order a test programs ([`Reply`]: a status, a delay, a redirect, a body that never
//! ends), then with its default answer. It can serve plain HTTP instead.
//!
//! It runs on a thread with a runtime of its own, so it serves whatever runtime the test uses
//! (or none), and stops when dropped.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::time::Sleep;
use tokio_rustls::TlsAcceptor;

use crate::eventually;

/// The answer to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    delay: Duration,
    headers: Vec<(String, String)>,
    body: ReplyBody,
}

#[derive(Debug, Clone)]
enum ReplyBody {
    Whole(Bytes),
    /// These bytes at once, then one more every [`TRICKLE_EVERY`] until the client goes away.
    NeverEnding(Bytes),
}

/// How often a never-ending body sends its next byte: each write to a client that has gone
/// shows the receiver the connection closed.
const TRICKLE_EVERY: Duration = Duration::from_millis(50);
/// How long a never-ending body goes on at most, so that a test that forgets it still ends.
const TRICKLE_AT_MOST: Duration = Duration::from_secs(60);

impl Reply {
    /// This status, at once, with an empty body.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
            headers: Vec::new(),
            body: ReplyBody::Whole(Bytes::new()),
        }
    }

    /// A redirect (`status` is a 3xx) to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::status(status).header("location", location)
    }

    /// The answer's head is sent this long after the request arrived.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = ReplyBody::Whole(body.into());
        self
    }

    /// A body (chunked) that starts with `first` bytes and never ends: one more byte follows
    /// now and then for as long as the client keeps the connection (a minute at most). A client
    /// that reads a body to its end waits for ever; one that stops reading closes it.
    pub fn never_ending_body(mut self, first: usize) -> Self {
        self.body = ReplyBody::NeverEnding(Bytes::from(vec![b'x'; first]));
        self
    }
}

/// A request as the receiver got it.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    pub method: String,
    /// The request line's target: path and query.
    pub target: String,
    /// In the order received, names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ReceivedRequest {
    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn header_names(&self) -> Vec<&str> {
        self.headers.iter().map(|(name, _)| name.as_str()).collect()
    }
}

#[derive(Debug)]
struct State {
    requests: Vec<ReceivedRequest>,
    replies: VecDeque<Reply>,
    default_reply: Reply,
    connections_closed: usize,
}

/// How a receiver is made: which names its certificate covers, plain HTTP or not, its answers.
#[derive(Debug)]
pub struct ReceiverBuilder {
    names: Vec<String>,
    plain_http: bool,
    replies: Vec<Reply>,
    default_reply: Reply,
}

impl ReceiverBuilder {
    /// Also a name the certificate is valid for (one a test maps to 127.0.0.1).
    pub fn name(mut self, name: &str) -> Self {
        self.names.push(name.to_owned());
        self
    }

    /// Serve plain HTTP rather than HTTPS.
    pub fn plain_http(mut self) -> Self {
        self.plain_http = true;
        self
    }

    /// The first answers, in order; see [`WebhookReceiver::answer`].
    pub fn replies(mut self, replies: impl IntoIterator<Item = Reply>) -> Self {
        self.replies.extend(replies);
        self
    }

    /// The answer once the programmed ones are used up (`204` unless set).
    pub fn default_reply(mut self, reply: Reply) -> Self {
        self.default_reply = reply;
        self
    }

    pub fn start(self) -> WebhookReceiver {
        let (ca_pem, certificate, key) = certificates(&self.names);
        let mut ca_file = tempfile::Builder::new()
            .prefix("webhook-receiver-ca-")
            .suffix(".pem")
            .tempfile()
            .unwrap();
        ca_file.write_all(ca_pem.as_bytes()).unwrap();
        ca_file.flush().unwrap();
        let acceptor = (!self.plain_http).then(|| tls_acceptor(certificate, key));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            requests: Vec::new(),
            replies: self.replies.into(),
            default_reply: self.default_reply,
            connections_closed: 0,
        }));
        let (stop, stopped) = oneshot::channel();
        let serving = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("webhook-receiver".to_owned())
            .spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap()
                    .block_on(serve(listener, acceptor, serving, stopped));
            })
            .unwrap();
        WebhookReceiver {
            address,
            plain_http: self.plain_http,
            ca_pem,
            ca_file,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

/// A running receiver; see the module's documentation.
#[derive(Debug)]
pub struct WebhookReceiver {
    address: SocketAddr,
    plain_http: bool,
    ca_pem: String,
    ca_file: tempfile::NamedTempFile,
    state: Arc<Mutex<State>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl WebhookReceiver {
    /// An HTTPS receiver for `localhost` and 127.0.0.1 answering `204` to everything.
    pub fn start() -> Self {
        Self::builder().start()
    }

    pub fn builder() -> ReceiverBuilder {
        ReceiverBuilder {
            names: vec!["localhost".to_owned(), "127.0.0.1".to_owned()],
            plain_http: false,
            replies: Vec::new(),
            default_reply: Reply::status(204),
        }
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// `https://localhost:<port><path>` (`http://` for a plain receiver).
    pub fn url(&self, path: &str) -> String {
        self.url_on("localhost", path)
    }

    /// The receiver's URL under another host name or address (`127.0.0.1`, a mapped name).
    pub fn url_on(&self, host: &str, path: &str) -> String {
        let scheme = if self.plain_http { "http" } else { "https" };
        format!("{scheme}://{host}:{}{path}", self.port())
    }

    /// The receiver's CA certificate, PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A file holding [`ca_pem`](Self::ca_pem), for the server's CA file setting; removed when
    /// the receiver is dropped.
    pub fn ca_pem_path(&self) -> &Path {
        self.ca_file.path()
    }

    /// Queues answers: the next requests get these, in order, before the default one.
    pub fn answer(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state().replies.extend(replies);
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.state().requests.clone()
    }

    /// The requests, once at least `count` arrived; panics if they have not `within` this time.
    pub async fn wait_for_requests(&self, count: usize, within: Duration) -> Vec<ReceivedRequest> {
        eventually(within, &format!("{count} webhook requests"), async || {
            let requests = self.requests();
            if requests.len() >= count {
                Ok(requests)
            } else {
                Err(format!("{} received", requests.len()))
            }
        })
        .await
    }

    /// How many connections ended (closed by the client, or broken).
    pub fn connections_closed(&self) -> usize {
        self.state().connections_closed
    }

    /// Returns once `count` connections ended; panics if they have not `within` this time.
    pub async fn wait_for_connections_closed(&self, count: usize, within: Duration) {
        eventually(within, &format!("{count} closed connections"), async || {
            let closed = self.connections_closed();
            if closed >= count {
                Ok(())
            } else {
                Err(format!("{closed} closed"))
            }
        })
        .await;
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A CA, and a certificate it signed for `names` with its key.
fn certificates(names: &[String]) -> (String, CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "petstore webhook receiver CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

    let mut params = CertificateParams::new(names.to_vec()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "petstore webhook receiver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let key = KeyPair::generate().unwrap();
    let certificate = params.signed_by(&key, &ca).unwrap();
    (
        ca.pem(),
        certificate.der().clone(),
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    )
}

fn tls_acceptor(certificate: CertificateDer<'static>, key: PrivateKeyDer<'static>) -> TlsAcceptor {
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

async fn serve(
    listener: std::net::TcpListener,
    acceptor: Option<TlsAcceptor>,
    state: Arc<Mutex<State>>,
    mut stopped: oneshot::Receiver<()>,
) {
    let listener = TcpListener::from_std(listener).unwrap();
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                // Answers go out at once, as a production receiver's do: with Nagle's rule, an
                // answer written while the TLS session tickets are unacknowledged waits for the
                // client's delayed ACK.
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    match acceptor {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                serve_connection(stream, &state).await;
                            }
                        }
                        None => serve_connection(stream, &state).await,
                    }
                    lock(&state).connections_closed += 1;
                });
            }
        }
    }
}

async fn serve_connection<S>(stream: S, state: &Arc<Mutex<State>>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let state = Arc::clone(state);
    let service = service_fn(move |request| answer(request, Arc::clone(&state)));
    // However the connection ends, it is counted as closed.
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

async fn answer(
    request: Request<Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<ReplyStream>, hyper::Error> {
    let (head, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let reply = {
        let mut state = lock(&state);
        state.requests.push(ReceivedRequest {
            method: head.method.to_string(),
            target: head
                .uri
                .path_and_query()
                .map_or_else(|| head.uri.to_string(), ToString::to_string),
            headers: head
                .headers
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: body.to_vec(),
        });
        let default_reply = state.default_reply.clone();
        state.replies.pop_front().unwrap_or(default_reply)
    };
    tokio::time::sleep(reply.delay).await;
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(name, value);
    }
    let body = match reply.body {
        ReplyBody::Whole(bytes) => ReplyStream::Whole(Some(bytes)),
        ReplyBody::NeverEnding(first) => ReplyStream::Trickle {
            first: Some(first),
            next: Box::pin(tokio::time::sleep(TRICKLE_EVERY)),
            left: TRICKLE_AT_MOST.as_millis() / TRICKLE_EVERY.as_millis(),
        },
    };
    Ok(response.body(body).unwrap())
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A reply's body as sent.
enum ReplyStream {
    Whole(Option<Bytes>),
    Trickle {
        first: Option<Bytes>,
        next: Pin<Box<Sleep>>,
        left: u128,
    },
}

impl Body for ReplyStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Whole(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Self::Trickle { first, next, left } => {
                if let Some(first) = first.take() {
                    return Poll::Ready(Some(Ok(Frame::data(first))));
                }
                if *left == 0 {
                    return Poll::Ready(None);
                }
                ready!(next.as_mut().poll(cx));
                *left -= 1;
                next.as_mut()
                    .reset(tokio::time::Instant::now() + TRICKLE_EVERY);
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Whole(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Self::Whole(bytes) => {
                hyper::body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Self::Trickle { .. } => hyper::body::SizeHint::default(),
        }
    }
}
