//! A server's transaction log and snapshots as the replication core sees
//! them (ZooKeeper's FileTxnSnapLog): the log after the purge point, the
//! durable snapshots kept for recovery and SNAP sync, and how a leader
//! chooses DIFF, TRUNC or SNAP for a follower. Every change is also queued
//! as a `DiskOp` for the shell to write.

use std::collections::VecDeque;

use zkdst_model::{epoch_of, Zxid};

/// The applied state at `zxid` (a `snapshot.<zxid>` file).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot<S> {
    pub zxid: Zxid,
    pub data: S,
}

/// A write the shell must make to the server's disk.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskOp<T, S> {
    /// Epoch files: written and synced at once (as ZooKeeper does).
    SetEpochs { accepted: u32, current: u32 },
    /// Drop log entries after `after` (durable at once).
    Truncate { after: Zxid },
    /// Append to the log; durable only after an fsync.
    Append(Entry<T>),
    /// A periodic snapshot; durable only after an fsync. A crash before
    /// then leaves a torn file that recovery skips.
    Snapshot(Snapshot<S>),
    /// SNAP sync: the leader's snapshot replaces the log and every older
    /// snapshot, synced at once (ZooKeeper takes it synchronously).
    InstallSnapshot(Snapshot<S>),
    /// Drop log entries at or before `upto`, and snapshots older than it:
    /// a durable snapshot at `upto` covers them (autopurge).
    Purge { upto: Zxid },
}

/// One entry of the transaction log.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<T> {
    pub zxid: Zxid,
    pub txn: T,
}

/// How a leader brings a follower up to date.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncKind<S> {
    /// The follower's last zxid is in our history: send what follows it.
    Diff,
    /// The follower has txns we lack after this zxid (all in one epoch):
    /// it drops them, then takes what follows.
    Trunc(Zxid),
    /// The follower is behind our purged log, or diverged across an epoch
    /// boundary: it replaces its state with our snapshot.
    Snap(Snapshot<S>),
}

/// A leader's plan for one follower: the kind, and the index of the first
/// log entry to send after it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SyncPlan<S> {
    pub kind: SyncKind<S>,
    pub from: usize,
}

/// The log and snapshots, in memory.
#[derive(Debug)]
pub(super) struct TxnLog<T: Clone, S> {
    entries: im::Vector<Entry<T>>,
    /// Every txn after `floor` is in `entries`; those at or before it were
    /// purged (they are in a snapshot).
    floor: Zxid,
    /// Durable snapshots, oldest first.
    snapshots: VecDeque<Snapshot<S>>,
    /// Snapshots written and not yet fsynced, oldest first.
    pending: VecDeque<Snapshot<S>>,
    /// ZooKeeper's autopurge.snapRetainCount.
    retain: usize,
}

impl<T: Clone, S: Clone + Default> TxnLog<T, S> {
    pub fn new(entries: im::Vector<Entry<T>>, floor: Zxid, snapshots: Vec<Snapshot<S>>, retain: usize) -> Self {
        TxnLog {
            entries,
            floor,
            snapshots: snapshots.into(),
            pending: VecDeque::new(),
            retain: retain.max(1),
        }
    }

    pub fn entries(&self) -> &im::Vector<Entry<T>> {
        &self.entries
    }

    pub fn floor(&self) -> Zxid {
        self.floor
    }

    pub fn last_zxid(&self) -> Zxid {
        self.entries.last().map_or(self.floor, |e| e.zxid)
    }

    /// The newest durable snapshot; the empty state at zxid 0 if none.
    pub fn snapshot(&self) -> Snapshot<S> {
        self.snapshots.back().cloned().unwrap_or(Snapshot {
            zxid: 0,
            data: S::default(),
        })
    }

    pub fn snapshot_zxid(&self) -> Zxid {
        self.snapshots.back().map_or(0, |s| s.zxid)
    }

    /// Number of entries with zxid ≤ `zxid`.
    pub fn upper_bound(&self, zxid: Zxid) -> usize {
        let (mut lo, mut hi) = (0, self.entries.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.entries[mid].zxid <= zxid {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the entry with `zxid`.
    pub fn position(&self, zxid: Zxid) -> Option<usize> {
        let i = self.upper_bound(zxid);
        (i > 0 && self.entries[i - 1].zxid == zxid).then(|| i - 1)
    }

    pub fn append(&mut self, e: Entry<T>, ops: &mut Vec<DiskOp<T, S>>) {
        ops.push(DiskOp::Append(e.clone()));
        self.entries.push_back(e);
    }

    /// Drops entries after `zxid`; false if nothing was dropped.
    pub fn truncate_after(&mut self, zxid: Zxid, ops: &mut Vec<DiskOp<T, S>>) -> bool {
        let len = self.upper_bound(zxid);
        if len == self.entries.len() {
            return false;
        }
        self.entries.truncate(len);
        ops.push(DiskOp::Truncate { after: zxid });
        true
    }

    /// Starts writing a snapshot of the applied state.
    pub fn write_snapshot(&mut self, snap: Snapshot<S>, ops: &mut Vec<DiskOp<T, S>>) {
        ops.push(DiskOp::Snapshot(snap.clone()));
        self.pending.push_back(snap);
    }

    /// The snapshots written up to `zxid` are durable: keep the newest
    /// `retain` and purge the log up to the oldest kept. The log after it
    /// stays for DIFF. Returns the purge point, if it moved.
    pub fn snapshot_synced(&mut self, zxid: Zxid, ops: &mut Vec<DiskOp<T, S>>) -> Option<Zxid> {
        while self.pending.front().is_some_and(|s| s.zxid <= zxid) {
            let s = self.pending.pop_front()?;
            if self.snapshots.back().is_none_or(|b| b.zxid < s.zxid) {
                self.snapshots.push_back(s);
            }
        }
        while self.snapshots.len() > self.retain {
            self.snapshots.pop_front();
        }
        let upto = self.snapshots.front()?.zxid;
        if upto <= self.floor {
            return None;
        }
        let n = self.upper_bound(upto);
        self.entries = self.entries.skip(n);
        self.floor = upto;
        ops.push(DiskOp::Purge { upto });
        Some(upto)
    }

    /// SNAP sync: `snap` replaces everything.
    pub fn install(&mut self, snap: Snapshot<S>, ops: &mut Vec<DiskOp<T, S>>) {
        self.entries = im::Vector::new();
        self.floor = snap.zxid;
        self.pending.clear();
        self.snapshots = VecDeque::from([snap.clone()]);
        ops.push(DiskOp::InstallSnapshot(snap));
    }

    /// How to sync a follower whose last zxid is `peer_last` (ZooKeeper's
    /// LearnerHandler.syncFollower). A zxid names one proposal, and a
    /// server holding (e, c) holds epoch e's starting history and (e, 1..c):
    /// so a follower shares our history up to any zxid of ours it has, and
    /// up to our last txn before its last one if that is in the same epoch.
    /// Across an epoch boundary nothing says which of our older txns it has.
    pub fn plan(&self, peer_last: Zxid) -> SyncPlan<S> {
        if peer_last >= self.floor {
            let keep = self.upper_bound(peer_last);
            let prev = if keep == 0 {
                self.floor
            } else {
                self.entries[keep - 1].zxid
            };
            if prev == peer_last {
                return SyncPlan {
                    kind: SyncKind::Diff,
                    from: keep,
                };
            }
            if epoch_of(prev) == epoch_of(peer_last) {
                return SyncPlan {
                    kind: SyncKind::Trunc(prev),
                    from: keep,
                };
            }
        }
        let snap = self.snapshot();
        SyncPlan {
            from: self.upper_bound(snap.zxid),
            kind: SyncKind::Snap(snap),
        }
    }
}
