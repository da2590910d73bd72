//! Leader election and epochs: who leads, and when a follower gives up
//! on its leader.

use super::*;

/// A leader that stops leading after telling a follower its epoch sends
/// its Looking vote: the follower looks again at once, as a ZooKeeper
/// learner does when its leader's connection closes. Before the epoch, the
/// leader may simply not have decided yet, and a follower waits.
#[test]
fn a_follower_looks_again_when_its_leader_does() {
    let vote = |round, state| Vote {
        round,
        leader: 2,
        leader_epoch: 1,
        leader_zxid: make_zxid(1, 4),
        state,
    };
    let mut p: Peer<u64, Applied> = Peer::new(1, vec![1, 2, 3], ZabConfig::default(), Durable::default());
    p.step(2, Msg::Vote(vote(1, PeerState::Leading)));
    assert_eq!(p.role(), Role::Following { leader: 2, epoch: 0 });
    p.step(2, Msg::Vote(vote(1, PeerState::Looking)));
    assert_eq!(p.role(), Role::Following { leader: 2, epoch: 0 }, "still in discovery");
    p.step(2, Msg::LeaderInfo { epoch: 2 });
    assert_eq!(p.role(), Role::Following { leader: 2, epoch: 2 });
    p.take_messages();
    // A vote from another server changes nothing; one from the leader does.
    p.step(
        3,
        Msg::Vote(Vote {
            leader: 3,
            ..vote(2, PeerState::Looking)
        }),
    );
    assert_eq!(p.role(), Role::Following { leader: 2, epoch: 2 });
    p.step(2, Msg::Vote(vote(2, PeerState::Looking)));
    assert_eq!(p.role(), Role::Looking);
    // It took up the leader's vote (better than its own empty history).
    let sent = p.take_messages();
    assert!(
        sent.iter()
            .any(|(_, m)| matches!(m, Msg::Vote(v) if v.leader == 2 && v.state == PeerState::Looking)),
        "{sent:?}"
    );
}

#[test]
fn single_server_leads_itself() {
    let mut w = World::new(1, 1);
    for _ in 0..10 {
        w.step();
    }
    assert_eq!(w.leader(), Some(1));
    w.propose();
    for _ in 0..10 {
        w.step();
    }
    assert_eq!(w.committed.len(), 1);
}

#[test]
fn zxids_carry_epoch() {
    assert_eq!(epoch_of(make_zxid(3, 7)), 3);
    assert_eq!(counter_of(make_zxid(3, 7)), 7);
    assert!(make_zxid(2, u32::MAX) < make_zxid(3, 0));
}
