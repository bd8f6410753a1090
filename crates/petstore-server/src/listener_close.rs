//! Closing the API's listener without leaving a request unanswered. Closing a listening socket
//! resets every connection still in its accept queue, and a graceful stop closes every
//! connection whose request has not started: connections whose clients have sent requests and
//! cannot tell whether they were carried out. So at the end of the drain the kernel first stops
//! completing connections for the listener, the server takes and answers what the queue holds
//! and every connection it has, and only then is it stopped.

use std::io;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use petstore_http::Connections;
use rustix::event::{poll, PollFd, PollFlags, Timespec};

/// How often the accept queue and the connections are looked at while the server empties them.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// How long nothing must be queued or unanswered before the server stops: a handshake begun
/// before SYNs were dropped completes within a round trip, and a connection just taken from the
/// queue reaches its worker (and is counted) within a thread's wake-up, since with every
/// connection answered the workers have nothing else to do.
const SETTLE: Duration = Duration::from_millis(100);

/// A second descriptor of the API's listening socket (actix-server owns the first), kept
/// before the socket is handed to the server.
#[derive(Debug)]
pub(crate) struct KeptListener(TcpListener);

impl KeptListener {
    pub(crate) fn keep(listener: &TcpListener) -> io::Result<Self> {
        listener.try_clone().map(Self)
    }

    /// The end of the drain for the server serving the listener, which waits at most `within`
    /// (the shutdown timeout).
    pub(crate) fn watching<C: Unanswered>(
        self,
        connections: C,
        within: Duration,
    ) -> ListenerClose<C> {
        ListenerClose {
            listener: self.0,
            connections,
            within,
        }
    }
}

/// What the server has not answered yet.
pub(crate) trait Unanswered {
    fn unanswered(&self) -> usize;
}

impl Unanswered for Connections {
    fn unanswered(&self) -> usize {
        Connections::unanswered(self)
    }
}

/// The listener and the server's connections, watched at the end of the drain.
#[derive(Debug)]
pub(crate) struct ListenerClose<C> {
    listener: TcpListener,
    connections: C,
    within: Duration,
}

impl<C: Unanswered> ListenerClose<C> {
    /// Refuses new connections, then returns once nothing has waited in the accept queue and
    /// every connection has been answered for [`SETTLE`], or after the shutdown timeout. The
    /// server keeps accepting and answering meanwhile (each answer closes its connection); the
    /// caller then stops it, which closes the listener.
    pub(crate) async fn wait_until_all_answered(self) {
        if let Err(err) = drop_new_connections(&self.listener) {
            tracing::warn!(
                error = %err,
                "cannot stop new connections before closing the listener; connections \
                 completed as it closes are reset"
            );
            return;
        }
        let deadline = Instant::now() + self.within;
        let mut clear_since = None;
        loop {
            let queued = match has_queued_connections(&self.listener) {
                Ok(queued) => queued,
                Err(err) => {
                    tracing::warn!(error = %err, "cannot watch the listener's accept queue");
                    return;
                }
            };
            let unanswered = self.connections.unanswered();
            let now = Instant::now();
            if queued || unanswered > 0 {
                clear_since = None;
            } else if now.duration_since(*clear_since.get_or_insert(now)) >= SETTLE {
                return;
            }
            if now >= deadline {
                tracing::warn!(
                    within = ?self.within,
                    queued,
                    unanswered,
                    "connections still wait for an answer after the shutdown timeout; the stop \
                     closes them"
                );
                return;
            }
            actix_web::rt::time::sleep(POLL_INTERVAL).await;
        }
    }
}

/// Attaches a socket filter that drops every SYN to `listener`: the kernel then completes no new
/// connection for it (a client retries its SYN and is refused once the listener is closed),
/// while the handshakes already under way complete and join the accept queue. Only SYNs: the
/// listener's filter also sees a handshake's last ACK, and a client whose ACK was dropped
/// believes it is connected, sends its request and is reset when the listener closes.
/// Connections completed afterwards inherit the filter, which an established connection never
/// trips.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn drop_new_connections(listener: &TcpListener) -> io::Result<()> {
    use socket2::{SockFilter, SockRef};

    // Classic BPF: a TCP socket's filter sees the segment from its TCP header on.
    const LOAD_BYTE_AT: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
    const JUMP_IF_ANY_BIT: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    const TCP_FLAGS_OFFSET: u32 = 13;
    const SYN: u32 = 0x02;
    let drop_syns = [
        SockFilter::new(LOAD_BYTE_AT, 0, 0, TCP_FLAGS_OFFSET),
        SockFilter::new(JUMP_IF_ANY_BIT, 0, 1, SYN),
        // Returns how many bytes to keep: none drops the segment, all keeps it.
        SockFilter::new(RETURN, 0, 0, 0),
        SockFilter::new(RETURN, 0, 0, u32::MAX),
    ];
    SockRef::from(listener).attach_filter(&drop_syns)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn drop_new_connections(_listener: &TcpListener) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "socket filters are Linux's",
    ))
}

/// Whether connections wait in `listener`'s accept queue: a listening socket polls readable
/// exactly when its queue holds one.
fn has_queued_connections(listener: &TcpListener) -> io::Result<bool> {
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now))?;
    Ok(fds[0].revents().contains(PollFlags::IN))
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::TcpStream;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    impl Unanswered for Arc<AtomicUsize> {
        fn unanswered(&self) -> usize {
            self.load(Ordering::Relaxed)
        }
    }

    /// How long the server in a test takes to get round to its connections.
    const SERVER_DELAY: Duration = Duration::from_millis(300);

    fn wait(close: ListenerClose<Arc<AtomicUsize>>) -> Duration {
        let started = Instant::now();
        actix_web::rt::System::new().block_on(close.wait_until_all_answered());
        started.elapsed()
    }

    #[test]
    fn a_listener_that_drops_syns_completes_no_new_connection_but_keeps_its_queue() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        let mut queued = TcpStream::connect(address).expect("connect");
        assert!(has_queued_connections(&listener).expect("poll"));

        drop_new_connections(&listener).expect("attach the filter");
        // Neither accepted nor refused: its SYN is dropped and would be retried.
        let late = TcpStream::connect_timeout(&address, Duration::from_millis(300));
        assert_eq!(
            late.map_err(|err| err.kind()).err(),
            Some(io::ErrorKind::TimedOut),
            "a connection was completed after SYNs were dropped"
        );

        // What the queue held is still served.
        let (mut accepted, _) = listener.accept().expect("accept");
        assert!(!has_queued_connections(&listener).expect("poll"));
        queued.write_all(b"ping").expect("send");
        let mut received = [0; 4];
        accepted.read_exact(&mut received).expect("receive");
        assert_eq!(&received, b"ping");
        accepted.write_all(b"pong").expect("answer");
        queued.read_exact(&mut received).expect("read the answer");
        assert_eq!(&received, b"pong");
    }

    #[test]
    fn with_nothing_queued_or_unanswered_the_wait_ends_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let kept = KeptListener::keep(&listener).expect("keep");
        let waited = wait(kept.watching(Arc::new(AtomicUsize::new(0)), Duration::from_secs(5)));
        assert!(
            waited < SETTLE + Duration::from_millis(500),
            "waited {waited:?} with nothing to wait for"
        );
    }

    #[test]
    fn the_wait_lasts_until_the_queued_connection_is_taken() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        let kept = KeptListener::keep(&listener).expect("keep");
        let _queued = TcpStream::connect(address).expect("connect");
        let server = std::thread::spawn(move || {
            std::thread::sleep(SERVER_DELAY);
            listener.accept().expect("accept")
        });
        let waited = wait(kept.watching(Arc::new(AtomicUsize::new(0)), Duration::from_secs(5)));
        let _accepted = server.join().expect("the server thread");
        assert!(
            waited >= SERVER_DELAY + SETTLE,
            "stopped waiting after {waited:?}, with a connection in the queue"
        );
    }

    #[test]
    fn the_wait_lasts_until_every_connection_is_answered() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let kept = KeptListener::keep(&listener).expect("keep");
        let unanswered = Arc::new(AtomicUsize::new(2));
        let server = std::thread::spawn({
            let unanswered = Arc::clone(&unanswered);
            move || {
                std::thread::sleep(SERVER_DELAY);
                unanswered.store(0, Ordering::Relaxed);
            }
        });
        let waited = wait(kept.watching(unanswered, Duration::from_secs(5)));
        server.join().expect("the server thread");
        assert!(
            waited >= SERVER_DELAY + SETTLE,
            "stopped waiting after {waited:?}, with connections unanswered"
        );
    }

    #[test]
    fn the_wait_ends_at_the_shutdown_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let kept = KeptListener::keep(&listener).expect("keep");
        let within = Duration::from_millis(300);
        let waited = wait(kept.watching(Arc::new(AtomicUsize::new(1)), within));
        assert!(
            waited >= within && waited < within + Duration::from_secs(1),
            "waited {waited:?} for a connection that is never answered"
        );
    }
}
