//! An ensemble under madsim, with the fault primitives the nemesis drives:
//! partitions (any set of nodes, one-way cuts too), kill/restart with loss
//! of the unsynced disk tail, pause/resume (a GC pause), link latency, and
//! — through client handles — dropped connections and lost replies.
//! Every fault is recorded in the history.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use madsim::net::NetSim;
use madsim::runtime::{Handle, NodeHandle};
use madsim::task::JoinHandle;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use zkdst_history::{ClientId, FaultEnd, FaultKind};

use crate::client::{ClientConfig, SimClient};
use crate::disk::Disk;
use crate::planted::SimBug;
use crate::recorder::Recorder;
use crate::server::node::{server_ip, ServerNode, ServerStatus};
use crate::server::ServerConfig;
use crate::tree::PrepConfig;
use crate::zab::{Role, ServerId, ZabConfig};

/// How the ensemble is built.
#[derive(Debug, Clone)]
pub struct EnsembleConfig {
    pub servers: u32,
    /// ZooKeeper's tickTime.
    pub tick_ms: u64,
    pub zab: ZabConfig,
    pub prep: PrepConfig,
    pub shuffle_children: bool,
    pub container_check_ms: u64,
    /// fsync latency range, microseconds.
    pub fsync_us: (u64, u64),
    /// A planted simulator bug (only with the cargo feature `planted`;
    /// ignored without it).
    pub planted: Option<SimBug>,
    /// Servers also listen on the wire port for byte-stream (jute) clients.
    pub wire: bool,
}

impl Default for EnsembleConfig {
    fn default() -> Self {
        EnsembleConfig {
            servers: 3,
            tick_ms: 2000,
            zab: ZabConfig::default(),
            prep: PrepConfig::default(),
            shuffle_children: true,
            container_check_ms: 60_000,
            fsync_us: (500, 3000),
            planted: None,
            wire: false,
        }
    }
}

/// A node of the simulation, for partitions and pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeRef {
    Server(ServerId),
    Client(ClientId),
}

impl std::fmt::Display for NodeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeRef::Server(s) => write!(f, "zk{s}"),
            NodeRef::Client(c) => write!(f, "client{c}"),
        }
    }
}

struct ServerSlot {
    node: NodeHandle,
    spec: ServerNode,
    up: bool,
}

struct ClientSlot {
    node: NodeHandle,
}

/// The address of client `id`.
pub fn client_ip(id: ClientId) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 1, (id / 250) as u8, (id % 250 + 1) as u8))
}

/// A running ensemble and its clients.
pub struct Cluster {
    handle: Handle,
    cfg: EnsembleConfig,
    recorder: Recorder,
    servers: BTreeMap<ServerId, ServerSlot>,
    clients: BTreeMap<ClientId, ClientSlot>,
    clogged: BTreeSet<(NodeRef, NodeRef)>,
    paused: BTreeSet<NodeRef>,
    rng: ChaCha8Rng,
    /// The plan's kind of the fault being injected (see [`Cluster::injecting`]).
    injecting: Option<FaultKind>,
}

impl Cluster {
    /// Starts `cfg.servers` servers. Call inside a madsim runtime.
    pub fn start(cfg: EnsembleConfig, recorder: Recorder, seed: u64) -> Cluster {
        crate::wire::stream::record_lost_replies(recorder.clone());
        let handle = Handle::current();
        let ids: Vec<ServerId> = (1..=cfg.servers).collect();
        let mut servers = BTreeMap::new();
        for &id in &ids {
            let spec = ServerNode {
                cfg: ServerConfig {
                    id,
                    servers: ids.clone(),
                    tick_ms: cfg.tick_ms,
                    zab: cfg.zab,
                    prep: cfg.prep.clone(),
                    shuffle_children: cfg.shuffle_children,
                    container_check_ms: cfg.container_check_ms,
                    planted: cfg.planted,
                    wire: cfg.wire,
                },
                disk: Disk::new(),
                recorder: recorder.clone(),
                status: Arc::new(Mutex::new(None)),
                wires: Arc::default(),
                fsync_us: cfg.fsync_us,
            };
            let s = spec.clone();
            let node = handle
                .create_node()
                .name(format!("zk{id}"))
                .ip(server_ip(id))
                .init(move || s.clone().run())
                .build();
            servers.insert(id, ServerSlot { node, spec, up: true });
        }
        recorder.set_meta("servers", cfg.servers.to_string());
        Cluster {
            handle,
            cfg,
            recorder,
            servers,
            clients: BTreeMap::new(),
            clogged: BTreeSet::new(),
            paused: BTreeSet::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            injecting: None,
        }
    }

    /// Runs `f`, recording the faults it injects as `kind`: the plan's
    /// word for what the mechanism serves (a partition that isolates the
    /// leader is `isolate-leader`; one that cuts a client off past its
    /// session timeout, `expire-session`). Ends are recorded as they are.
    pub fn injecting<T>(&mut self, kind: FaultKind, f: impl FnOnce(&mut Cluster) -> T) -> T {
        let outer = self.injecting.replace(kind);
        let out = f(self);
        self.injecting = outer;
        out
    }

    pub fn config(&self) -> &EnsembleConfig {
        &self.cfg
    }

    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    pub fn server_ids(&self) -> Vec<ServerId> {
        self.servers.keys().copied().collect()
    }

    pub fn client_ids(&self) -> Vec<ClientId> {
        self.clients.keys().copied().collect()
    }

    pub fn is_up(&self, id: ServerId) -> bool {
        self.servers.get(&id).is_some_and(|s| s.up)
    }

    /// The last status a server published (None before it first ran).
    pub fn status(&self, id: ServerId) -> Option<ServerStatus> {
        let slot = self.servers.get(&id)?;
        let mut st = slot
            .spec
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(ServerStatus::of)?;
        st.up = slot.up;
        Some(st)
    }

    /// What a server's disk went through (snapshots, SNAP syncs, purges).
    pub fn disk_stats(&self, id: ServerId) -> Option<crate::disk::DiskStats> {
        self.servers.get(&id).map(|s| s.spec.disk.stats())
    }

    /// The established leader with the highest epoch among running servers.
    pub fn leader(&self) -> Option<ServerId> {
        self.servers
            .keys()
            .filter(|id| self.is_up(**id) && !self.paused.contains(&NodeRef::Server(**id)))
            .filter_map(|id| {
                let st = self.status(*id)?;
                match st.role {
                    Role::Leading { epoch } if st.serving => Some((epoch, *id)),
                    _ => None,
                }
            })
            .max()
            .map(|(_, id)| id)
    }

    /// Waits (in virtual time) for an established leader.
    pub async fn wait_for_leader(&self, within: Duration) -> Option<ServerId> {
        let deadline = madsim::time::Instant::now() + within;
        loop {
            if let Some(l) = self.leader() {
                return Some(l);
            }
            if madsim::time::Instant::now() >= deadline {
                return None;
            }
            madsim::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until every server serves clients: a server still LOOKING or
    /// syncing with its leader closes new connections. False on timeout.
    pub async fn wait_serving(&self, within: Duration) -> bool {
        let deadline = madsim::time::Instant::now() + within;
        while !self
            .server_ids()
            .iter()
            .all(|&s| self.status(s).is_some_and(|st| st.serving))
        {
            if madsim::time::Instant::now() >= deadline {
                return false;
            }
            madsim::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Starts a client node running `f` with a fresh session handle.
    pub fn spawn_client<F, Fut, T>(&mut self, id: ClientId, session_timeout_ms: i32, f: F) -> JoinHandle<T>
    where
        F: FnOnce(SimClient) -> Fut + Send + 'static,
        Fut: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let node = self.client_node(id);
        let cfg = ClientConfig {
            id,
            servers: self.server_ids(),
            session_timeout_ms,
        };
        let recorder = self.recorder.clone();
        node.spawn(async move {
            let client = SimClient::connect(cfg, recorder);
            f(client).await
        })
    }

    /// The node of client `id` (created on first use), to run more tasks on.
    pub fn client_node(&mut self, id: ClientId) -> NodeHandle {
        if let Some(slot) = self.clients.get(&id) {
            return slot.node.clone();
        }
        let node = self
            .handle
            .create_node()
            .name(format!("client{id}"))
            .ip(client_ip(id))
            .build();
        self.clients.insert(id, ClientSlot { node: node.clone() });
        self.recorder.name_client_node(node.id(), id);
        node
    }

    fn node_id(&self, n: NodeRef) -> Option<madsim::task::NodeId> {
        match n {
            NodeRef::Server(s) => self.servers.get(&s).map(|x| x.node.id()),
            NodeRef::Client(c) => self.clients.get(&c).map(|x| x.node.id()),
        }
    }

    /// All nodes of the simulation.
    pub fn nodes(&self) -> Vec<NodeRef> {
        self.servers
            .keys()
            .map(|s| NodeRef::Server(*s))
            .chain(self.clients.keys().map(|c| NodeRef::Client(*c)))
            .collect()
    }

    /// Cuts traffic from `from` to `to` (one direction).
    pub fn cut(&mut self, from: NodeRef, to: NodeRef) {
        if let (Some(a), Some(b)) = (self.node_id(from), self.node_id(to)) {
            NetSim::current().clog_link(a, b);
            crate::net::clog(a, b);
            self.clogged.insert((from, to));
        }
    }

    /// Restores one direction cut by [`Cluster::cut`].
    pub fn uncut(&mut self, from: NodeRef, to: NodeRef) {
        if self.clogged.remove(&(from, to)) {
            if let (Some(a), Some(b)) = (self.node_id(from), self.node_id(to)) {
                NetSim::current().unclog_link(a, b);
                crate::net::unclog(a, b);
            }
        }
    }

    /// Splits the given nodes into groups that cannot talk to each other
    /// (both directions), replacing any earlier partition or cut. Nodes in
    /// no group keep all their links.
    pub fn partition(&mut self, groups: &[Vec<NodeRef>]) {
        self.unclog_all();
        let desc: Vec<String> = groups
            .iter()
            .map(|g| g.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(","))
            .collect();
        for (i, g) in groups.iter().enumerate() {
            for (j, h) in groups.iter().enumerate() {
                if i != j {
                    for a in g {
                        for b in h {
                            self.cut(*a, *b);
                        }
                    }
                }
            }
        }
        self.recorder.fault(
            self.injecting.unwrap_or(FaultKind::PartitionHalves),
            desc.clone(),
            format!("groups {}", desc.join(" | ")),
        );
    }

    /// Cuts one direction only, recorded as a fault.
    pub fn cut_one_way(&mut self, from: NodeRef, to: NodeRef) {
        self.cut(from, to);
        self.recorder.fault(
            self.injecting.unwrap_or(FaultKind::OneWayCut),
            vec![from.to_string(), to.to_string()],
            format!("{from} -> {to} dropped"),
        );
    }

    /// Restores every link.
    pub fn heal(&mut self) {
        self.unclog_all();
        self.recorder.fault(FaultEnd::Heal, Vec::new(), "all links restored");
    }

    fn unclog_all(&mut self) {
        let net = NetSim::current();
        for (a, b) in std::mem::take(&mut self.clogged) {
            if let (Some(x), Some(y)) = (self.node_id(a), self.node_id(b)) {
                net.unclog_link(x, y);
                crate::net::unclog(x, y);
            }
        }
    }

    /// Kills a server; with `lose_unsynced`, its disk loses the unsynced
    /// tail (keeping a random torn prefix of it).
    pub fn kill_server(&mut self, id: ServerId, lose_unsynced: bool) {
        let Some(slot) = self.servers.get_mut(&id) else {
            return;
        };
        if !slot.up {
            return;
        }
        slot.spec.connections_lost();
        self.handle.kill(slot.node.id());
        slot.up = false;
        let lost = slot.spec.disk.crash(lose_unsynced, &mut self.rng);
        self.paused.remove(&NodeRef::Server(id));
        let kind = self.injecting.unwrap_or(FaultKind::KillServer);
        self.recorder.fault(
            kind,
            vec![format!("zk{id}")],
            format!("lose_unsynced={lose_unsynced}, lost {lost} log entries"),
        );
    }

    pub fn restart_server(&mut self, id: ServerId) {
        let Some(slot) = self.servers.get_mut(&id) else {
            return;
        };
        if slot.up {
            slot.spec.connections_lost();
            self.handle.kill(slot.node.id());
        }
        self.handle.restart(slot.node.id());
        slot.up = true;
        self.recorder.fault(FaultEnd::Restart, vec![format!("zk{id}")], "");
    }

    /// Pauses a node (a stop-the-world GC pause): its tasks stop, its
    /// connections stay open.
    pub fn pause(&mut self, n: NodeRef) {
        if let Some(id) = self.node_id(n) {
            self.handle.pause(id);
            self.paused.insert(n);
            let own = match n {
                NodeRef::Server(_) => FaultKind::PauseServer,
                NodeRef::Client(_) => FaultKind::PauseClient,
            };
            self.recorder
                .fault(self.injecting.unwrap_or(own), vec![n.to_string()], "");
        }
    }

    pub fn resume(&mut self, n: NodeRef) {
        if let Some(id) = self.node_id(n) {
            if self.paused.remove(&n) {
                self.handle.resume(id);
                self.recorder.fault(FaultEnd::Resume, vec![n.to_string()], "");
            }
        }
    }

    /// Sets the one-way latency range of every link (a spike).
    pub fn set_latency(&self, min: Duration, max: Duration) {
        self.latency(min, max, self.injecting.unwrap_or(FaultKind::LatencySpike).into());
    }

    /// Sets the latency range back to `min..max` after a spike.
    pub fn restore_latency(&self, min: Duration, max: Duration) {
        self.latency(min, max, FaultEnd::RestoreLatency.into());
    }

    fn latency(&self, min: Duration, max: Duration, step: zkdst_history::FaultStep) {
        let range = min..max.max(min + Duration::from_micros(1));
        NetSim::current().update_config(|c| c.send_latency = range.clone());
        crate::net::set_latency(range);
        self.recorder
            .fault(step, Vec::new(), format!("{}..{} ms", min.as_millis(), max.as_millis()));
    }

    /// Resumes everything, restarts dead servers, heals the network.
    pub fn heal_all(&mut self) {
        let paused: Vec<NodeRef> = self.paused.iter().copied().collect();
        for n in paused {
            self.resume(n);
        }
        let down: Vec<ServerId> = self.servers.iter().filter(|(_, s)| !s.up).map(|(id, _)| *id).collect();
        for id in down {
            self.restart_server(id);
        }
        self.heal();
    }

    /// Force-expires a session: the current leader expires it at its next
    /// tick (its ephemerals go in one close txn; the client learns Expired
    /// when it next reconnects). False if there is no leader or it does not
    /// know the session.
    pub fn expire_session(&mut self, session: zkdst_recipes::zk::SessionId) -> bool {
        let Some(l) = self.leader() else { return false };
        let Some(slot) = self.servers.get(&l) else { return false };
        let done = slot
            .spec
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .is_some_and(|c| c.expire_session(session));
        if done {
            self.recorder.fault(
                FaultKind::ExpireSession,
                vec![format!("{session:#x}")],
                format!("the leader zk{l} expires it"),
            );
        }
        done
    }

    /// Stops every node (so pending tasks do not outlive the run).
    pub fn shutdown(&mut self) {
        for slot in self.servers.values_mut() {
            self.handle.kill(slot.node.id());
            slot.up = false;
        }
        for slot in self.clients.values() {
            self.handle.kill(slot.node.id());
        }
    }
}
