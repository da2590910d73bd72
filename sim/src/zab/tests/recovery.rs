//! Restarting from what survived on disk: snapshots and log tails that a
//! crash may have torn.

use super::*;

/// A restart replays from the newest durable snapshot: a snapshot not yet
/// fsynced at the crash is torn, and the previous one plus the log stand in.
#[test]
fn restart_falls_back_past_an_unsynced_snapshot() {
    let disk: Disk<u64, Applied> = Disk::new();
    let e = |c: u32| Entry {
        zxid: make_zxid(1, c),
        txn: c as u64,
    };
    let upto = |n: u32| (1..=n).map(e).collect::<Applied>();
    let mut ops = vec![];
    for c in 1..=4 {
        ops.push(DiskOp::Append(e(c)));
    }
    ops.push(DiskOp::Snapshot(Snapshot {
        zxid: make_zxid(1, 2),
        data: upto(2),
    }));
    let t = disk.write(ops).unwrap();
    assert!(disk.fsync(t).unwrap().snapshot == Some(make_zxid(1, 2)));
    let t = disk
        .write(vec![
            DiskOp::Append(e(5)),
            DiskOp::Snapshot(Snapshot {
                zxid: make_zxid(1, 4),
                data: upto(4),
            }),
        ])
        .unwrap();
    let _ = t; // never fsynced
    disk.crash(true, &mut ChaCha8Rng::seed_from_u64(1));
    let d = disk.load();
    assert_eq!(
        d.snapshots.iter().map(|s| s.zxid).collect::<Vec<_>>(),
        [make_zxid(1, 2)]
    );
    assert_eq!(d.floor, 0);
    assert!(d.log.len() >= 4, "the synced log survives");
    assert_eq!(disk.stats().snapshots_torn, 1);
    let p: Peer<u64, Applied> = Peer::new(1, vec![1, 2, 3], snappy(), d);
    assert_eq!(p.commit(), make_zxid(1, 2), "the snapshot is committed state");
    assert!(p.last_zxid() >= make_zxid(1, 4));
}

/// A durable snapshot ahead of a torn log: recovery starts after it.
#[test]
fn a_log_torn_short_of_the_snapshot_starts_after_it() {
    let e = |c: u32| Entry {
        zxid: make_zxid(1, c),
        txn: c as u64,
    };
    let snap = Snapshot {
        zxid: make_zxid(1, 5),
        data: (1..=5).map(e).collect::<Applied>(),
    };
    let mut torn = 0;
    for seed in 0..8 {
        let disk: Disk<u64, Applied> = Disk::new();
        let t = disk.write((1..=3).map(|c| DiskOp::Append(e(c))).collect()).unwrap();
        disk.fsync(t);
        // A follower applies what its leader committed before its own log
        // is synced: its snapshot can get ahead of its durable log.
        disk.write(vec![DiskOp::Append(e(4)), DiskOp::Append(e(5))]);
        let t = disk.write(vec![DiskOp::Snapshot(snap.clone())]).unwrap();
        // A truncation makes the log part of the fsync stale; the snapshot
        // part still completes.
        disk.write(vec![DiskOp::Truncate { after: make_zxid(1, 5) }]);
        assert_eq!(
            disk.fsync(t).unwrap(),
            crate::disk::Synced {
                log: None,
                snapshot: Some(snap.zxid)
            }
        );
        disk.crash(true, &mut ChaCha8Rng::seed_from_u64(seed));
        let d = disk.load();
        assert_eq!(d.snapshots, vec![snap.clone()]);
        if d.log.is_empty() {
            torn += 1;
            assert_eq!(d.floor, snap.zxid);
        } else {
            assert_eq!(d.log.last().unwrap().zxid, snap.zxid);
        }
        let p: Peer<u64, Applied> = Peer::new(1, vec![1, 2, 3], snappy(), d);
        assert_eq!(p.last_zxid(), snap.zxid);
        assert_eq!(p.commit(), snap.zxid);
    }
    assert!(torn > 0);
}
