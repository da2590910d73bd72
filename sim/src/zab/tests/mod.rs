//! The replication core under a small deterministic network of its own:
//! random delays, partitions (links stall, as TCP does), crashes that lose
//! the unsynced log tail, restarts. Checks Zab's promises: committed
//! entries agree everywhere and are never lost; a leader emerges once a
//! quorum can talk.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::disk::{Disk, FsyncTicket};

mod chaos;
mod election;
mod recovery;
mod sync;

const TICK: u64 = 50;

/// The replicated state machine of these tests: the committed entries in
/// order. A snapshot is a copy of it.
type Applied = im::Vector<Entry<u64>>;

/// Messages in flight from one server to another, with delivery times.
type Link = VecDeque<(u64, Msg<u64, Applied>)>;

struct Node {
    peer: Option<Peer<u64, Applied>>,
    disk: Disk<u64, Applied>,
    fsyncs: Vec<(u64, FsyncTicket)>,
    down_until: u64,
    applied: Applied,
    since_snapshot: u32,
    /// Entries of `applied` already checked against the global sequence.
    verified: usize,
}

/// What the run went through, to show snapshots and SNAP syncs happened.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    diffs: u64,
    truncs: u64,
    snaps: u64,
    installs: u64,
    snapshots_taken: u64,
    restarts_from_snapshot: u64,
}

struct World {
    rng: ChaCha8Rng,
    now: u64,
    ids: Vec<ServerId>,
    nodes: BTreeMap<ServerId, Node>,
    links: BTreeMap<(ServerId, ServerId), Link>,
    cut: BTreeSet<(ServerId, ServerId)>,
    committed: Vec<Entry<u64>>,
    next_value: u64,
    cfg: ZabConfig,
    counts: Counts,
}

fn last_applied(a: &Applied) -> Zxid {
    a.last().map_or(0, |e| e.zxid)
}

impl World {
    fn new(n: u32, seed: u64) -> Self {
        Self::with_config(n, seed, ZabConfig::default())
    }

    fn with_config(n: u32, seed: u64, cfg: ZabConfig) -> Self {
        let ids: Vec<ServerId> = (1..=n).collect();
        let mut nodes = BTreeMap::new();
        for &id in &ids {
            nodes.insert(
                id,
                Node {
                    peer: Some(Peer::new(id, ids.clone(), cfg, Durable::default())),
                    disk: Disk::new(),
                    fsyncs: Vec::new(),
                    down_until: 0,
                    applied: Applied::new(),
                    since_snapshot: 0,
                    verified: 0,
                },
            );
        }
        let mut w = World {
            rng: ChaCha8Rng::seed_from_u64(seed),
            now: 0,
            ids,
            nodes,
            links: BTreeMap::new(),
            cut: BTreeSet::new(),
            committed: Vec::new(),
            next_value: 1,
            cfg,
            counts: Counts::default(),
        };
        for id in w.ids.clone() {
            w.drain(id);
        }
        w
    }

    /// Applies what committed (a snapshot first, after a SNAP sync), takes
    /// periodic snapshots, then carries out the peer's outputs.
    fn drain(&mut self, id: ServerId) {
        let now = self.now;
        let lat = self.rng.gen_range(1..6);
        let fs = self.rng.gen_range(1..4);
        let snap_count = self.cfg.snap_count;
        let node = self.nodes.get_mut(&id).unwrap();
        let Some(peer) = node.peer.as_mut() else {
            return;
        };
        if let Some(snap) = peer.take_installed() {
            node.applied = snap.data;
            node.since_snapshot = 0;
            node.verified = 0;
            self.counts.installs += 1;
        }
        let applied = last_applied(&node.applied);
        if peer.commit() > applied {
            assert!(
                applied == peer.log_floor() || peer.position(applied).is_some(),
                "server {id}: applied {applied:#x} is neither the log floor nor in the log"
            );
            let (from, to) = (peer.upper_bound(applied), peer.upper_bound(peer.commit()));
            for i in from..to {
                node.applied.push_back(peer.log()[i].clone());
                node.since_snapshot += 1;
            }
            if node.since_snapshot >= snap_count {
                node.since_snapshot = 0;
                self.counts.snapshots_taken += 1;
                peer.take_snapshot(Snapshot {
                    zxid: last_applied(&node.applied),
                    data: node.applied.clone(),
                });
            }
        }
        let ops = peer.take_disk_ops();
        let msgs = peer.take_messages();
        if let Some(t) = node.disk.write(ops) {
            node.fsyncs.push((now + fs, t));
        }
        for (to, m) in msgs {
            if let Msg::Sync { kind, .. } = &m {
                match kind {
                    SyncKind::Diff => self.counts.diffs += 1,
                    SyncKind::Trunc(_) => self.counts.truncs += 1,
                    SyncKind::Snap(_) => self.counts.snaps += 1,
                }
            }
            let q = self.links.entry((id, to)).or_default();
            let at = q.back().map_or(0, |(t, _)| *t).max(now + lat);
            q.push_back((at, m));
        }
    }

    fn leader(&self) -> Option<ServerId> {
        self.nodes
            .iter()
            .find(|(_, n)| n.peer.as_ref().is_some_and(|p| p.is_leader()))
            .map(|(id, _)| *id)
    }

    fn crash(&mut self, id: ServerId, lose_unsynced: bool) {
        let until = self.now + self.rng.gen_range(100..2000);
        let node = self.nodes.get_mut(&id).unwrap();
        node.peer = None;
        node.fsyncs.clear();
        node.down_until = until;
        node.disk.crash(lose_unsynced, &mut self.rng);
        // Connections to and from it close: peers see EOF at once.
        self.links.retain(|(a, b), _| *a != id && *b != id);
        for other in self.ids.clone() {
            if other != id {
                if let Some(p) = self.nodes.get_mut(&other).unwrap().peer.as_mut() {
                    p.disconnected(id);
                }
                self.drain(other);
            }
        }
    }

    fn restart_due(&mut self) {
        for id in self.ids.clone() {
            let ids = self.ids.clone();
            let cfg = self.cfg;
            let node = self.nodes.get_mut(&id).unwrap();
            if node.peer.is_none() && node.down_until <= self.now {
                let durable = node.disk.load();
                // Recovery: the newest durable snapshot is the applied state.
                node.applied = durable.snapshots.last().map(|s| s.data.clone()).unwrap_or_default();
                node.since_snapshot = 0;
                node.verified = 0;
                if !durable.snapshots.is_empty() {
                    self.counts.restarts_from_snapshot += 1;
                }
                node.peer = Some(Peer::new(id, ids, cfg, durable));
                self.drain(id);
            }
        }
    }

    fn step(&mut self) {
        self.now += 1;
        let now = self.now;
        self.restart_due();
        // fsync completions
        for id in self.ids.clone() {
            let node = self.nodes.get_mut(&id).unwrap();
            let due: Vec<FsyncTicket> = node.fsyncs.iter().filter(|f| f.0 <= now).map(|f| f.1).collect();
            node.fsyncs.retain(|f| f.0 > now);
            for t in due {
                if let Some(synced) = node.disk.fsync(t) {
                    if let Some(p) = node.peer.as_mut() {
                        if let Some(z) = synced.log {
                            p.persisted(z);
                        }
                        if let Some(z) = synced.snapshot {
                            p.snapshot_persisted(z);
                        }
                    }
                }
            }
            self.drain(id);
        }
        // deliveries
        let keys: Vec<(ServerId, ServerId)> = self.links.keys().copied().collect();
        for (from, to) in keys {
            if self.cut.contains(&(from, to)) {
                continue;
            }
            loop {
                let q = self.links.get_mut(&(from, to)).unwrap();
                match q.front() {
                    Some((t, _)) if *t <= now => {
                        let (_, m) = q.pop_front().unwrap();
                        if let Some(p) = self.nodes.get_mut(&to).unwrap().peer.as_mut() {
                            p.step(from, m);
                        }
                        self.drain(to);
                    }
                    _ => break,
                }
            }
        }
        if now % TICK == 0 {
            for id in self.ids.clone() {
                if let Some(p) = self.nodes.get_mut(&id).unwrap().peer.as_mut() {
                    p.tick();
                }
                self.drain(id);
            }
        }
        self.check_committed();
    }

    fn propose(&mut self) {
        if let Some(l) = self.leader() {
            let v = self.next_value;
            self.next_value += 1;
            self.nodes
                .get_mut(&l)
                .unwrap()
                .peer
                .as_mut()
                .unwrap()
                .propose(v)
                .unwrap();
            self.drain(l);
        }
    }

    /// Every server's committed prefix is a prefix of one global sequence.
    fn check_committed(&mut self) {
        for id in self.ids.clone() {
            let node = self.nodes.get_mut(&id).unwrap();
            if node.peer.is_none() {
                continue;
            }
            for i in node.verified..node.applied.len() {
                let e = &node.applied[i];
                match self.committed.get(i) {
                    Some(g) => assert_eq!(
                        g, e,
                        "server {id} committed a different entry at index {i} (t={})",
                        self.now
                    ),
                    None => {
                        assert_eq!(i, self.committed.len());
                        self.committed.push(e.clone());
                    }
                }
            }
            node.verified = node.applied.len();
        }
    }

    fn partition_random(&mut self) {
        self.cut.clear();
        let ids = self.ids.clone();
        let side: Vec<bool> = ids.iter().map(|_| self.rng.gen_bool(0.5)).collect();
        for (i, a) in ids.iter().enumerate() {
            for (j, b) in ids.iter().enumerate() {
                if side[i] != side[j] {
                    self.cut.insert((*a, *b));
                }
            }
        }
    }
}

/// Snapshots every few txns and a short retained log: restarts load
/// snapshots, purges happen, and lagging or divergent followers get SNAP.
fn snappy() -> ZabConfig {
    ZabConfig {
        snap_count: 6,
        snap_retain_count: 2,
        ..ZabConfig::default()
    }
}
