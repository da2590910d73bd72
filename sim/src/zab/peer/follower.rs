//! The follower side of discovery and synchronization: the new leader's
//! epoch, its sync (DIFF, TRUNC or SNAP), and the NEWLEADER ack.

use super::*;

impl<T: Clone, S: Clone + Default> Peer<T, S> {
    /// Tell `leader` our accepted epoch and last zxid (discovery).
    pub(super) fn send_follower_info(&mut self, leader: ServerId) {
        let (accepted_epoch, last_zxid) = (self.accepted_epoch, self.last_zxid());
        self.send(
            leader,
            Msg::FollowerInfo {
                accepted_epoch,
                last_zxid,
            },
        );
    }

    pub(super) fn on_leader_info(&mut self, from: ServerId, epoch: u32) {
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

    pub(super) fn on_sync(
        &mut self,
        from: ServerId,
        epoch: u32,
        kind: SyncKind<S>,
        entries: Vec<Entry<T>>,
        commit: Zxid,
    ) {
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

    pub(super) fn ack_new_leader(&mut self) {
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
}
