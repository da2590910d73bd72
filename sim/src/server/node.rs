//! The madsim shell around a `ServerCore`: listeners, peer links, client
//! connections, the heartbeat, and fsync timing. Everything it does is
//! carry inputs to the core and outputs to the network and disk.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc;
use futures::StreamExt;
use madsim::rand::Rng;
use madsim::task::{JoinHandle, NodeId};

use super::conn::ConnId;
use super::core::{Outputs, ServerConfig, ServerCore};
use crate::disk::{Disk, FsyncTicket};
use crate::net::{connect, Listener, Sender};
use crate::proto::{PeerMsg, ToClient, ToServer};
use crate::recorder::Recorder;
use crate::tree::DataTree;
use crate::wire::WireConn;
use crate::zab::{Role, ServerId, Zxid};
use zkdst_history::CloseReason;

pub use crate::addr::{server_ip, CLIENT_PORT, PEER_PORT, WIRE_PORT};
/// Wire connections are numbered apart from typed ones.
const WIRE_CONN_BASE: ConnId = 1 << 40;

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
    /// The running server's byte-stream connections: their protocol state,
    /// used under the core's lock; shared so that a crash can record their
    /// end (each start begins with none).
    pub wires: Arc<Mutex<BTreeMap<ConnId, WireConn>>>,
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
    Client(ConnId, ToServer),
    ClientEof(ConnId),
    Wire(ConnId, Vec<u8>),
    Tick,
    Fsync(FsyncTicket),
}

/// Where a connection's replies go.
enum Sink {
    Typed(Sender<ToClient>),
    Wire(Sender<Vec<u8>>),
}

/// Open client connections: the sender of replies and the reader task.
type Conns = BTreeMap<ConnId, (Sink, JoinHandle<()>)>;

/// A running incarnation of a server, shared by its tasks. Each task hands
/// what it receives straight to the core (no hop through a central task)
/// and sends the core's outputs on.
struct Running {
    node: ServerNode,
    shell: Mutex<Shell>,
    /// The node's `wires`.
    wires: Arc<Mutex<BTreeMap<ConnId, WireConn>>>,
}

/// Where the core's outputs go.
struct Shell {
    links: BTreeMap<ServerId, Arc<PeerLink>>,
    conns: Conns,
    fsync_in_flight: bool,
    fsync_next: Option<FsyncTicket>,
    /// To the fsync task: a ticket and how long its fsync takes.
    fsyncs: mpsc::UnboundedSender<(FsyncTicket, Duration)>,
}

/// The connection to one peer, while it is up. Messages sent while it is
/// down are lost, as a reset TCP connection loses them; the link task then
/// reports the peer down so the protocol resyncs.
#[derive(Default)]
struct PeerLink {
    st: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    tx: Option<Sender<PeerMsg>>,
    lost: bool,
}

impl PeerLink {
    fn lock(&self) -> std::sync::MutexGuard<'_, LinkState> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, msg: PeerMsg) {
        let mut st = self.lock();
        let sent = st.tx.as_ref().is_some_and(|tx| tx.send(msg));
        if !sent {
            st.lost = true;
        }
    }

    /// Whether messages were lost since the last call.
    fn take_lost(&self) -> bool {
        std::mem::take(&mut self.lock().lost)
    }
}

impl ServerNode {
    /// The server is about to be killed: every wire connection it holds
    /// ends with it, and the servers' record says so.
    pub fn connections_lost(&self) {
        let wires = std::mem::take(&mut *self.wires.lock().unwrap_or_else(|e| e.into_inner()));
        for (conn, mut w) in wires {
            w.closed_by_server(CloseReason::ServerStopped);
            for event in w.take_log() {
                self.recorder.conn_event(self.cfg.id, conn, w.peer(), event);
            }
        }
    }

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
        let peer_listener = Listener::bind(peer_addr(me));
        let client_listener = Listener::bind(client_addr(me));
        let mut links: BTreeMap<ServerId, Arc<PeerLink>> = BTreeMap::new();
        for &s in self.cfg.servers.iter().filter(|s| **s != me) {
            links.insert(s, Arc::new(PeerLink::default()));
        }
        let tick = Duration::from_millis((self.cfg.tick_ms / 2).max(1));
        let (fsyncs, mut fsync_rx) = mpsc::unbounded::<(FsyncTicket, Duration)>();
        let wires = self.wires.clone();
        wires.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let srv = Arc::new(Running {
            node: self,
            shell: Mutex::new(Shell {
                links: links.clone(),
                conns: BTreeMap::new(),
                fsync_in_flight: false,
                fsync_next: None,
                fsyncs,
            }),
            wires,
        });
        let mut tasks: Vec<JoinHandle<()>> = vec![
            madsim::task::spawn(accept_peers(peer_listener, srv.clone())),
            madsim::task::spawn(accept_clients(
                client_listener,
                srv.clone(),
                0,
                Ev::Client,
                Running::accepted,
            )),
        ];
        if srv.node.cfg.wire {
            let l = Listener::bind(SocketAddr::new(server_ip(me), WIRE_PORT));
            tasks.push(madsim::task::spawn(accept_clients(
                l,
                srv.clone(),
                WIRE_CONN_BASE,
                Ev::Wire,
                Running::accepted_wire,
            )));
        }
        for (s, link) in links {
            tasks.push(madsim::task::spawn(peer_link(me, s, link, srv.clone())));
        }
        // One fsync at a time, each taking its drawn latency: one long-lived
        // task rather than a task spawned per fsync.
        let fsrv = srv.clone();
        tasks.push(madsim::task::spawn(async move {
            while let Some((t, d)) = fsync_rx.next().await {
                madsim::time::sleep(d).await;
                fsrv.handle(Ev::Fsync(t));
            }
        }));
        srv.flush(first, Vec::new());
        // The heartbeat runs here, for as long as the node lives.
        let mut iv = madsim::time::interval(tick);
        iv.tick().await;
        loop {
            iv.tick().await;
            srv.handle(Ev::Tick);
        }
    }
}

impl Running {
    fn shell(&self) -> std::sync::MutexGuard<'_, Shell> {
        self.shell.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Feeds one event to the core and sends its outputs.
    fn handle(self: &Arc<Self>, ev: Ev) {
        let node = &self.node;
        let now = node.recorder.now_ms();
        if tracing::enabled!(tracing::Level::TRACE) {
            let what = match &ev {
                Ev::Peer(f, _) => format!("message from zk{f}"),
                Ev::PeerDown(f) => format!("link to zk{f} down"),
                Ev::Client(c, _) => format!("packet on connection {c}"),
                Ev::ClientEof(c) => format!("connection {c} closed"),
                Ev::Wire(c, b) => format!("{} bytes on wire connection {c}", b.len()),
                Ev::Tick => "tick".into(),
                Ev::Fsync(..) => "fsync done".into(),
            };
            // The subscriber stamps node and virtual time.
            tracing::trace!("{what}");
        }
        match &ev {
            Ev::ClientEof(conn) => {
                self.shell().conns.remove(conn);
            }
            Ev::Fsync(_) => self.shell().fsync_in_flight = false,
            _ => {}
        }
        let out = {
            let mut guard = node.status.lock().unwrap_or_else(|e| e.into_inner());
            let Some(core) = guard.as_mut() else { return };
            match ev {
                Ev::Peer(from, msg) => core.on_peer(now, from, msg),
                Ev::PeerDown(from) => core.on_peer_disconnected(now, from),
                Ev::Client(conn, msg) => core.on_client(now, conn, msg),
                Ev::ClientEof(conn) => {
                    if let Some(mut w) = self.wires().remove(&conn) {
                        w.closed_by_client();
                        self.record_wire(conn, &mut w);
                    }
                    core.on_client_closed(conn);
                }
                Ev::Wire(conn, bytes) => {
                    if let Some(w) = self.wires().get_mut(&conn) {
                        w.receive(&bytes, core, now);
                    }
                }
                Ev::Tick => core.on_tick(now),
                Ev::Fsync(t) => {
                    if let Some(z) = node.disk.fsync(t) {
                        core.on_fsync(now, z);
                    }
                }
            }
            self.outputs(core, now)
        };
        self.flush(out.0, out.1);
    }

    fn wires(&self) -> std::sync::MutexGuard<'_, BTreeMap<ConnId, WireConn>> {
        self.wires.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The core's outputs, with the packets for wire connections turned
    /// into bytes. Answering a wire connection can feed the core again (held
    /// requests, SetWatches), so this runs until the core has nothing more.
    fn outputs(&self, core: &mut ServerCore, now: u64) -> (Outputs, Vec<(ConnId, Vec<u8>)>) {
        let mut wires = self.wires();
        if wires.is_empty() {
            return (core.take_outputs(), Vec::new());
        }
        let mut acc = Outputs::default();
        loop {
            let out = core.take_outputs();
            if out.is_empty() {
                break;
            }
            acc.peers.extend(out.peers);
            acc.disk.extend(out.disk);
            acc.applied.extend(out.applied);
            for (c, m) in out.clients {
                match wires.get_mut(&c) {
                    Some(w) => w.deliver(m, core, now),
                    None => acc.clients.push((c, m)),
                }
            }
            acc.close.extend(out.close);
        }
        let mut bytes = Vec::new();
        let mut closed = Vec::new();
        for &(c, reason) in &acc.close {
            if let Some(w) = wires.get_mut(&c) {
                w.closed_by_server(reason);
            }
        }
        for (&c, w) in wires.iter_mut() {
            let (b, close) = w.take_output();
            self.record_wire(c, w);
            if !b.is_empty() {
                bytes.push((c, b));
            }
            if let Some(reason) = close.filter(|_| !acc.close.iter().any(|&(x, _)| x == c)) {
                closed.push((c, reason));
            }
        }
        for (c, _) in acc.close.iter().chain(closed.iter()) {
            wires.remove(c);
        }
        acc.close.extend(closed);
        (acc, bytes)
    }

    /// Records what a wire connection saw since the last time: the
    /// servers' record of every connection, in the history.
    fn record_wire(&self, conn: ConnId, w: &mut WireConn) {
        for event in w.take_log() {
            self.node.recorder.conn_event(self.node.cfg.id, conn, w.peer(), event);
        }
    }

    /// A new byte-stream client connection.
    fn accepted_wire(self: &Arc<Self>, conn: ConnId, peer: NodeId, wtx: Sender<Vec<u8>>, reader: JoinHandle<()>) {
        self.shell().conns.insert(conn, (Sink::Wire(wtx), reader));
        self.wires().insert(conn, WireConn::new(conn, peer));
        let now = self.node.recorder.now_ms();
        let out = {
            let mut guard = self.node.status.lock().unwrap_or_else(|e| e.into_inner());
            let Some(core) = guard.as_mut() else { return };
            core.on_client_connected(conn);
            self.outputs(core, now)
        };
        self.flush(out.0, out.1);
    }

    /// A new client connection: registered before its first packet.
    fn accepted(self: &Arc<Self>, conn: ConnId, _peer: NodeId, wtx: Sender<ToClient>, reader: JoinHandle<()>) {
        self.shell().conns.insert(conn, (Sink::Typed(wtx), reader));
        let out = {
            let mut guard = self.node.status.lock().unwrap_or_else(|e| e.into_inner());
            let Some(core) = guard.as_mut() else { return };
            core.on_client_connected(conn);
            core.take_outputs()
        };
        self.flush(out, Vec::new());
    }

    fn flush(self: &Arc<Self>, out: Outputs, bytes: Vec<(ConnId, Vec<u8>)>) {
        let node = &self.node;
        let mut sh = self.shell();
        if !out.disk.is_empty() {
            if let Some(t) = node.disk.write(out.disk) {
                sh.fsync_next = Some(t);
            }
        }
        if !sh.fsync_in_flight {
            if let Some(t) = sh.fsync_next.take() {
                sh.fsync_in_flight = true;
                let us = madsim::rand::thread_rng().gen_range(node.fsync_us.0..=node.fsync_us.1);
                let _ = sh.fsyncs.unbounded_send((t, Duration::from_micros(us)));
            }
        }
        for change in &out.applied {
            node.recorder.tree_change(node.cfg.id, change);
        }
        for (to, msg) in out.peers {
            if let Some(l) = sh.links.get(&to) {
                l.send(msg);
            }
        }
        for (conn, msg) in out.clients {
            if let Some((Sink::Typed(w), _)) = sh.conns.get(&conn) {
                w.send(msg);
            }
        }
        for (conn, b) in bytes {
            if let Some((Sink::Wire(w), _)) = sh.conns.get(&conn) {
                w.send(b);
            }
        }
        for (conn, _) in out.close {
            // Dropping the sender closes the connection once the replies
            // queued on it are delivered.
            if let Some((_, reader)) = sh.conns.remove(&conn) {
                reader.abort();
            }
        }
    }
}

async fn accept_peers(l: Listener<PeerMsg, ()>, srv: Arc<Running>) {
    while let Some((back, mut rx)) = l.accept().await {
        let srv = srv.clone();
        madsim::task::spawn(async move {
            let _back = back;
            let Some(PeerMsg::Hello { from }) = rx.recv().await else {
                return;
            };
            while let Some(msg) = rx.recv().await {
                srv.handle(Ev::Peer(from, msg));
            }
            srv.handle(Ev::PeerDown(from));
        });
    }
}

/// Accepts client connections on `l`, numbered after `base`: each gets a
/// reader task that hands what arrives to the core as `ev(conn, msg)`, then
/// its EOF; `register` keeps its reply sender.
async fn accept_clients<Up: Send + 'static, Down: Send + 'static>(
    l: Listener<Up, Down>,
    srv: Arc<Running>,
    base: ConnId,
    ev: fn(ConnId, Up) -> Ev,
    register: fn(&Arc<Running>, ConnId, NodeId, Sender<Down>, JoinHandle<()>),
) {
    let mut next = base;
    while let Some((wtx, mut rx)) = l.accept().await {
        next += 1;
        let conn = next;
        let peer = rx.peer();
        let rsrv = srv.clone();
        let reader = madsim::task::spawn(async move {
            while let Some(msg) = rx.recv().await {
                rsrv.handle(ev(conn, msg));
            }
            rsrv.handle(Ev::ClientEof(conn));
        });
        register(&srv, conn, peer, wtx, reader);
    }
}

/// Keeps a connection to `to` open for `link`, reconnecting when it breaks.
async fn peer_link(me: ServerId, to: ServerId, link: Arc<PeerLink>, srv: Arc<Running>) {
    loop {
        let Ok((w, _r)) = connect::<PeerMsg, ()>(peer_addr(to)).await else {
            // Messages to an unreachable peer are lost: say so, as a
            // broken TCP connection would, so the protocol resyncs.
            if link.take_lost() {
                srv.handle(Ev::PeerDown(to));
            }
            madsim::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if !w.send(PeerMsg::Hello { from: me }) {
            madsim::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        // Anything sent while disconnected is lost.
        if link.take_lost() {
            srv.handle(Ev::PeerDown(to));
        }
        let closed = w.closed();
        link.lock().tx = Some(w);
        closed.await;
        link.lock().tx = None;
        srv.handle(Ev::PeerDown(to));
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
}
