//! One server's replication state machine: election, then Zab's discovery,
//! synchronization and broadcast phases. Pure: the shell feeds it messages,
//! ticks and fsync completions, and carries out what it asks for (messages
//! to send, disk writes, the commit point to apply up to). Shaped like
//! raft-rs/etcd-raft: input → state change → outputs to drain.
//!
//! Safety rests on Zab, not on the election: a leader establishes a new
//! epoch with a quorum that promised not to accept older epochs, abandons
//! leadership if any of them is ahead of it, syncs them to its history,
//! and only then commits. The election only picks a likely candidate.

mod election;
mod follower;
mod inputs;
mod leader;

use std::collections::BTreeMap;

use super::log::{DiskOp, Entry, Snapshot, SyncKind, SyncPlan, TxnLog};
use super::msg::{epoch_of, make_zxid, Msg, PeerState, ServerId, Vote, Zxid};

/// Timing, in ticks of the shell's heartbeat, and the snapshot policy.
#[derive(Debug, Clone, Copy)]
pub struct ZabConfig {
    /// Ticks a leader may spend in discovery + sync, and a follower may wait
    /// for its leader to get there.
    pub init_limit: u32,
    /// Ticks of silence after which a follower abandons its leader, or a
    /// leader drops a follower.
    pub sync_limit: u32,
    /// Ticks to wait for a better vote once a quorum agrees.
    pub finalize_ticks: u32,
    /// Ticks between re-broadcasts of a vote while looking.
    pub resend_ticks: u32,
    /// ZooKeeper's snapCount: a server snapshots its applied tree after
    /// about this many txns (a random point in [snapCount/2, snapCount),
    /// so servers do not all snapshot at once).
    pub snap_count: u32,
    /// ZooKeeper's autopurge.snapRetainCount: durable snapshots kept; the
    /// log is purged up to the oldest, so a follower within about
    /// (snapRetainCount - 1) × snapCount txns still gets a DIFF.
    pub snap_retain_count: usize,
}

impl Default for ZabConfig {
    fn default() -> Self {
        ZabConfig {
            init_limit: 20,
            sync_limit: 10,
            finalize_ticks: 1,
            resend_ticks: 4,
            // ZooKeeper's 100,000 scaled to simulated runs of a few
            // thousand txns: big trees are rare, restarts are not.
            snap_count: 1000,
            snap_retain_count: 3,
        }
    }
}

/// What survives a restart: the epochs, the durable snapshots (oldest
/// first), and the log after `floor` (every txn after it is in `log`).
/// The newest snapshot is at most the last logged zxid.
#[derive(Debug, Clone, PartialEq)]
pub struct Durable<T: Clone, S> {
    pub accepted_epoch: u32,
    pub current_epoch: u32,
    pub snapshots: Vec<Snapshot<S>>,
    pub floor: Zxid,
    pub log: im::Vector<Entry<T>>,
}

impl<T: Clone, S> Default for Durable<T, S> {
    fn default() -> Self {
        Durable {
            accepted_epoch: 0,
            current_epoch: 0,
            snapshots: Vec::new(),
            floor: 0,
            log: im::Vector::new(),
        }
    }
}

/// The server's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Looking,
    Following { leader: ServerId, epoch: u32 },
    Leading { epoch: u32 },
}

#[derive(Debug)]
struct Looking {
    round: u64,
    vote: Vote,
    votes: BTreeMap<ServerId, Vote>,
    agreed_at: Option<u64>,
    last_sent: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FollowerPhase {
    /// Sent FollowerInfo, waiting for LeaderInfo.
    Discovery,
    /// Acked the epoch, waiting for Sync.
    AwaitSync,
    /// Got Sync; waiting for our disk before acking NEWLEADER, then UpToDate.
    Syncing { ack_zxid: Zxid, acked: bool },
    /// Serving.
    Broadcast,
}

#[derive(Debug)]
struct Following {
    leader: ServerId,
    epoch: u32,
    phase: FollowerPhase,
    silent: u32,
    age: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeaderPhase {
    Discovery,
    AckEpochs,
    Sync,
    Broadcast,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Info {
        accepted_epoch: u32,
    },
    AckedEpoch {
        current_epoch: u32,
        last_zxid: Zxid,
        counts: bool,
    },
    /// Sync sent; proposals flow to it from now on.
    Syncing,
    Synced,
}

#[derive(Debug)]
struct Learner {
    stage: Stage,
    matched: Zxid,
    silent: u32,
}

impl Learner {
    /// Sync sent or done: proposals flow to it and its acks count — the
    /// learners whose connection a real leader's LearnerHandler serves.
    fn is_live(&self) -> bool {
        matches!(self.stage, Stage::Syncing | Stage::Synced)
    }
}

#[derive(Debug)]
struct Leading {
    epoch: u32,
    phase: LeaderPhase,
    learners: BTreeMap<ServerId, Learner>,
    age: u32,
    counter: u32,
}

#[derive(Debug)]
enum State {
    Looking(Looking),
    Following(Following),
    Leading(Leading),
}

/// One server's replication state machine.
#[derive(Debug)]
pub struct Peer<T: Clone, S: Clone + Default> {
    id: ServerId,
    servers: Vec<ServerId>,
    cfg: ZabConfig,
    accepted_epoch: u32,
    current_epoch: u32,
    log: TxnLog<T, S>,
    /// A SNAP sync replaced the log: the shell must reload its state.
    installed: Option<Snapshot<S>>,
    persisted: Zxid,
    commit: Zxid,
    state: State,
    now: u64,
    round: u64,
    outbox: Vec<(ServerId, Msg<T, S>)>,
    disk: Vec<DiskOp<T, S>>,
}

/// Why `propose` refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an established leader")]
pub struct NotLeader;

impl<T: Clone, S: Clone + Default> Peer<T, S> {
    /// A server starting (or restarting) from its durable state. It starts
    /// looking for a leader. Its newest snapshot holds only committed txns:
    /// that much is known committed at once.
    pub fn new(id: ServerId, servers: Vec<ServerId>, cfg: ZabConfig, durable: Durable<T, S>) -> Self {
        let log = TxnLog::new(durable.log, durable.floor, durable.snapshots, cfg.snap_retain_count);
        let persisted = log.last_zxid();
        let commit = log.snapshot_zxid();
        let mut p = Peer {
            id,
            servers,
            cfg,
            accepted_epoch: durable.accepted_epoch,
            current_epoch: durable.current_epoch,
            log,
            installed: None,
            persisted,
            commit,
            state: State::Looking(Looking {
                round: 0,
                vote: Vote {
                    round: 0,
                    leader: id,
                    leader_epoch: 0,
                    leader_zxid: 0,
                    state: PeerState::Looking,
                },
                votes: BTreeMap::new(),
                agreed_at: None,
                last_sent: 0,
            }),
            now: 0,
            round: 0,
            outbox: Vec::new(),
            disk: Vec::new(),
        };
        p.become_looking();
        p
    }

    // ----- accessors -----

    pub fn id(&self) -> ServerId {
        self.id
    }
    pub fn role(&self) -> Role {
        match &self.state {
            State::Looking(_) => Role::Looking,
            State::Following(f) => Role::Following {
                leader: f.leader,
                epoch: f.epoch,
            },
            State::Leading(l) => Role::Leading { epoch: l.epoch },
        }
    }
    /// True when this server may serve clients: an established leader, or a
    /// follower its leader declared up to date.
    pub fn is_serving(&self) -> bool {
        match &self.state {
            State::Leading(l) => l.phase == LeaderPhase::Broadcast,
            State::Following(f) => f.phase == FollowerPhase::Broadcast,
            State::Looking(_) => false,
        }
    }
    pub fn is_leader(&self) -> bool {
        matches!(&self.state, State::Leading(l) if l.phase == LeaderPhase::Broadcast)
    }
    /// Leader: whether `s` is a live learner. One dropped for silence
    /// (syncLimit) has had its socket closed: what it sent before must not
    /// be acted on, even if it arrives after it rejoined in the same epoch.
    pub fn is_live_learner(&self, s: ServerId) -> bool {
        match &self.state {
            State::Leading(l) => l.learners.get(&s).is_some_and(Learner::is_live),
            _ => false,
        }
    }
    pub fn leader(&self) -> Option<ServerId> {
        match &self.state {
            State::Following(f) => Some(f.leader),
            State::Leading(_) => Some(self.id),
            State::Looking(_) => None,
        }
    }
    /// The log after the purge point (`log_floor`).
    pub fn log(&self) -> &im::Vector<Entry<T>> {
        self.log.entries()
    }
    /// Txns at or before this zxid were purged from the log.
    pub fn log_floor(&self) -> Zxid {
        self.log.floor()
    }
    /// The newest durable snapshot (the empty state at zxid 0 if none).
    pub fn snapshot(&self) -> Snapshot<S> {
        self.log.snapshot()
    }
    pub fn last_zxid(&self) -> Zxid {
        self.log.last_zxid()
    }
    pub fn commit(&self) -> Zxid {
        self.commit
    }
    pub fn current_epoch(&self) -> u32 {
        self.current_epoch
    }
    pub fn accepted_epoch(&self) -> u32 {
        self.accepted_epoch
    }
    /// Messages to send, in order.
    pub fn take_messages(&mut self) -> Vec<(ServerId, Msg<T, S>)> {
        std::mem::take(&mut self.outbox)
    }
    /// Disk writes to make, in order.
    pub fn take_disk_ops(&mut self) -> Vec<DiskOp<T, S>> {
        std::mem::take(&mut self.disk)
    }
    /// The snapshot a SNAP sync installed since the last call: the shell
    /// replaces its applied state with it.
    pub fn take_installed(&mut self) -> Option<Snapshot<S>> {
        self.installed.take()
    }
    /// Index in the log of the entry with `zxid`.
    pub fn position(&self, zxid: Zxid) -> Option<usize> {
        self.log.position(zxid)
    }
    /// Number of log entries with zxid ≤ `zxid`.
    pub fn upper_bound(&self, zxid: Zxid) -> usize {
        self.log.upper_bound(zxid)
    }

    fn quorum(&self) -> usize {
        self.servers.len() / 2 + 1
    }
    fn others(&self) -> Vec<ServerId> {
        self.servers.iter().copied().filter(|s| *s != self.id).collect()
    }
    fn send(&mut self, to: ServerId, msg: Msg<T, S>) {
        self.outbox.push((to, msg));
    }
    fn self_vote(&self, round: u64) -> Vote {
        Vote {
            round,
            leader: self.id,
            leader_epoch: self.current_epoch,
            leader_zxid: self.last_zxid(),
            state: PeerState::Looking,
        }
    }
    fn state_vote(&self) -> Vote {
        match &self.state {
            State::Looking(l) => l.vote,
            State::Following(f) => Vote {
                round: self.round,
                leader: f.leader,
                leader_epoch: f.epoch,
                leader_zxid: self.last_zxid(),
                state: PeerState::Following,
            },
            State::Leading(l) => Vote {
                round: self.round,
                leader: self.id,
                leader_epoch: l.epoch,
                leader_zxid: self.last_zxid(),
                state: PeerState::Leading,
            },
        }
    }

    // ----- durable changes -----

    fn set_epochs(&mut self, accepted: u32, current: u32) {
        self.accepted_epoch = accepted;
        self.current_epoch = current;
        self.disk.push(DiskOp::SetEpochs { accepted, current });
    }
    fn append(&mut self, entry: Entry<T>) {
        self.log.append(entry, &mut self.disk);
    }
    fn truncate_after(&mut self, zxid: Zxid) {
        if self.log.truncate_after(zxid, &mut self.disk) {
            self.persisted = self.persisted.min(self.last_zxid());
        }
    }
}
