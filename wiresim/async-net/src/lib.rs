//! async-net's `TcpStream` over zkdst's simulated network.
//!
//! async-net resolves names on a thread pool and drives sockets through
//! async-io's reactor; neither can run under madsim. This stand-in connects
//! to the simulated ensemble's wire port (`zkdst_sim::wire::WireStream`):
//! hosts are `zk1`, `zk2`, ... or addresses on the simulated network, and
//! every fault the nemesis injects acts on the stream (a partition stalls
//! it, a crash is EOF, drop-connection and lose-reply reset it). Only what
//! zookeeper-client uses is provided.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};
use zkdst_sim::wire::WireStream;

/// Something that names a host and port, as async-net's `AsyncToSocketAddrs`.
pub trait ToHostPort {
    fn host_port(&self) -> io::Result<(String, u16)>;
}

impl ToHostPort for (&str, u16) {
    fn host_port(&self) -> io::Result<(String, u16)> {
        Ok((self.0.to_string(), self.1))
    }
}

impl ToHostPort for (String, u16) {
    fn host_port(&self) -> io::Result<(String, u16)> {
        Ok(self.clone())
    }
}

impl ToHostPort for (IpAddr, u16) {
    fn host_port(&self) -> io::Result<(String, u16)> {
        Ok((self.0.to_string(), self.1))
    }
}

impl ToHostPort for SocketAddr {
    fn host_port(&self) -> io::Result<(String, u16)> {
        Ok((self.ip().to_string(), self.port()))
    }
}

impl ToHostPort for &str {
    fn host_port(&self) -> io::Result<(String, u16)> {
        let bad = || io::Error::new(io::ErrorKind::InvalidInput, format!("not host:port: {self:?}"));
        let (host, port) = self.rsplit_once(':').ok_or_else(bad)?;
        Ok((host.to_string(), port.parse().map_err(|_| bad())?))
    }
}

/// A TCP stream to a simulated server.
#[derive(Debug)]
pub struct TcpStream {
    inner: WireStream,
}

impl TcpStream {
    pub async fn connect<A: ToHostPort>(addr: A) -> io::Result<TcpStream> {
        let (host, port) = addr.host_port()?;
        Ok(TcpStream {
            inner: WireStream::connect(&host, port).await?,
        })
    }

    /// Accepted for compatibility; the simulated network has no Nagle delay.
    pub fn set_nodelay(&self, _nodelay: bool) -> io::Result<()> {
        Ok(())
    }
}

impl AsyncRead for TcpStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}
