//! A client's byte stream to a simulated server: TCP as the simulated
//! network models it (ordered, latency, stalls under a partition, EOF when
//! the server dies), with futures-io's `AsyncRead`/`AsyncWrite` so a real
//! client library can run over it.
//!
//! Writes complete at once (the bytes are queued on the link): a client
//! that writes inside a `select!` and drops the write loses nothing.
//!
//! The connection faults a typed client takes through its handle act here,
//! per client node, without the client library's knowledge:
//! - [`reset_connections`]: every stream of the node is reset (the server
//!   sees EOF, the client's next read or write fails);
//! - [`lose_next_write_reply`]: the next write request's reply is replaced
//!   by a reset when it arrives — the server applied it, the client never
//!   hears (ZOOKEEPER-22).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

use futures::io::{AsyncRead, AsyncWrite};
use madsim::task::NodeId;
use zkdst_wire::{peek_xid, OpCode, RequestHeader};

use crate::addr::{server_ip, WIRE_PORT};
use crate::net::{self, Receiver, Sender};
use crate::recorder::Recorder;

/// A connection to a simulated server's wire port.
pub struct WireStream {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    tx: Option<Sender<Vec<u8>>>,
    rx: Option<Receiver<Vec<u8>>>,
    /// Received bytes not yet read.
    rbuf: Vec<u8>,
    rpos: usize,
    reset: bool,
    /// The reader waiting on a reset stream's data.
    waker: Option<Waker>,
    /// Frames the client sent: past the ConnectRequest, each request's
    /// header says whether it is a write.
    sent: Frames,
    /// Frames received: reply headers, to catch the one to lose.
    recvd: Frames,
    lose_armed: bool,
    lose_xid: Option<i32>,
    /// The client node that opened it.
    node: NodeId,
}

/// Live streams per client node, for the nemesis's connection faults.
#[derive(Default)]
struct Registry {
    streams: BTreeMap<NodeId, Vec<Weak<Mutex<Inner>>>>,
    lose_armed: BTreeMap<NodeId, bool>,
    /// Where a lost reply is recorded.
    recorder: Option<Recorder>,
}

thread_local! {
    // One runtime per thread; streams of a finished runtime are dead weak
    // references, pruned as they are met.
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Clears the registry: call when a simulation starts on this thread.
pub fn reset_registry() {
    REGISTRY.with(|r| *r.borrow_mut() = Registry::default());
}

/// Records the replies lose-reply drops in `recorder`'s history (the
/// cluster sets it as it starts).
pub fn record_lost_replies(recorder: Recorder) {
    REGISTRY.with(|r| r.borrow_mut().recorder = Some(recorder));
}

/// Resolves a host name the way the simulation names servers: `zkN` or
/// an IP address on the simulated network.
pub fn resolve(host: &str, port: u16) -> io::Result<SocketAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    if let Some(id) = host.strip_prefix("zk").and_then(|n| n.parse::<u32>().ok()) {
        if (1..=255).contains(&id) {
            return Ok(SocketAddr::new(server_ip(id), port));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("unknown host {host:?} on the simulated network (use zk1, zk2, ... or an IP address)"),
    ))
}

/// The connect string for a simulated ensemble of `servers` servers.
pub fn connect_string(servers: u32) -> String {
    (1..=servers)
        .map(|s| format!("zk{s}:{WIRE_PORT}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl WireStream {
    /// Connects to `host:port` on the simulated network. Fails at once if
    /// nobody listens there or the link is cut, as madsim's TCP does.
    pub async fn connect(host: &str, port: u16) -> io::Result<WireStream> {
        let addr = resolve(host, port)?;
        let (tx, rx) = net::connect::<Vec<u8>, Vec<u8>>(addr).await?;
        let node = madsim::plugin::node();
        let lose_armed = REGISTRY.with(|r| r.borrow_mut().lose_armed.remove(&node).unwrap_or(false));
        let inner = Arc::new(Mutex::new(Inner {
            tx: Some(tx),
            rx: Some(rx),
            rbuf: Vec::new(),
            rpos: 0,
            reset: false,
            waker: None,
            sent: Frames::default(),
            recvd: Frames::default(),
            lose_armed,
            lose_xid: None,
            node,
        }));
        REGISTRY.with(|r| {
            let mut r = r.borrow_mut();
            let list = r.streams.entry(node).or_default();
            list.retain(|w| w.strong_count() > 0);
            list.push(Arc::downgrade(&inner));
        });
        Ok(WireStream { inner })
    }
}

impl std::fmt::Debug for WireStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireStream")
    }
}

impl Inner {
    fn do_reset(&mut self) {
        self.reset = true;
        self.tx = None;
        self.rx = None;
        self.rbuf.clear();
        self.rpos = 0;
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    /// Watches the client's frames for the write whose reply is to be lost.
    fn tap_sent(&mut self, bytes: &[u8]) {
        let armed = self.lose_armed;
        let mut target = None;
        self.sent.push(bytes, |index, head| {
            // Frame 0 is the ConnectRequest, which has no request header.
            if armed && index > 0 && target.is_none() {
                if let Some(h) = RequestHeader::peek(head) {
                    if OpCode::from_i32(h.op_type).is_some_and(OpCode::is_write) {
                        target = Some(h.xid);
                    }
                }
            }
        });
        if target.is_some() {
            self.lose_armed = false;
            self.lose_xid = target;
        }
    }

    /// Whether a chunk from the server carries the reply to lose.
    fn tap_received(&mut self, bytes: &[u8]) -> bool {
        let lose = self.lose_xid;
        let mut hit = false;
        self.recvd.push(bytes, |index, head| {
            // Frame 0 is the ConnectResponse; replies start with their xid.
            if lose.is_some() && index > 0 && peek_xid(head) == lose {
                hit = true;
            }
        });
        hit
    }
}

/// Follows the frame boundaries of one direction of a stream without
/// copying or allocating (it sees every byte the client sends or gets):
/// hands over the first bytes of each frame's payload — enough for a
/// request or reply header — with the frame's index.
#[derive(Default)]
struct Frames {
    len: [u8; 4],
    len_have: usize,
    remaining: usize,
    head: [u8; 8],
    head_have: usize,
    index: u64,
}

impl Frames {
    fn push(&mut self, mut bytes: &[u8], mut on_frame: impl FnMut(u64, &[u8])) {
        while !bytes.is_empty() {
            if self.len_have < 4 {
                let take = (4 - self.len_have).min(bytes.len());
                self.len[self.len_have..self.len_have + take].copy_from_slice(&bytes[..take]);
                self.len_have += take;
                bytes = &bytes[take..];
                if self.len_have == 4 {
                    // A negative length is the server's to refuse; here it
                    // ends the frame.
                    self.remaining = usize::try_from(i32::from_be_bytes(self.len)).unwrap_or(0);
                    self.head_have = 0;
                }
            } else {
                let take = self.remaining.min(bytes.len());
                let h = (self.head.len() - self.head_have).min(take);
                self.head[self.head_have..self.head_have + h].copy_from_slice(&bytes[..h]);
                self.head_have += h;
                self.remaining -= take;
                bytes = &bytes[take..];
            }
            if self.len_have == 4 && self.remaining == 0 {
                on_frame(self.index, &self.head[..self.head_have]);
                self.index += 1;
                self.len_have = 0;
            }
        }
    }
}

fn reset_error() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "connection reset (simulated)")
}

impl AsyncRead for WireStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut g = lock(&self.inner);
        loop {
            if g.reset {
                return Poll::Ready(Err(reset_error()));
            }
            if g.rpos < g.rbuf.len() {
                let n = buf.len().min(g.rbuf.len() - g.rpos);
                let start = g.rpos;
                buf[..n].copy_from_slice(&g.rbuf[start..start + n]);
                g.rpos += n;
                if g.rpos == g.rbuf.len() {
                    g.rbuf.clear();
                    g.rpos = 0;
                }
                return Poll::Ready(Ok(n));
            }
            let Some(rx) = g.rx.as_mut() else {
                return Poll::Ready(Ok(0));
            };
            match rx.poll_recv(cx) {
                Poll::Pending => {
                    g.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Poll::Ready(None) => return Poll::Ready(Ok(0)),
                Poll::Ready(Some(bytes)) => {
                    if g.tap_received(&bytes) {
                        if let Some(xid) = g.lose_xid.take() {
                            let rec = REGISTRY.with(|r| r.borrow().recorder.clone());
                            if let Some(rec) = rec {
                                rec.reply_lost(g.node, xid);
                            }
                        }
                        g.do_reset();
                        continue;
                    }
                    g.rbuf = bytes;
                    g.rpos = 0;
                }
            }
        }
    }
}

impl AsyncWrite for WireStream {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut g = lock(&self.inner);
        if g.reset {
            return Poll::Ready(Err(reset_error()));
        }
        g.tap_sent(buf);
        let sent = g.tx.as_ref().is_some_and(|tx| tx.send(buf.to_vec()));
        if !sent {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "connection closed by the server",
            )));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        lock(&self.inner).tx = None;
        Poll::Ready(Ok(()))
    }
}

/// Resets every wire connection of client node `node` (drop-connection).
pub fn reset_connections(node: NodeId) -> usize {
    let live: Vec<Arc<Mutex<Inner>>> = REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        let list = r.streams.entry(node).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.iter().filter_map(Weak::upgrade).collect()
    });
    let mut n = 0;
    for s in live {
        let mut g = lock(&s);
        if !g.reset {
            g.do_reset();
            n += 1;
        }
    }
    n
}

/// Loses the reply to the next write request a stream of `node` sends
/// (lose-reply): on its live streams, or on the next one it opens.
pub fn lose_next_write_reply(node: NodeId) {
    let live: Vec<Arc<Mutex<Inner>>> = REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        let list = r.streams.entry(node).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.iter().filter_map(Weak::upgrade).collect()
    });
    let mut armed = false;
    for s in live {
        let mut g = lock(&s);
        if !g.reset {
            g.lose_armed = true;
            armed = true;
        }
    }
    if !armed {
        REGISTRY.with(|r| r.borrow_mut().lose_armed.insert(node, true));
    }
}

#[cfg(test)]
mod tests {
    use super::Frames;
    use zkdst_wire::frame::encode_frame;

    /// The heads and indexes seen, however the stream is cut into chunks.
    fn heads(stream: &[u8], chunk: usize) -> Vec<(u64, Vec<u8>)> {
        let mut f = Frames::default();
        let mut out = Vec::new();
        for c in stream.chunks(chunk) {
            f.push(c, |i, h| out.push((i, h.to_vec())));
        }
        out
    }

    #[test]
    fn frame_heads_do_not_depend_on_chunking() {
        let mut stream = encode_frame(b"0123456789abcdef");
        stream.extend(encode_frame(b""));
        stream.extend(encode_frame(b"xyz"));
        let want = vec![(0, b"01234567".to_vec()), (1, Vec::new()), (2, b"xyz".to_vec())];
        for chunk in 1..=stream.len() {
            assert_eq!(heads(&stream, chunk), want, "chunks of {chunk}");
        }
    }
}
