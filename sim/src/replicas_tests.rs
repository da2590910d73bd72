//! The ledger on hand-fed sequences: agreement, a divergent txn, a skipped
//! commit, a rollback across a restart, a legitimate restart and SNAP.

use super::*;

const Z1: Zxid = 0x1_0000_0001;
const Z2: Zxid = 0x1_0000_0002;
const Z3: Zxid = 0x1_0000_0003;
const E2: Zxid = 0x2_0000_0001;

/// Three servers apply Z1..Z3 (txn digests 1, 2, 3; tree digests 10x).
fn agreed() -> Ledger {
    let mut l = Ledger::new();
    for s in 1..=3 {
        assert_eq!(l.loaded(s, 0, 0), None);
    }
    for (z, t) in [(Z1, 1), (Z2, 2), (Z3, 3)] {
        for s in 1..=3 {
            assert_eq!(l.applied(s, z, t, 100 + t), None, "zk{s} at {z:#x}");
        }
    }
    l
}

#[test]
fn servers_on_one_sequence_agree() {
    let l = agreed();
    let f = l.finals();
    assert_eq!(f.len(), 3);
    assert!(f
        .iter()
        .all(|x| x.zxid == Z3 && Some(x.chain) == x.expected && x.applied == Some(3)));
}

#[test]
fn a_different_txn_at_one_zxid_diverges() {
    let mut l = agreed();
    assert_eq!(l.applied(1, E2, 7, 200), None);
    let f = l.applied(2, E2, 8, 200).expect("divergence");
    assert_eq!((f.server, f.check, f.zxid), (2, ReplicaCheck::Diverged, E2));
    assert_ne!(Some(f.chain), f.expected);
    // Re-anchored on the canonical chain: no cascade.
    assert_eq!(l.applied(1, E2 + 1, 9, 201), None);
    assert_eq!(l.applied(2, E2 + 1, 9, 201), None);
}

#[test]
fn the_same_txns_with_a_different_tree_diverge() {
    let mut l = agreed();
    assert_eq!(l.applied(1, E2, 7, 200), None);
    let f = l.applied(3, E2, 7, 666).expect("divergence");
    assert_eq!(f.check, ReplicaCheck::Diverged);
    assert!(f.detail.contains("tree"), "{}", f.detail);
}

#[test]
fn skipping_a_committed_txn_is_a_gap() {
    let mut l = Ledger::new();
    l.applied(1, Z1, 1, 101);
    l.applied(1, Z2, 2, 102);
    l.applied(1, Z3, 3, 103);
    l.applied(2, Z1, 1, 101);
    let f = l.applied(2, Z3, 3, 103).expect("gap");
    assert_eq!((f.check, f.missing), (ReplicaCheck::Gap, Some(Z2)));
}

#[test]
fn a_committed_txn_lost_across_a_restart_is_rolled_back() {
    let mut l = agreed();
    // zk1 restarts from a snapshot at Z2 (its log lost Z3), and a new
    // leader's first txn comes straight after Z2.
    assert_eq!(l.loaded(1, Z2, 102), None);
    let f = l.applied(1, E2, 7, 200).expect("rollback");
    assert_eq!((f.check, f.missing), (ReplicaCheck::RolledBack, Some(Z3)));
    // The first applier of a new zxid is checked too: zk2 has Z3.
    assert_eq!(l.applied(2, E2 + 1, 8, 201).map(|f| f.check), Some(ReplicaCheck::Gap));
}

#[test]
fn a_restart_that_reapplies_its_log_and_a_snap_sync_are_fine() {
    let mut l = agreed();
    assert_eq!(l.loaded(1, Z1, 101), None);
    assert_eq!(l.applied(1, Z2, 2, 102), None);
    assert_eq!(l.applied(1, Z3, 3, 103), None);
    assert_eq!(l.loaded(2, Z3, 103), None);
    assert_eq!(l.applied(2, E2, 7, 200), None);
    assert_eq!(l.applied(1, E2, 7, 200), None);
    assert!(l.finals().iter().all(|x| x.expected == Some(x.chain) || x.zxid == Z3));
}

#[test]
fn a_diverged_tree_is_reported_once_until_the_next_load() {
    let mut l = agreed();
    assert_eq!(l.applied(1, Z3 + 1, 4, 104), None);
    assert!(l.applied(3, Z3 + 1, 4, 666).is_some());
    assert_eq!(l.applied(1, Z3 + 2, 5, 105), None);
    assert_eq!(l.applied(3, Z3 + 2, 5, 667), None);
    assert_eq!(l.loaded(3, Z3 + 2, 667).map(|f| f.check), Some(ReplicaCheck::Diverged));
}

#[test]
fn a_snapshot_off_the_canonical_state_diverges() {
    let mut l = agreed();
    let f = l.loaded(1, Z2, 999).expect("bad snapshot");
    assert_eq!(f.check, ReplicaCheck::Diverged);
    let f = l.loaded(2, Z3 + 5, 999).expect("unknown zxid");
    assert_eq!(f.expected, None);
}

#[test]
fn findings_per_server_are_capped_and_counted() {
    let mut l = Ledger::new();
    for i in 0..10 {
        l.applied(1, Z1 + i, 1, 1);
        l.applied(2, Z1 + i, 2, 1);
    }
    let f = l.finals();
    assert!(f[1].detail.contains("6 further"), "{}", f[1].detail);
}

#[test]
fn txn_digests_see_every_field() {
    let a = LoggedTxn {
        session: 1,
        xid: 2,
        time_ms: 3,
        txn: Txn::SetData {
            path: "/a".into(),
            data: b"x".to_vec(),
            version: 1,
        },
    };
    let mut b = a.clone();
    b.txn = Txn::SetData {
        path: "/a".into(),
        data: b"y".to_vec(),
        version: 1,
    };
    let mut c = a.clone();
    c.xid = 3;
    assert_ne!(txn_digest(&a), txn_digest(&b));
    assert_ne!(txn_digest(&a), txn_digest(&c));
    assert_eq!(txn_digest(&a), txn_digest(&a.clone()));
}
