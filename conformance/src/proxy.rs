//! A loopback TCP proxy that injects the faults ZooKeeper clients meet:
//! listens on 127.0.0.1:0, forwards every accepted connection to one
//! upstream server, and obeys a [`FaultMode`] that can change at any time.
//!
//! - `Pass`: bytes flow both ways.
//! - `DropAll`: bytes in both directions are discarded; connections stay
//!   open. The client hears nothing, declares the connection lost after its
//!   read timeout (ConnectionLoss), cannot reconnect through the proxy, and
//!   its session expires on the server once silenced past its timeout.
//! - `DropServerToClient`: requests reach the server and are applied, the
//!   responses are lost: ConnectionLoss with the write applied (§1.10).
//!
//! A connection that lost bytes is a broken byte stream, so when the mode
//! goes back to `Pass` the proxy closes it (as a timed-out TCP connection
//! would be) instead of forwarding a misaligned stream; the client then
//! reconnects through the proxy. `close_all` closes every connection now.
//!
//! Everything runs on the tokio runtime the proxy was started on and stops
//! when the [`FaultProxy`] is dropped.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinHandle};

/// What the proxy does with the bytes it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    Pass,
    DropAll,
    DropServerToClient,
}

impl FaultMode {
    fn to_u8(self) -> u8 {
        match self {
            FaultMode::Pass => 0,
            FaultMode::DropAll => 1,
            FaultMode::DropServerToClient => 2,
        }
    }
    fn from_u8(v: u8) -> FaultMode {
        match v {
            1 => FaultMode::DropAll,
            2 => FaultMode::DropServerToClient,
            _ => FaultMode::Pass,
        }
    }
    fn drops(self, dir: Direction) -> bool {
        match (self, dir) {
            (FaultMode::Pass, _) => false,
            (FaultMode::DropAll, _) => true,
            (FaultMode::DropServerToClient, Direction::ServerToClient) => true,
            (FaultMode::DropServerToClient, Direction::ClientToServer) => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    ClientToServer,
    ServerToClient,
}

/// Byte and connection counters, for tests to check a fault really hit.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ProxyStats {
    pub accepted: u64,
    pub forwarded_to_server: u64,
    pub forwarded_to_client: u64,
    pub dropped_to_server: u64,
    pub dropped_to_client: u64,
}

#[derive(Debug, Default)]
struct Shared {
    mode: AtomicU8,
    /// Wakes pumps when the mode changes (to close tainted connections).
    mode_changed: Notify,
    conns: Mutex<Vec<Conn>>,
    accepted: AtomicU64,
    fwd_s: AtomicU64,
    fwd_c: AtomicU64,
    drop_s: AtomicU64,
    drop_c: AtomicU64,
}

#[derive(Debug)]
struct Conn {
    pumps: [AbortHandle; 2],
}

impl Shared {
    fn mode(&self) -> FaultMode {
        FaultMode::from_u8(self.mode.load(Ordering::SeqCst))
    }
}

/// The proxy. Dropping it stops the listener and closes every connection.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    acceptor: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy on 127.0.0.1:0 to `upstream` (which must be a loopback
    /// address), in `Pass` mode.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        if !upstream.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the fault proxy only forwards to loopback addresses",
            ));
        }
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let acceptor = tokio::spawn(accept_loop(listener, upstream, Arc::clone(&shared)));
        Ok(FaultProxy {
            addr,
            upstream,
            shared,
            acceptor,
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `127.0.0.1:PORT` of the proxy, for a connect string.
    pub fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    pub fn mode(&self) -> FaultMode {
        self.shared.mode()
    }

    /// Switches the mode; takes effect for the next chunk of bytes. Going
    /// back to `Pass` closes the connections that lost bytes.
    pub fn set_mode(&self, mode: FaultMode) {
        self.shared.mode.store(mode.to_u8(), Ordering::SeqCst);
        self.shared.mode_changed.notify_waiters();
    }

    /// Closes every open connection now (the clients see EOF).
    pub fn close_all(&self) {
        let conns = std::mem::take(&mut *self.shared.conns.lock().unwrap_or_else(|p| p.into_inner()));
        for c in conns {
            for p in c.pumps {
                p.abort();
            }
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ProxyStats {
        let s = &self.shared;
        ProxyStats {
            accepted: s.accepted.load(Ordering::SeqCst),
            forwarded_to_server: s.fwd_s.load(Ordering::SeqCst),
            forwarded_to_client: s.fwd_c.load(Ordering::SeqCst),
            dropped_to_server: s.drop_s.load(Ordering::SeqCst),
            dropped_to_client: s.drop_c.load(Ordering::SeqCst),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.close_all();
    }
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    loop {
        let (client, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(error = %e, "proxy accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        let server = match TcpStream::connect(upstream).await {
            Ok(s) => s,
            // The server is down: the client sees its connection closed.
            Err(_) => continue,
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (cr, cw) = client.into_split();
        let (sr, sw) = server.into_split();
        let tainted = Arc::new(AtomicBool::new(false));
        let up = tokio::spawn(pump(
            cr,
            sw,
            Direction::ClientToServer,
            Arc::clone(&shared),
            Arc::clone(&tainted),
        ));
        let down = tokio::spawn(pump(sr, cw, Direction::ServerToClient, Arc::clone(&shared), tainted));
        let mut conns = shared.conns.lock().unwrap_or_else(|p| p.into_inner());
        conns.retain(|c| !c.pumps.iter().all(|p| p.is_finished()));
        conns.push(Conn {
            pumps: [up.abort_handle(), down.abort_handle()],
        });
    }
}

/// Copies one direction of one connection, dropping bytes as the mode says.
/// Ends (closing its write half; the other pump then sees EOF) on EOF, an
/// error, or when a connection that lost bytes is back in `Pass` mode.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    dir: Direction,
    shared: Arc<Shared>,
    tainted: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            biased;
            _ = shared.mode_changed.notified() => {
                if shared.mode() == FaultMode::Pass && tainted.load(Ordering::SeqCst) {
                    break;
                }
                continue;
            }
            r = from.read(&mut buf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
        };
        let mode = shared.mode();
        if mode.drops(dir) {
            tainted.store(true, Ordering::SeqCst);
            let counter = match dir {
                Direction::ClientToServer => &shared.drop_s,
                Direction::ServerToClient => &shared.drop_c,
            };
            counter.fetch_add(n as u64, Ordering::SeqCst);
            continue;
        }
        if tainted.load(Ordering::SeqCst) {
            break;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        let counter = match dir {
            Direction::ClientToServer => &shared.fwd_s,
            Direction::ServerToClient => &shared.fwd_c,
        };
        counter.fetch_add(n as u64, Ordering::SeqCst);
    }
    let _ = to.shutdown().await;
}
