//! The madsim shell around a `ServerCore`: listeners, peer links, client
//! connections, the heartbeat, and fsync timing. Everything it does is
//! carry inputs to the core and outputs to the network and disk.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc;
use futures::StreamExt;
use madsim::net::{TcpListener, TcpStream};
use madsim::rand::Rng;
use madsim::task::JoinHandle;

use super::conn::ConnId;
use super::core::{Outputs, ServerConfig, ServerCore};
use crate::disk::{Disk, FsyncTicket};
use crate::net::{encoded, read_frame, writer, WriteCmd};
use crate::proto::{PeerMsg, ToClient, ToServer};
use crate::recorder::Recorder;
use crate::tree::DataTree;
use crate::zab::{Role, ServerId, Zxid};

pub const CLIENT_PORT: u16 = 2181;
pub const PEER_PORT: u16 = 2888;

/// The address of server `id` on the simulated network.
pub fn server_ip(id: ServerId) -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, id as u8))
}

pub fn client_addr(id: ServerId) -> SocketAddr {
    SocketAddr::new(server_ip(id), CLIENT_PORT)
}

fn peer_addr(id: ServerId) -> SocketAddr {
    SocketAddr::new(server_ip(id), PEER_PORT)
}

/// What the rest of the world may look at: the server's role and a
/// snapshot of its applied tree (an O(1) clone).
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub role: Role,
    pub serving: bool,
    pub last_logged: Zxid,
    pub committed: Zxid,
    pub tree: DataTree,
    pub connections: usize,
    pub up: bool,
}

/// Everything a server node needs, shared by its restarts.
#[derive(Clone)]
pub struct ServerNode {
    pub cfg: ServerConfig,
    pub disk: Disk,
    pub recorder: Recorder,
    /// The running server's core, shared so that status can be read on
    /// demand (None before the first start).
    pub status: Arc<Mutex<Option<ServerCore>>>,
    /// fsync latency range, in microseconds.
    pub fsync_us: (u64, u64),
}

impl ServerStatus {
    /// A server's status, read from its core.
    pub fn of(core: &ServerCore) -> ServerStatus {
        ServerStatus {
            role: core.peer().role(),
            serving: core.is_serving(),
            last_logged: core.peer().last_zxid(),
            committed: core.peer().commit(),
            tree: core.tree().clone(),
            connections: core.connection_count(),
            up: true,
        }
    }
}

enum Ev {
    Peer(ServerId, PeerMsg),
    PeerDown(ServerId),
    Accepted(ConnId, mpsc::UnboundedSender<WriteCmd>, JoinHandle<()>),
    Client(ConnId, ToServer),
    ClientEof(ConnId),
    Tick,
    Fsync(FsyncTicket),
}

type EvTx = mpsc::UnboundedSender<Ev>;

impl ServerNode {
    /// The node's main task: runs until the node is killed.
    pub async fn run(self) {
        let me = self.cfg.id;
        let incarnation = self.disk.next_incarnation();
        let seed: u64 = madsim::rand::thread_rng().gen();
        let core = ServerCore::new(
            self.cfg.clone(),
            self.disk.load(),
            incarnation,
            seed,
            self.recorder.now_ms(),
        );
        let first = {
            let mut g = self.status.lock().unwrap_or_else(|e| e.into_inner());
            *g = Some(core);
            g.as_mut().map(|c| c.take_outputs()).unwrap_or_default()
        };
        let (tx, mut rx) = mpsc::unbounded::<Ev>();

        let mut tasks: Vec<JoinHandle<()>> = Vec::new();
        let Ok(peer_listener) = TcpListener::bind(peer_addr(me)).await else {
            return;
        };
        let Ok(client_listener) = TcpListener::bind(client_addr(me)).await else {
            return;
        };
        tasks.push(madsim::task::spawn(accept_peers(peer_listener, tx.clone())));
        tasks.push(madsim::task::spawn(accept_clients(client_listener, tx.clone())));
        let mut links: BTreeMap<ServerId, mpsc::UnboundedSender<WriteCmd>> = BTreeMap::new();
        for &s in self.cfg.servers.iter().filter(|s| **s != me) {
            let (ltx, lrx) = mpsc::unbounded();
            links.insert(s, ltx);
            tasks.push(madsim::task::spawn(peer_link(me, s, lrx, tx.clone())));
        }
        let tick = Duration::from_millis((self.cfg.tick_ms / 2).max(1));
        let ttx = tx.clone();
        tasks.push(madsim::task::spawn(async move {
            let mut iv = madsim::time::interval(tick);
            iv.tick().await;
            loop {
                iv.tick().await;
                if ttx.unbounded_send(Ev::Tick).is_err() {
                    return;
                }
            }
        }));

        let mut conns: BTreeMap<ConnId, (mpsc::UnboundedSender<WriteCmd>, JoinHandle<()>)> = BTreeMap::new();
        let mut fsync_in_flight = false;
        let mut fsync_next: Option<FsyncTicket> = None;
        self.flush(first, &links, &mut conns, &tx, &mut fsync_in_flight, &mut fsync_next);

        while let Some(ev) = rx.next().await {
            let now = self.recorder.now_ms();
            if tracing::enabled!(tracing::Level::TRACE) {
                let what = match &ev {
                    Ev::Peer(f, _) => format!("message from zk{f}"),
                    Ev::PeerDown(f) => format!("link to zk{f} down"),
                    Ev::Accepted(c, ..) => format!("client connection {c}"),
                    Ev::Client(c, _) => format!("packet on connection {c}"),
                    Ev::ClientEof(c) => format!("connection {c} closed"),
                    Ev::Tick => "tick".into(),
                    Ev::Fsync(..) => "fsync done".into(),
                };
                tracing::trace!(server = me, virtual_ms = now, "{what}");
            }
            let mut guard = self.status.lock().unwrap_or_else(|e| e.into_inner());
            let Some(core) = guard.as_mut() else { return };
            match ev {
                Ev::Peer(from, msg) => core.on_peer(now, from, msg),
                Ev::PeerDown(from) => core.on_peer_disconnected(now, from),
                Ev::Accepted(conn, wtx, reader) => {
                    conns.insert(conn, (wtx, reader));
                    core.on_client_connected(conn);
                }
                Ev::Client(conn, msg) => core.on_client(now, conn, msg),
                Ev::ClientEof(conn) => {
                    conns.remove(&conn);
                    core.on_client_closed(conn);
                }
                Ev::Tick => core.on_tick(now),
                Ev::Fsync(t) => {
                    fsync_in_flight = false;
                    if let Some(z) = self.disk.fsync(t) {
                        core.on_fsync(now, z);
                    }
                }
            }
            let out = core.take_outputs();
            drop(guard);
            self.flush(out, &links, &mut conns, &tx, &mut fsync_in_flight, &mut fsync_next);
        }
        for t in tasks {
            t.abort();
        }
    }

    fn flush(
        &self,
        out: Outputs,
        links: &BTreeMap<ServerId, mpsc::UnboundedSender<WriteCmd>>,
        conns: &mut BTreeMap<ConnId, (mpsc::UnboundedSender<WriteCmd>, JoinHandle<()>)>,
        tx: &EvTx,
        fsync_in_flight: &mut bool,
        fsync_next: &mut Option<FsyncTicket>,
    ) {
        if !out.disk.is_empty() {
            if let Some(t) = self.disk.write(out.disk) {
                *fsync_next = Some(t);
            }
        }
        if !*fsync_in_flight {
            if let Some(t) = fsync_next.take() {
                *fsync_in_flight = true;
                let us = madsim::rand::thread_rng().gen_range(self.fsync_us.0..=self.fsync_us.1);
                let tx = tx.clone();
                madsim::task::spawn(async move {
                    madsim::time::sleep(Duration::from_micros(us)).await;
                    let _ = tx.unbounded_send(Ev::Fsync(t));
                });
            }
        }
        for (zxid, logged, result) in &out.applied {
            self.recorder.commit(self.cfg.id, *zxid, logged, result);
        }
        for (to, msg) in &out.peers {
            if let Some(l) = links.get(to) {
                let _ = l.unbounded_send(encoded(msg));
            }
        }
        for (conn, msg) in &out.clients {
            if let Some((w, _)) = conns.get(conn) {
                let _ = w.unbounded_send(encoded::<ToClient>(msg));
            }
        }
        for conn in out.close {
            if let Some((w, reader)) = conns.remove(&conn) {
                let _ = w.unbounded_send(WriteCmd::Close);
                reader.abort();
            }
        }
    }
}

async fn accept_peers(l: TcpListener, tx: EvTx) {
    while let Ok((stream, _)) = l.accept().await {
        let tx = tx.clone();
        madsim::task::spawn(async move {
            let (mut r, _w) = tokio::io::split(stream);
            let mut buf = Vec::new();
            let Some(PeerMsg::Hello { from }) = read_frame::<PeerMsg>(&mut r, &mut buf).await else {
                return;
            };
            while let Some(msg) = read_frame::<PeerMsg>(&mut r, &mut buf).await {
                if tx.unbounded_send(Ev::Peer(from, msg)).is_err() {
                    return;
                }
            }
            let _ = tx.unbounded_send(Ev::PeerDown(from));
        });
    }
}

async fn accept_clients(l: TcpListener, tx: EvTx) {
    let mut next: ConnId = 0;
    while let Ok((stream, _)) = l.accept().await {
        next += 1;
        let conn = next;
        let (mut r, w) = tokio::io::split(stream);
        let (wtx, wrx) = mpsc::unbounded();
        madsim::task::spawn(writer(w, wrx));
        let rtx = tx.clone();
        let reader = madsim::task::spawn(async move {
            let mut buf = Vec::new();
            while let Some(msg) = read_frame::<ToServer>(&mut r, &mut buf).await {
                if rtx.unbounded_send(Ev::Client(conn, msg)).is_err() {
                    return;
                }
            }
            let _ = rtx.unbounded_send(Ev::ClientEof(conn));
        });
        if tx.unbounded_send(Ev::Accepted(conn, wtx, reader)).is_err() {
            return;
        }
    }
}

/// Keeps a connection to `to` and writes our messages on it. Messages
/// queued while the link is down are dropped, as a reset TCP connection
/// loses them; the protocol recovers through timeouts and resync.
async fn peer_link(me: ServerId, to: ServerId, mut rx: mpsc::UnboundedReceiver<WriteCmd>, tx: EvTx) {
    loop {
        let stream = match TcpStream::connect(peer_addr(to)).await {
            Ok(s) => s,
            Err(_) => {
                // Messages to an unreachable peer are lost: say so, as a
                // broken TCP connection would, so the protocol resyncs.
                let mut lost = false;
                while rx.try_recv().is_ok() {
                    lost = true;
                }
                if lost {
                    let _ = tx.unbounded_send(Ev::PeerDown(to));
                }
                madsim::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let (_r, mut w) = tokio::io::split(stream);
        let mut hello = Vec::new();
        crate::proto::frame::encode(&PeerMsg::Hello { from: me }, &mut hello);
        if tokio::io::AsyncWriteExt::write_all(&mut w, &hello).await.is_err()
            || tokio::io::AsyncWriteExt::flush(&mut w).await.is_err()
        {
            madsim::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        // Anything queued while disconnected is lost.
        let mut lost = false;
        while rx.try_recv().is_ok() {
            lost = true;
        }
        if lost {
            let _ = tx.unbounded_send(Ev::PeerDown(to));
        }
        let (wtx, wrx) = mpsc::unbounded();
        let writing = madsim::task::spawn(writer(w, wrx));
        loop {
            match rx.next().await {
                Some(cmd) => {
                    if wtx.unbounded_send(cmd).is_err() || writing.is_finished() {
                        break;
                    }
                }
                None => {
                    writing.abort();
                    return;
                }
            }
        }
        writing.abort();
        let _ = tx.unbounded_send(Ev::PeerDown(to));
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
}
