//! How a leader brings a follower up to date (DIFF, TRUNC or SNAP) and
//! how much log it keeps around to make DIFF possible.

use super::*;

/// A server down while the others commit past their retained log comes
/// back to a SNAP, not a DIFF, and ends with the same state.
#[test]
fn a_follower_behind_the_purged_log_gets_snap() {
    let mut w = World::with_config(3, 7, snappy());
    while w.leader().is_none() {
        w.step();
    }
    let l = w.leader().unwrap();
    let down = if l == 1 { 2 } else { 1 };
    w.crash(down, false);
    w.nodes.get_mut(&down).unwrap().down_until = u64::MAX;
    for _ in 0..40 {
        w.propose();
        for _ in 0..20 {
            w.step();
        }
    }
    let floor = w.nodes[&l].peer.as_ref().unwrap().log_floor();
    let behind = w.nodes[&down].disk.load();
    let behind_last = behind.log.last().map_or(behind.floor, |e| e.zxid);
    assert!(
        floor > behind_last,
        "the leader's log floor {floor:#x} is not past {behind_last:#x}"
    );
    let before = w.counts;
    w.nodes.get_mut(&down).unwrap().down_until = 0;
    for _ in 0..2_000 {
        w.step();
    }
    assert_eq!(w.counts.snaps, before.snaps + 1, "{:?}", w.counts);
    assert_eq!(w.counts.installs, before.installs + 1);
    assert_eq!(w.leader(), Some(l));
    assert_eq!(w.nodes[&down].applied, w.nodes[&l].applied);
    assert_eq!(w.nodes[&down].applied.len(), w.committed.len());
    assert_eq!(w.committed.len(), 40);
}

/// DIFF, TRUNC and SNAP as ZooKeeper's LearnerHandler chooses them.
#[test]
fn leader_chooses_diff_trunc_or_snap() {
    use crate::zab::log::{SyncPlan, TxnLog};
    let z = make_zxid;
    let snap = Snapshot {
        zxid: z(1, 3),
        data: 13u64,
    };
    // Log purged up to (1,2); snapshots at (1,2) and (1,3); then (1,3)..(1,5), (3,1), (3,2).
    let entries: im::Vector<Entry<u64>> = [z(1, 3), z(1, 4), z(1, 5), z(3, 1), z(3, 2)]
        .into_iter()
        .map(|zxid| Entry { zxid, txn: 0 })
        .collect();
    let older = Snapshot {
        zxid: z(1, 2),
        data: 12u64,
    };
    let log: TxnLog<u64, u64> = TxnLog::new(entries, z(1, 2), vec![older, snap.clone()], 2);
    let plan = |last| log.plan(last);
    // In our history: DIFF from it (the floor counts).
    assert_eq!(
        plan(z(1, 4)),
        SyncPlan {
            kind: SyncKind::Diff,
            from: 2
        }
    );
    assert_eq!(
        plan(z(1, 2)),
        SyncPlan {
            kind: SyncKind::Diff,
            from: 0
        }
    );
    assert_eq!(
        plan(z(3, 2)),
        SyncPlan {
            kind: SyncKind::Diff,
            from: 5
        }
    );
    // Ahead of us in an epoch we have: TRUNC to our last txn of it.
    assert_eq!(
        plan(z(1, 9)),
        SyncPlan {
            kind: SyncKind::Trunc(z(1, 5)),
            from: 3
        }
    );
    assert_eq!(
        plan(z(3, 7)),
        SyncPlan {
            kind: SyncKind::Trunc(z(3, 2)),
            from: 5
        }
    );
    // An epoch we never saw (a failed leader's): which of our epoch-1 txns
    // it holds is unknown, so SNAP.
    let snap_plan = SyncPlan {
        kind: SyncKind::Snap(snap.clone()),
        from: 1,
    };
    assert_eq!(plan(z(2, 1)), snap_plan);
    assert_eq!(plan(z(4, 1)), snap_plan);
    // Behind the purged log.
    assert_eq!(plan(z(1, 1)), snap_plan);
    assert_eq!(plan(0), snap_plan);
    // A fresh leader with nothing purged: an empty follower gets a DIFF, a
    // diverged one the empty snapshot and everything.
    let fresh: TxnLog<u64, u64> = TxnLog::new(log.entries().clone(), 0, vec![], 3);
    assert_eq!(
        fresh.plan(0),
        SyncPlan {
            kind: SyncKind::Diff,
            from: 0
        }
    );
    assert_eq!(
        fresh.plan(z(2, 1)),
        SyncPlan {
            kind: SyncKind::Snap(Snapshot { zxid: 0, data: 0 }),
            from: 0
        }
    );
}

/// Purging keeps `snap_retain_count` durable snapshots and the log after
/// the oldest; an unsynced snapshot purges nothing.
#[test]
fn purge_waits_for_durable_snapshots() {
    use crate::zab::log::TxnLog;
    let mut log: TxnLog<u64, u64> = TxnLog::new(im::Vector::new(), 0, vec![], 2);
    let mut ops = vec![];
    for c in 1..=9 {
        log.append(
            Entry {
                zxid: make_zxid(1, c),
                txn: c as u64,
            },
            &mut ops,
        );
    }
    let snap = |c: u32| Snapshot {
        zxid: make_zxid(1, c),
        data: c as u64,
    };
    log.write_snapshot(snap(3), &mut ops);
    log.write_snapshot(snap(6), &mut ops);
    assert_eq!(log.snapshot_zxid(), 0, "not durable yet");
    ops.clear();
    assert_eq!(log.snapshot_synced(make_zxid(1, 3), &mut ops), Some(make_zxid(1, 3)));
    assert_eq!(ops, vec![DiskOp::Purge { upto: make_zxid(1, 3) }]);
    assert_eq!(log.entries().len(), 6);
    // Two retained: (1,3) and (1,6); the log keeps (1,4).. for DIFF.
    assert_eq!(log.snapshot_synced(make_zxid(1, 6), &mut ops), None);
    assert_eq!((log.floor(), log.snapshot_zxid()), (make_zxid(1, 3), make_zxid(1, 6)));
    log.write_snapshot(snap(8), &mut ops);
    assert_eq!(log.snapshot_synced(make_zxid(1, 9), &mut ops), Some(make_zxid(1, 6)));
    assert_eq!(log.entries().front().map(|e| e.zxid), Some(make_zxid(1, 7)));
    assert_eq!(log.last_zxid(), make_zxid(1, 9));
}
