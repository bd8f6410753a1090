//! Closing the API's listener without resetting a connection. Closing a listening socket resets
//! every connection still in its accept queue: connections the kernel completed, whose clients
//! have sent their requests and cannot know whether they were carried out. So at the end of the
//! drain the kernel first stops completing connections for the listener, the server takes and
//! answers what the queue holds, and only then is the listener closed.

use std::io;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

/// How often the accept queue is looked at while the server empties it.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// How long the accept queue must stay empty before the listener closes: a handshake begun before
/// SYNs were dropped completes within a round trip, and a request sent right behind its handshake
/// is read within one, so that neither is cut off by the stop.
const SETTLE: Duration = Duration::from_millis(100);

/// A second descriptor of the API's listening socket (actix-server owns the first), kept to
/// stop new connections and watch the accept queue at the end of the drain.
#[derive(Debug)]
pub(crate) struct ListenerClose {
    listener: TcpListener,
    /// The longest the queue is waited for: the shutdown timeout.
    within: Duration,
}

impl ListenerClose {
    /// Keeps a descriptor of `listener` (before it is handed to the server).
    pub(crate) fn keep(listener: &TcpListener, within: Duration) -> io::Result<Self> {
        Ok(Self {
            listener: listener.try_clone()?,
            within,
        })
    }

    /// Refuses new connections, then returns once the server has taken every connection the
    /// kernel already completed (the accept queue has stayed empty for [`SETTLE`]), or after the
    /// shutdown timeout. The server keeps accepting and answering meanwhile; the caller then
    /// stops it, which closes the listener.
    pub(crate) async fn empty_the_accept_queue(self) {
        if let Err(err) = drop_new_connections(&self.listener) {
            tracing::warn!(
                error = %err,
                "cannot stop new connections before closing the listener; connections \
                 completed as it closes are reset"
            );
            return;
        }
        let deadline = Instant::now() + self.within;
        loop {
            loop {
                match has_queued_connections(&self.listener) {
                    Ok(false) => break,
                    Ok(true) if Instant::now() < deadline => {
                        actix_web::rt::time::sleep(POLL_INTERVAL).await;
                    }
                    Ok(true) => {
                        tracing::warn!(
                            within = ?self.within,
                            "connections still wait to be accepted after the shutdown timeout; \
                             closing the listener resets them"
                        );
                        return;
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "cannot watch the listener's accept queue");
                        return;
                    }
                }
            }
            actix_web::rt::time::sleep(SETTLE).await;
            if !has_queued_connections(&self.listener).unwrap_or(false) {
                return;
            }
        }
    }
}

/// Attaches a socket filter that drops every SYN to `listener`: the kernel then completes no new
/// connection for it (a client retries its SYN and is refused once the listener is closed),
/// while the handshakes already under way complete and join the accept queue. Connections
/// completed afterwards inherit the filter, which an established connection never trips.
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

    use super::*;

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
    fn an_empty_queue_lets_the_listener_close_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let close = ListenerClose::keep(&listener, Duration::from_secs(5)).expect("keep");
        let started = Instant::now();
        actix_web::rt::System::new().block_on(close.empty_the_accept_queue());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "waited {:?} for an empty queue",
            started.elapsed()
        );
    }

    #[test]
    fn the_listener_closes_only_once_its_queued_connection_is_taken() {
        const SERVER_DELAY: Duration = Duration::from_millis(300);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        let close = ListenerClose::keep(&listener, Duration::from_secs(5)).expect("keep");
        let _queued = TcpStream::connect(address).expect("connect");
        let started = Instant::now();
        // A server that gets round to accepting a while later.
        let server = std::thread::spawn(move || {
            std::thread::sleep(SERVER_DELAY);
            listener.accept().expect("accept")
        });
        actix_web::rt::System::new().block_on(close.empty_the_accept_queue());
        let waited = started.elapsed();
        let _accepted = server.join().expect("the server thread");
        assert!(
            waited >= SERVER_DELAY + SETTLE,
            "stopped waiting after {waited:?}, with a connection in the queue"
        );
    }
}
