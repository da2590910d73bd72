//! Fast leader election: votes, agreement, and the decision to lead or
//! follow.

use super::*;

impl<T: Clone, S: Clone + Default> Peer<T, S> {
    pub(super) fn become_looking(&mut self) {
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

    pub(super) fn on_vote(&mut self, from: ServerId, v: Vote) {
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

    pub(super) fn check_agreement(&mut self) {
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

    pub(super) fn decide(&mut self, leader: ServerId) {
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
            self.send_follower_info(leader);
        }
    }
}
