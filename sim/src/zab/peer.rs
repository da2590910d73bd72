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

use std::collections::BTreeMap;

use super::log::{DiskOp, Snapshot, SyncKind, SyncPlan, TxnLog};
use super::msg::{epoch_of, make_zxid, Entry, Msg, PeerState, ServerId, Vote, Zxid};

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

    // ----- inputs -----

    /// The shell took a snapshot of its applied state (at most the commit
    /// point): write it. It counts once `snapshot_persisted` says so.
    pub fn take_snapshot(&mut self, snap: Snapshot<S>) {
        if snap.zxid <= self.commit && snap.zxid > self.log.snapshot_zxid() {
            self.log.write_snapshot(snap, &mut self.disk);
        }
    }

    /// The shell's fsync made the snapshots written up to `zxid` durable:
    /// older log entries may go. Returns the new purge point, if any.
    pub fn snapshot_persisted(&mut self, zxid: Zxid) -> Option<Zxid> {
        self.log.snapshot_synced(zxid, &mut self.disk)
    }

    /// The shell's fsync made the log durable up to `zxid`.
    pub fn persisted(&mut self, zxid: Zxid) {
        let zxid = zxid.min(self.last_zxid());
        if zxid <= self.persisted {
            return;
        }
        self.persisted = zxid;
        match &self.state {
            State::Following(f) => match f.phase {
                FollowerPhase::Syncing { ack_zxid, acked: false } if zxid >= ack_zxid => self.ack_new_leader(),
                FollowerPhase::Syncing { acked: true, .. } | FollowerPhase::Broadcast => {
                    let (leader, epoch) = (f.leader, f.epoch);
                    self.send(leader, Msg::Ack { epoch, zxid });
                }
                _ => {}
            },
            State::Leading(_) => self.leader_progress(),
            State::Looking(_) => {}
        }
    }

    /// The connection to `peer` broke (EOF or error): if it was our leader,
    /// look for another; if our follower, it will have to sync again.
    pub fn disconnected(&mut self, peer: ServerId) {
        match &mut self.state {
            State::Following(f) if f.leader == peer => self.become_looking(),
            State::Leading(l) => {
                if l.learners.remove(&peer).is_some() {
                    self.leader_progress();
                }
            }
            _ => {}
        }
    }

    /// A heartbeat tick.
    pub fn tick(&mut self) {
        self.now += 1;
        let now = self.now;
        let cfg = self.cfg;
        match &mut self.state {
            State::Looking(l) => {
                if let Some(at) = l.agreed_at {
                    if now >= at + cfg.finalize_ticks as u64 {
                        let leader = l.vote.leader;
                        self.decide(leader);
                        return;
                    }
                }
                if now >= l.last_sent + cfg.resend_ticks as u64 {
                    l.last_sent = now;
                    let v = l.vote;
                    for s in self.others() {
                        self.send(s, Msg::Vote(v));
                    }
                }
            }
            State::Following(f) => {
                f.silent += 1;
                f.age += 1;
                let limit = if f.phase == FollowerPhase::Broadcast {
                    cfg.sync_limit
                } else {
                    cfg.init_limit
                };
                if f.silent > limit || (f.phase != FollowerPhase::Broadcast && f.age > cfg.init_limit * 2) {
                    self.become_looking();
                } else if f.phase == FollowerPhase::Discovery && f.age % cfg.resend_ticks.max(1) == 0 {
                    // The leader may not have decided yet when we first wrote.
                    let leader = f.leader;
                    let (accepted_epoch, last_zxid) = (self.accepted_epoch, self.last_zxid());
                    self.send(
                        leader,
                        Msg::FollowerInfo {
                            accepted_epoch,
                            last_zxid,
                        },
                    );
                }
            }
            State::Leading(l) => {
                l.age += 1;
                let me = self.id;
                for (s, ln) in l.learners.iter_mut() {
                    if *s != me {
                        ln.silent += 1;
                    }
                }
                let epoch = l.epoch;
                if l.phase != LeaderPhase::Broadcast {
                    if l.age > cfg.init_limit {
                        self.become_looking();
                        return;
                    }
                } else {
                    // Drop silent learners; step down without a live quorum.
                    l.learners.retain(|_, ln| ln.silent <= cfg.sync_limit);
                    let live = l
                        .learners
                        .values()
                        .filter(|ln| matches!(ln.stage, Stage::Syncing | Stage::Synced))
                        .count();
                    if live < self.servers.len() / 2 + 1 {
                        self.become_looking();
                        return;
                    }
                }
                let to: Vec<ServerId> = match &self.state {
                    State::Leading(l) => l.learners.keys().copied().filter(|s| *s != me).collect(),
                    _ => Vec::new(),
                };
                for s in to {
                    self.send(s, Msg::Ping { epoch });
                }
            }
        }
    }

    /// A message from another server.
    pub fn step(&mut self, from: ServerId, msg: Msg<T, S>) {
        if from == self.id || !self.servers.contains(&from) {
            return;
        }
        match msg {
            Msg::Vote(v) => self.on_vote(from, v),
            Msg::FollowerInfo {
                accepted_epoch,
                last_zxid,
            } => self.on_follower_info(from, accepted_epoch, last_zxid),
            Msg::LeaderInfo { epoch } => self.on_leader_info(from, epoch),
            Msg::AckEpoch {
                epoch,
                current_epoch,
                last_zxid,
                counts,
            } => self.on_ack_epoch(from, epoch, current_epoch, last_zxid, counts),
            Msg::Sync {
                epoch,
                kind,
                entries,
                commit,
            } => self.on_sync(from, epoch, kind, entries, commit),
            Msg::NewLeaderAck { epoch, zxid } => self.on_new_leader_ack(from, epoch, zxid),
            Msg::UpToDate { epoch } => {
                if let Some(f) = self.following_mut(from, epoch) {
                    f.silent = 0;
                    if matches!(f.phase, FollowerPhase::Syncing { acked: true, .. }) {
                        f.phase = FollowerPhase::Broadcast;
                    }
                }
            }
            Msg::Propose { epoch, entry } => {
                let ok = match self.following_mut(from, epoch) {
                    Some(f) => {
                        f.silent = 0;
                        matches!(f.phase, FollowerPhase::Syncing { .. } | FollowerPhase::Broadcast)
                    }
                    None => false,
                };
                if ok && entry.zxid > self.last_zxid() {
                    // Proposals arrive gap-free; a gap means messages were
                    // lost (the leader dropped us): resync.
                    let last = self.last_zxid();
                    let expected = if last != 0 && epoch_of(last) == epoch_of(entry.zxid) {
                        last + 1
                    } else {
                        make_zxid(epoch_of(entry.zxid), 1)
                    };
                    if entry.zxid != expected && !(last == 0 && epoch_of(entry.zxid) == epoch) {
                        self.become_looking();
                        return;
                    }
                    self.append(entry);
                }
            }
            Msg::Commit { epoch, zxid } => {
                let ok = match self.following_mut(from, epoch) {
                    Some(f) => {
                        f.silent = 0;
                        matches!(f.phase, FollowerPhase::Syncing { .. } | FollowerPhase::Broadcast)
                    }
                    None => false,
                };
                if ok {
                    self.commit = self.commit.max(zxid.min(self.last_zxid()));
                }
            }
            Msg::Ack { epoch, zxid } => {
                if let State::Leading(l) = &mut self.state {
                    if l.epoch == epoch {
                        if let Some(ln) = l.learners.get_mut(&from) {
                            ln.silent = 0;
                            if matches!(ln.stage, Stage::Syncing | Stage::Synced) {
                                ln.matched = ln.matched.max(zxid);
                            }
                        }
                        self.leader_progress();
                    }
                }
            }
            Msg::Ping { epoch } => match &mut self.state {
                State::Following(f) if f.leader == from && f.epoch <= epoch => {
                    f.silent = 0;
                    self.send(from, Msg::Ping { epoch });
                }
                State::Leading(l) if l.epoch == epoch => {
                    if let Some(ln) = l.learners.get_mut(&from) {
                        ln.silent = 0;
                    }
                }
                _ => {}
            },
        }
    }

    fn following_mut(&mut self, from: ServerId, epoch: u32) -> Option<&mut Following> {
        match &mut self.state {
            State::Following(f) if f.leader == from && f.epoch == epoch => Some(f),
            _ => None,
        }
    }

    // ----- election -----

    fn become_looking(&mut self) {
        self.round += 1;
        let round = self.round;
        let vote = self.self_vote(round);
        let mut votes = BTreeMap::new();
        votes.insert(self.id, vote);
        self.state = State::Looking(Looking {
            round,
            vote,
            votes,
            agreed_at: None,
            last_sent: self.now,
        });
        for s in self.others() {
            self.send(s, Msg::Vote(vote));
        }
        self.check_agreement();
    }

    fn on_vote(&mut self, from: ServerId, v: Vote) {
        let me = self.id;
        match &mut self.state {
            State::Looking(l) => {
                if v.state != PeerState::Looking {
                    // An established server tells us whom it follows: a
                    // leader saying it leads is worth trying to follow.
                    if v.state == PeerState::Leading && v.leader == from {
                        self.round = self.round.max(v.round);
                        self.decide(from);
                    }
                    return;
                }
                let mut changed = false;
                if v.round > l.round {
                    l.round = v.round;
                    l.votes.clear();
                    let own = Vote {
                        round: v.round,
                        ..l.vote
                    };
                    l.vote = if v.key() > own.key() {
                        Vote {
                            round: v.round,
                            state: PeerState::Looking,
                            ..v
                        }
                    } else {
                        own
                    };
                    l.votes.insert(me, l.vote);
                    l.agreed_at = None;
                    changed = true;
                } else if v.round < l.round {
                    let mine = l.vote;
                    self.send(from, Msg::Vote(mine));
                    return;
                } else if v.key() > l.vote.key() {
                    l.vote = Vote {
                        round: l.round,
                        state: PeerState::Looking,
                        ..v
                    };
                    l.votes.insert(me, l.vote);
                    l.agreed_at = None;
                    changed = true;
                }
                l.votes.insert(from, v);
                self.round = self.round.max(l.round);
                if changed {
                    let mine = l.vote;
                    for s in self.others() {
                        self.send(s, Msg::Vote(mine));
                    }
                }
                self.check_agreement();
            }
            State::Following(f)
                if f.leader == from && f.phase != FollowerPhase::Discovery && v.state != PeerState::Leading =>
            {
                // Our leader stopped leading (it abdicated, say, for a
                // follower ahead of it). ZooKeeper's leader closes its
                // learners' connections as it shuts down, so they look at
                // once; waiting out initLimit instead leaves the server with
                // the newest history following a dead end while the others
                // re-elect the same leader. (In Discovery the leader may not
                // have decided yet: ZooKeeper's learner keeps trying to
                // connect for initLimit.)
                self.become_looking();
                self.on_vote(from, v);
            }
            _ => {
                if v.state == PeerState::Looking {
                    let mine = self.state_vote();
                    self.send(from, Msg::Vote(mine));
                }
            }
        }
    }

    fn check_agreement(&mut self) {
        let q = self.quorum();
        let n = self.servers.len();
        let now = self.now;
        if let State::Looking(l) = &mut self.state {
            let agree = l
                .votes
                .values()
                .filter(|v| v.leader == l.vote.leader && v.round == l.round)
                .count();
            if agree >= q {
                if agree == n {
                    let leader = l.vote.leader;
                    self.decide(leader);
                } else if l.agreed_at.is_none() {
                    l.agreed_at = Some(now);
                }
            } else {
                l.agreed_at = None;
            }
        }
    }

    fn decide(&mut self, leader: ServerId) {
        if leader == self.id {
            let mut learners = BTreeMap::new();
            learners.insert(
                self.id,
                Learner {
                    stage: Stage::Info {
                        accepted_epoch: self.accepted_epoch,
                    },
                    matched: 0,
                    silent: 0,
                },
            );
            self.state = State::Leading(Leading {
                epoch: 0,
                phase: LeaderPhase::Discovery,
                learners,
                age: 0,
                counter: 0,
            });
            // The leader counts itself; a one-server ensemble proceeds at once.
            self.leader_progress();
        } else {
            self.state = State::Following(Following {
                leader,
                epoch: 0,
                phase: FollowerPhase::Discovery,
                silent: 0,
                age: 0,
            });
            let (accepted_epoch, last_zxid) = (self.accepted_epoch, self.last_zxid());
            self.send(
                leader,
                Msg::FollowerInfo {
                    accepted_epoch,
                    last_zxid,
                },
            );
        }
    }

    // ----- follower side -----

    fn on_leader_info(&mut self, from: ServerId, epoch: u32) {
        let ok = matches!(&self.state, State::Following(f) if f.leader == from && f.phase == FollowerPhase::Discovery);
        if !ok {
            return;
        }
        if epoch < self.accepted_epoch {
            // A leader proposing an epoch we already promised past.
            self.become_looking();
            return;
        }
        let counts = epoch > self.accepted_epoch;
        if counts {
            let current = self.current_epoch;
            self.set_epochs(epoch, current);
        }
        if let State::Following(f) = &mut self.state {
            f.epoch = epoch;
            f.phase = FollowerPhase::AwaitSync;
            f.silent = 0;
        }
        let (current_epoch, last_zxid) = (self.current_epoch, self.last_zxid());
        self.send(
            from,
            Msg::AckEpoch {
                epoch,
                current_epoch,
                last_zxid,
                counts,
            },
        );
    }

    fn on_sync(&mut self, from: ServerId, epoch: u32, kind: SyncKind<S>, entries: Vec<Entry<T>>, commit: Zxid) {
        let ok = matches!(&self.state, State::Following(f) if f.leader == from && f.epoch == epoch && f.phase == FollowerPhase::AwaitSync);
        if !ok {
            return;
        }
        match kind {
            SyncKind::Diff => {}
            SyncKind::Trunc(zxid) => {
                if zxid < self.log.snapshot_zxid() {
                    // Our snapshot holds only committed txns: a leader
                    // truncating into it is confused (ZooKeeper's learner
                    // exits). Find another.
                    self.become_looking();
                    return;
                }
                self.truncate_after(zxid);
            }
            SyncKind::Snap(snap) => {
                self.commit = snap.zxid;
                self.persisted = snap.zxid;
                self.log.install(snap.clone(), &mut self.disk);
                self.installed = Some(snap);
            }
        }
        for e in entries {
            if e.zxid > self.last_zxid() {
                self.append(e);
            }
        }
        let ack_zxid = self.last_zxid();
        self.commit = self.commit.max(commit.min(ack_zxid));
        if let State::Following(f) = &mut self.state {
            f.phase = FollowerPhase::Syncing { ack_zxid, acked: false };
            f.silent = 0;
        }
        // Ack NEWLEADER once the synced history is on disk (maybe already).
        if self.persisted >= ack_zxid {
            self.ack_new_leader();
        }
    }

    fn ack_new_leader(&mut self) {
        let State::Following(f) = &mut self.state else {
            return;
        };
        let FollowerPhase::Syncing { ack_zxid, acked: false } = f.phase else {
            return;
        };
        f.phase = FollowerPhase::Syncing { ack_zxid, acked: true };
        let (leader, epoch) = (f.leader, f.epoch);
        let accepted = self.accepted_epoch;
        self.set_epochs(accepted, epoch);
        self.send(leader, Msg::NewLeaderAck { epoch, zxid: ack_zxid });
        if self.persisted > ack_zxid {
            let zxid = self.persisted;
            self.send(leader, Msg::Ack { epoch, zxid });
        }
    }

    // ----- leader side -----

    fn on_follower_info(&mut self, from: ServerId, accepted_epoch: u32, last_zxid: Zxid) {
        let State::Leading(l) = &mut self.state else {
            // Not leading: tell it who we think leads, if anyone.
            return;
        };
        l.learners.insert(
            from,
            Learner {
                stage: Stage::Info { accepted_epoch },
                matched: 0,
                silent: 0,
            },
        );
        match l.phase {
            LeaderPhase::Discovery => self.leader_progress(),
            _ => {
                let epoch = l.epoch;
                if accepted_epoch > epoch {
                    l.learners.remove(&from);
                    return;
                }
                self.send(from, Msg::LeaderInfo { epoch });
                let _ = last_zxid;
            }
        }
    }

    fn on_ack_epoch(&mut self, from: ServerId, epoch: u32, current_epoch: u32, last_zxid: Zxid, counts: bool) {
        let (my_epoch, my_last) = (self.current_epoch, self.last_zxid());
        let State::Leading(l) = &mut self.state else {
            return;
        };
        if l.epoch != epoch || l.phase == LeaderPhase::Discovery {
            return;
        }
        let Some(ln) = l.learners.get_mut(&from) else {
            return;
        };
        if !matches!(ln.stage, Stage::Info { .. }) {
            return;
        }
        ln.silent = 0;
        if (current_epoch, last_zxid) > (my_epoch, my_last) {
            // A follower is ahead of us: we must not lead (Leader.java
            // "Follower is ahead of the leader").
            self.become_looking();
            return;
        }
        ln.stage = Stage::AckedEpoch {
            current_epoch,
            last_zxid,
            counts,
        };
        if l.phase == LeaderPhase::AckEpochs {
            self.leader_progress();
        } else {
            self.send_sync(from);
        }
    }

    fn on_new_leader_ack(&mut self, from: ServerId, epoch: u32, zxid: Zxid) {
        let State::Leading(l) = &mut self.state else {
            return;
        };
        if l.epoch != epoch {
            return;
        }
        let Some(ln) = l.learners.get_mut(&from) else {
            return;
        };
        if ln.stage != Stage::Syncing {
            return;
        }
        ln.silent = 0;
        ln.stage = Stage::Synced;
        ln.matched = ln.matched.max(zxid);
        if l.phase == LeaderPhase::Broadcast {
            let commit = self.commit;
            self.send(from, Msg::Commit { epoch, zxid: commit });
            self.send(from, Msg::UpToDate { epoch });
        }
        self.leader_progress();
    }

    /// Sends `to` what it lacks of our history: DIFF, TRUNC or SNAP (see
    /// `TxnLog::plan`), then everything after that point.
    fn send_sync(&mut self, to: ServerId) {
        let State::Leading(l) = &mut self.state else {
            return;
        };
        let Some(ln) = l.learners.get_mut(&to) else {
            return;
        };
        let Stage::AckedEpoch { last_zxid, .. } = ln.stage else {
            return;
        };
        ln.stage = Stage::Syncing;
        let epoch = l.epoch;
        let SyncPlan { kind, from } = self.log.plan(last_zxid);
        let log = self.log.entries();
        let entries: Vec<Entry<T>> = (from..log.len()).filter_map(|i| log.get(i).cloned()).collect();
        let commit = self.commit;
        self.send(
            to,
            Msg::Sync {
                epoch,
                kind,
                entries,
                commit,
            },
        );
    }

    /// Advances the leader's phases and its commit point as far as the
    /// quorum allows.
    fn leader_progress(&mut self) {
        let q = self.quorum();
        let me = self.id;
        let (my_current, my_last, my_persisted) = (self.current_epoch, self.last_zxid(), self.persisted);
        let State::Leading(l) = &mut self.state else {
            return;
        };
        if l.phase == LeaderPhase::Discovery {
            let infos: Vec<u32> = l
                .learners
                .values()
                .filter_map(|ln| match ln.stage {
                    Stage::Info { accepted_epoch } => Some(accepted_epoch),
                    _ => None,
                })
                .collect();
            if infos.len() < q {
                return;
            }
            let epoch = infos.iter().copied().max().unwrap_or(0) + 1;
            l.epoch = epoch;
            l.phase = LeaderPhase::AckEpochs;
            if let Some(me_ln) = l.learners.get_mut(&me) {
                me_ln.stage = Stage::AckedEpoch {
                    current_epoch: my_current,
                    last_zxid: my_last,
                    counts: true,
                };
            }
            let others: Vec<ServerId> = l.learners.keys().copied().filter(|s| *s != me).collect();
            self.set_epochs(epoch, my_current);
            for s in others {
                self.send(s, Msg::LeaderInfo { epoch });
            }
            return self.leader_progress();
        }
        if l.phase == LeaderPhase::AckEpochs {
            let acked = l
                .learners
                .values()
                .filter(|ln| matches!(ln.stage, Stage::AckedEpoch { counts: true, .. }))
                .count();
            if acked < q {
                return;
            }
            l.phase = LeaderPhase::Sync;
            if let Some(me_ln) = l.learners.get_mut(&me) {
                me_ln.stage = Stage::Syncing;
            }
            let to: Vec<ServerId> = l
                .learners
                .iter()
                .filter(|(s, ln)| **s != me && matches!(ln.stage, Stage::AckedEpoch { .. }))
                .map(|(s, _)| *s)
                .collect();
            for s in to {
                self.send_sync(s);
            }
            return self.leader_progress();
        }
        if let Some(me_ln) = l.learners.get_mut(&me) {
            me_ln.matched = my_persisted;
            if l.phase == LeaderPhase::Sync && my_persisted >= my_last {
                me_ln.stage = Stage::Synced;
            }
        }
        if l.phase == LeaderPhase::Sync {
            let synced = l.learners.values().filter(|ln| ln.stage == Stage::Synced).count();
            if synced < q {
                return;
            }
            // The quorum holds our whole history: it is committed.
            l.phase = LeaderPhase::Broadcast;
            let epoch = l.epoch;
            l.counter = 0;
            let to: Vec<ServerId> = l
                .learners
                .iter()
                .filter(|(s, ln)| **s != me && ln.stage == Stage::Synced)
                .map(|(s, _)| *s)
                .collect();
            let accepted = self.accepted_epoch;
            self.set_epochs(accepted, epoch);
            self.commit = my_last;
            for s in to {
                self.send(s, Msg::Commit { epoch, zxid: my_last });
                self.send(s, Msg::UpToDate { epoch });
            }
            return;
        }
        if l.phase == LeaderPhase::Broadcast {
            let mut matched: Vec<Zxid> = l
                .learners
                .values()
                .filter(|ln| matches!(ln.stage, Stage::Syncing | Stage::Synced))
                .map(|ln| ln.matched)
                .collect();
            if matched.len() < q {
                return;
            }
            matched.sort_unstable_by(|a, b| b.cmp(a));
            let candidate = matched[q - 1];
            if candidate > self.commit {
                self.commit = candidate;
                let epoch = l.epoch;
                let to: Vec<ServerId> = l
                    .learners
                    .iter()
                    .filter(|(s, ln)| **s != me && matches!(ln.stage, Stage::Syncing | Stage::Synced))
                    .map(|(s, _)| *s)
                    .collect();
                for s in to {
                    self.send(s, Msg::Commit { epoch, zxid: candidate });
                }
            }
        }
    }

    /// Appends a transaction as the leader and sends it to the followers.
    /// Returns its zxid; it commits once a quorum has it on disk.
    pub fn propose(&mut self, txn: T) -> Result<Zxid, NotLeader> {
        let me = self.id;
        let State::Leading(l) = &mut self.state else {
            return Err(NotLeader);
        };
        if l.phase != LeaderPhase::Broadcast {
            return Err(NotLeader);
        }
        l.counter += 1;
        let epoch = l.epoch;
        let zxid = make_zxid(epoch, l.counter);
        let to: Vec<ServerId> = l
            .learners
            .iter()
            .filter(|(s, ln)| **s != me && matches!(ln.stage, Stage::Syncing | Stage::Synced))
            .map(|(s, _)| *s)
            .collect();
        let entry = Entry { zxid, txn };
        for s in to {
            self.send(
                s,
                Msg::Propose {
                    epoch,
                    entry: entry.clone(),
                },
            );
        }
        self.append(entry);
        debug_assert_eq!(epoch_of(zxid), epoch);
        Ok(zxid)
    }
}
