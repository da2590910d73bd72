//! The leader side: discovery (follower info, epoch acks), syncing each
//! learner, establishing the epoch once a quorum is synced, then
//! broadcast (proposals, acks, commits).

use super::*;

impl Leading {
    /// The learners proposals and commits go to: syncing or synced, not us.
    fn broadcast_targets(&self, me: ServerId) -> Vec<ServerId> {
        self.learners
            .iter()
            .filter(|(s, ln)| **s != me && ln.is_live())
            .map(|(s, _)| *s)
            .collect()
    }
}

impl<T: Clone, S: Clone + Default> Peer<T, S> {
    pub(super) fn on_follower_info(&mut self, from: ServerId, accepted_epoch: u32, last_zxid: Zxid) {
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

    pub(super) fn on_ack_epoch(
        &mut self,
        from: ServerId,
        epoch: u32,
        current_epoch: u32,
        last_zxid: Zxid,
        counts: bool,
    ) {
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

    pub(super) fn on_new_leader_ack(&mut self, from: ServerId, epoch: u32, zxid: Zxid) {
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
    pub(super) fn send_sync(&mut self, to: ServerId) {
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
    pub(super) fn leader_progress(&mut self) {
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
                .filter(|ln| ln.is_live())
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
                let to = l.broadcast_targets(me);
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
        let to = l.broadcast_targets(me);
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
