//! One ZooKeeper server as a pure state machine: the replication peer, the
//! applied data tree, client connections with their request queues, the
//! server-side watches, and — while leading — the speculative tree requests
//! are prepared against and the session tracker. The node shell feeds it
//! inputs with the virtual time and carries out its outputs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zkdst_recipes::zk::{ReadOp, ReadResult, SessionId, ZkError, Zxid};

use super::conn::{Conn, ConnId, ConnState, Pending, Stage};
use crate::disk::{LogTxn, SnapImage, Synced};
use crate::proto::{ForwardedWrite, LoggedTxn, PeerMsg, Request, Response, ToClient, ToServer};
use crate::replicas::TreeChange;
use crate::session::{negotiate_timeout, SessionTracker};
use crate::tree::{DataTree, PrepConfig, Txn, TxnResult, WatchManager, WriteRequest, JUTE_MAX_BUFFER};
use crate::zab::{DiskOp, Durable, Peer, Role, ServerId, Snapshot, ZabConfig};
use zkdst_history::CloseReason;

mod apply;
mod clients;
mod leader;
mod replies;

/// Virtual wall clock origin for txn timestamps (2026-01-01T00:00:00Z), so
/// ctime/mtime look like real times and stay deterministic.
pub const EPOCH_MS: i64 = 1_767_225_600_000;

/// A server's static configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub id: ServerId,
    pub servers: Vec<ServerId>,
    /// ZooKeeper's tickTime.
    pub tick_ms: u64,
    pub zab: ZabConfig,
    pub prep: PrepConfig,
    /// Return children in a random order, as a real server's HashSet does.
    pub shuffle_children: bool,
    /// How often the leader looks for empty containers and expired TTL nodes.
    pub container_check_ms: u64,
    /// A planted bug (acts only with the cargo feature `planted`).
    pub planted: Option<crate::planted::SimBug>,
    /// Listen on the wire port too (the wire module).
    pub wire: bool,
}

/// What the shell must do after an input.
#[derive(Debug, Default)]
pub struct Outputs {
    pub peers: Vec<(ServerId, PeerMsg)>,
    pub clients: Vec<(ConnId, ToClient)>,
    /// Connections the server closes, and why.
    pub close: Vec<(ConnId, CloseReason)>,
    pub disk: Vec<DiskOp<LogTxn, SnapImage>>,
    /// What happened to the applied tree, in order: transactions applied
    /// (in zxid order, with the result) and snapshots loaded.
    pub applied: Vec<TreeChange>,
}

impl Outputs {
    pub fn is_empty(&self) -> bool {
        self.peers.is_empty()
            && self.clients.is_empty()
            && self.close.is_empty()
            && self.disk.is_empty()
            && self.applied.is_empty()
    }
}

/// One server.
pub struct ServerCore {
    cfg: ServerConfig,
    peer: Peer<LogTxn, SnapImage>,
    tree: DataTree,
    /// Txns applied since the last snapshot, and how many trigger the next.
    since_snapshot: u32,
    snapshot_after: u32,
    watches: WatchManager,
    conns: BTreeMap<ConnId, Conn>,
    session_conn: BTreeMap<SessionId, ConnId>,
    /// Writes and syncs in flight from closed connections, by session
    /// (`Core::orphan_in_flight`).
    orphans: BTreeMap<SessionId, VecDeque<Pending>>,
    touched: BTreeSet<SessionId>,
    /// Leader only: committed tree + proposals in flight.
    spec: Option<DataTree>,
    tracker: SessionTracker,
    /// Leader only: syncs waiting for a commit point (target, server, session, xid).
    syncs: VecDeque<(Zxid, ServerId, SessionId, i64)>,
    /// Learner: sync replies waiting for this server to apply (zxid, session, xid).
    sync_waiting: Vec<(Zxid, SessionId, i64)>,
    rng: ChaCha8Rng,
    now_ms: u64,
    last_container_check: u64,
    incarnation: u64,
    next_session: u64,
    serving: bool,
    out: Outputs,
}

impl ServerCore {
    /// A server starting from its disk. `incarnation` distinguishes restarts
    /// (it seeds unique session ids); `seed` drives children shuffling.
    /// Recovery loads the newest durable snapshot; the logged txns after it
    /// are applied once a leader says they committed.
    pub fn new(
        cfg: ServerConfig,
        durable: Durable<LogTxn, SnapImage>,
        incarnation: u64,
        seed: u64,
        now_ms: u64,
    ) -> Self {
        let peer = Peer::new(cfg.id, cfg.servers.clone(), cfg.zab, durable);
        let tree = load_snapshot(&peer.snapshot());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let snapshot_after = snapshot_roll(&mut rng, cfg.zab.snap_count);
        let mut core = ServerCore {
            tracker: SessionTracker::new(cfg.tick_ms),
            cfg,
            peer,
            tree,
            since_snapshot: 0,
            snapshot_after,
            watches: WatchManager::new(),
            conns: BTreeMap::new(),
            session_conn: BTreeMap::new(),
            orphans: BTreeMap::new(),
            touched: BTreeSet::new(),
            spec: None,
            syncs: VecDeque::new(),
            sync_waiting: Vec::new(),
            rng,
            now_ms,
            last_container_check: now_ms,
            incarnation,
            next_session: 0,
            serving: false,
            out: Outputs::default(),
        };
        core.loaded();
        core.after_peer();
        core
    }

    // ----- accessors -----

    pub fn id(&self) -> ServerId {
        self.cfg.id
    }
    pub fn peer(&self) -> &Peer<LogTxn, SnapImage> {
        &self.peer
    }
    pub fn tree(&self) -> &DataTree {
        &self.tree
    }
    pub fn is_serving(&self) -> bool {
        self.serving
    }
    pub fn is_leader(&self) -> bool {
        self.peer.is_leader()
    }
    pub fn connection_count(&self) -> usize {
        self.conns.len()
    }
    pub fn take_outputs(&mut self) -> Outputs {
        std::mem::take(&mut self.out)
    }

    // ----- inputs -----

    /// Fault: the leader expires `session` at its next tick, as if it had
    /// not heard from it for its whole timeout. False if not the leader or
    /// the session is unknown.
    pub fn expire_session(&mut self, session: SessionId) -> bool {
        self.peer.is_leader() && self.tracker.expire_now(session)
    }

    pub fn on_tick(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        self.peer.tick();
        self.after_peer();
        if self.peer.is_leader() {
            for s in self.tracker.expire(now_ms) {
                self.leader_submit(None, s, 0, WriteRequest::CloseSession);
            }
            if now_ms >= self.last_container_check + self.cfg.container_check_ms {
                self.last_container_check = now_ms;
                self.reap_containers();
            }
        } else if let Some(leader) = self.peer.leader() {
            if self.peer.is_serving() && !self.touched.is_empty() {
                let list: Vec<SessionId> = std::mem::take(&mut self.touched).into_iter().collect();
                self.to_leader(leader, PeerMsg::Touch(list));
            }
        }
    }

    pub fn on_fsync(&mut self, now_ms: u64, synced: Synced) {
        self.now_ms = now_ms;
        if let Some(zxid) = synced.log {
            self.peer.persisted(zxid);
        }
        if let Some(zxid) = synced.snapshot {
            self.peer.snapshot_persisted(zxid);
        }
        self.after_peer();
    }

    pub fn on_peer_disconnected(&mut self, now_ms: u64, from: ServerId) {
        self.now_ms = now_ms;
        self.peer.disconnected(from);
        self.after_peer();
    }

    pub fn on_peer(&mut self, now_ms: u64, from: ServerId, msg: PeerMsg) {
        self.now_ms = now_ms;
        match msg {
            PeerMsg::Hello { .. } => {}
            PeerMsg::ToLeader { epoch, msg } => {
                // Only from a learner whose connection is still served: a
                // follower that lost us for syncLimit, and that we dropped,
                // may deliver what it queued before when the link heals.
                let current = matches!(self.peer.role(), Role::Leading { epoch: e } if e == epoch);
                if current && self.peer.is_leader() && self.peer.is_live_learner(from) {
                    self.on_peer(now_ms, from, *msg);
                }
            }
            PeerMsg::Zab(m) => {
                #[cfg(feature = "planted")]
                let m = crate::planted::tamper(self.cfg.planted, m);
                self.peer.step(from, m);
                self.after_peer();
            }
            PeerMsg::Forward { session, xid, request } => {
                if self.peer.is_leader() {
                    let req = match request {
                        ForwardedWrite::Request(r) => to_write_request(r),
                        ForwardedWrite::CreateSession { timeout_ms } => {
                            Some(WriteRequest::CreateSession { timeout_ms })
                        }
                    };
                    if let Some(req) = req {
                        self.leader_submit(Some(from), session, xid, req);
                    }
                }
            }
            PeerMsg::Touch(list) => {
                if self.peer.is_leader() {
                    for s in list {
                        self.tracker.touch(s, now_ms);
                    }
                }
            }
            PeerMsg::SyncRequest { session, xid } => self.leader_sync(from, session, xid),
            PeerMsg::SyncReply { session, xid, zxid } => {
                self.sync_waiting.push((zxid, session, xid));
                self.release_syncs();
            }
            PeerMsg::Revalidate { session, conn } => {
                if self.peer.is_leader() {
                    let timeout_ms = self.revalidate(from, session);
                    self.out.peers.push((
                        from,
                        PeerMsg::Revalidated {
                            session,
                            conn,
                            timeout_ms,
                        },
                    ));
                }
            }
            PeerMsg::Revalidated {
                session,
                conn,
                timeout_ms,
            } => self.revalidated(session, conn, timeout_ms),
        }
    }

    // ----- internals -----

    fn touch(&mut self, session: SessionId) {
        if self.peer.is_leader() {
            self.tracker.touch(session, self.now_ms);
        } else {
            self.touched.insert(session);
        }
    }

    /// Sends a learner message to our leader, stamped with our epoch.
    fn to_leader(&mut self, leader: ServerId, msg: PeerMsg) {
        if let Role::Following { epoch, .. } = self.peer.role() {
            self.out.peers.push((
                leader,
                PeerMsg::ToLeader {
                    epoch,
                    msg: Box::new(msg),
                },
            ));
        }
    }

    fn close_conn(&mut self, conn: ConnId, reason: CloseReason) {
        self.on_client_closed(conn);
        self.out.close.push((conn, reason));
    }

    /// Sends a write to the leader (or prepares it, if we lead).
    fn forward(&mut self, session: SessionId, xid: i64, request: ForwardedWrite) {
        if self.peer.is_leader() {
            let req = match request {
                ForwardedWrite::Request(r) => to_write_request(r),
                ForwardedWrite::CreateSession { timeout_ms } => Some(WriteRequest::CreateSession { timeout_ms }),
            };
            if let Some(req) = req {
                let me = self.cfg.id;
                self.leader_submit(Some(me), session, xid, req);
            }
        } else if let Some(l) = self.peer.leader() {
            self.to_leader(l, PeerMsg::Forward { session, xid, request });
        }
    }
}

/// The applied tree a snapshot holds (a structural-sharing copy).
fn load_snapshot(snap: &Snapshot<SnapImage>) -> DataTree {
    DataTree::clone(&snap.data)
}

/// Txns until the next snapshot: uniform in [snapCount/2, snapCount).
fn snapshot_roll(rng: &mut ChaCha8Rng, snap_count: u32) -> u32 {
    let half = (snap_count / 2).max(1);
    half + rng.gen_range(0..half)
}

/// The write a client request becomes (reads and syncs are not writes).
fn to_write_request(r: Request) -> Option<WriteRequest> {
    Some(match r {
        Request::Create { path, data, mode } => WriteRequest::Create { path, data, mode },
        Request::Delete { path, version } => WriteRequest::Delete { path, version },
        Request::SetData { path, data, version } => WriteRequest::SetData { path, data, version },
        Request::Multi(ops) => WriteRequest::Multi(ops),
        Request::CloseSession => WriteRequest::CloseSession,
        _ => return None,
    })
}
