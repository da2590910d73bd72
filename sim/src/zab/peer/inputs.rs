//! What the shell feeds a peer: snapshots taken and persisted, fsyncs
//! done, links lost, ticks, and messages (dispatched by role and phase).

use super::*;

impl<T: Clone, S: Clone + Default> Peer<T, S> {
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
                    self.send_follower_info(leader);
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
                    let live = l.learners.values().filter(|ln| ln.is_live()).count();
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
                let ok = self.heard_in_sync_or_broadcast(from, epoch);
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
                let ok = self.heard_in_sync_or_broadcast(from, epoch);
                if ok {
                    self.commit = self.commit.max(zxid.min(self.last_zxid()));
                }
            }
            Msg::Ack { epoch, zxid } => {
                if let State::Leading(l) = &mut self.state {
                    if l.epoch == epoch {
                        if let Some(ln) = l.learners.get_mut(&from) {
                            ln.silent = 0;
                            if ln.is_live() {
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

    /// Follower: `from` (our leader, in `epoch`) was heard; true if we are
    /// syncing or broadcasting with it, so its proposals and commits count.
    pub(super) fn heard_in_sync_or_broadcast(&mut self, from: ServerId, epoch: u32) -> bool {
        match self.following_mut(from, epoch) {
            Some(f) => {
                f.silent = 0;
                matches!(f.phase, FollowerPhase::Syncing { .. } | FollowerPhase::Broadcast)
            }
            None => false,
        }
    }

    pub(super) fn following_mut(&mut self, from: ServerId, epoch: u32) -> Option<&mut Following> {
        match &mut self.state {
            State::Following(f) if f.leader == from && f.epoch == epoch => Some(f),
            _ => None,
        }
    }
}
