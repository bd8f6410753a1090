//! How an attempt connects: to one address it was given, already checked, never to a name, so
//! nothing can resolve the host a second time between the check and the connection.

use std::io;
use std::net::SocketAddr;

use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A connection's byte stream: TCP, TLS over it, or a test's fake.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

#[async_trait]
pub(crate) trait Dial: Send + Sync + 'static {
    /// A connection to exactly `address`.
    async fn dial(&self, address: SocketAddr) -> io::Result<Box<dyn Io>>;
}

/// Connects over TCP.
pub(crate) struct TcpDialer;

#[async_trait]
impl Dial for TcpDialer {
    async fn dial(&self, address: SocketAddr) -> io::Result<Box<dyn Io>> {
        let stream = TcpStream::connect(address).await?;
        // The request goes out in one write; waiting to coalesce it would only add latency.
        stream.set_nodelay(true)?;
        Ok(Box::new(stream))
    }
}
