//! A server's simulated disk: epoch files, the transaction log and
//! snapshots. It outlives the server process (the node's `init` closure
//! captures it), so a restart finds what was durable. Log appends and
//! periodic snapshots are durable only after an fsync; a crash may lose the
//! unsynced log tail, or keep a torn prefix of it, and loses (tears) an
//! unsynced snapshot, which recovery skips for the previous one.

use std::sync::{Arc, Mutex};

use rand::Rng;

use crate::zab::{DiskOp, Durable, Entry, Snapshot, Zxid};

pub use crate::proto::{LogTxn, SnapImage};

#[derive(Debug)]
struct State<T: Clone, S> {
    accepted_epoch: u32,
    current_epoch: u32,
    log: im::Vector<Entry<T>>,
    /// Every txn after it is in `log` (older ones were purged).
    floor: Zxid,
    /// Log entries up to this zxid are durable.
    synced: Zxid,
    /// Snapshots oldest first, each with its write sequence number and
    /// whether it is durable.
    snapshots: Vec<(u64, Snapshot<S>, bool)>,
    snap_seq: u64,
    generation: u64,
    incarnation: u64,
    stats: DiskStats,
}

impl<T: Clone, S> Default for State<T, S> {
    fn default() -> Self {
        State {
            accepted_epoch: 0,
            current_epoch: 0,
            log: im::Vector::new(),
            floor: 0,
            synced: 0,
            snapshots: Vec::new(),
            snap_seq: 0,
            generation: 0,
            incarnation: 0,
            stats: DiskStats::default(),
        }
    }
}

/// What a disk went through, for tests that must see snapshots happen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Periodic snapshots written, and of them made durable.
    pub snapshots_written: u64,
    pub snapshots_synced: u64,
    /// Unsynced snapshots a crash tore.
    pub snapshots_torn: u64,
    /// SNAP syncs received from a leader.
    pub snaps_installed: u64,
    /// Log purges after a durable snapshot, and entries they removed.
    pub purges: u64,
    pub purged_entries: u64,
    /// Restarts that began from a snapshot.
    pub loads_from_snapshot: u64,
}

/// A disk shared between a server and its restarts. Generic so that the
/// replication core's unit tests run on the same disk model.
#[derive(Debug)]
pub struct Disk<T: Clone = LogTxn, S = SnapImage> {
    inner: Arc<Mutex<State<T, S>>>,
}

impl<T: Clone, S> Clone for Disk<T, S> {
    fn clone(&self) -> Self {
        Disk {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Clone, S> Default for Disk<T, S> {
    fn default() -> Self {
        Disk {
            inner: Arc::new(Mutex::new(State::default())),
        }
    }
}

/// A pending fsync: covers the log up to `zxid` (unless it was truncated
/// or replaced meanwhile) and every snapshot written up to `snap_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsyncTicket {
    generation: u64,
    zxid: Option<Zxid>,
    snap_seq: u64,
}

/// What an fsync made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Synced {
    /// The log, up to this zxid.
    pub log: Option<Zxid>,
    /// Snapshots, up to this zxid.
    pub snapshot: Option<Zxid>,
}

impl<T: Clone, S: Clone> Disk<T, S> {
    pub fn new() -> Self {
        Disk::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T, S>> {
        // A poisoned lock means a simulated task panicked mid-write; the
        // state is still the last one written.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a restarting server reads back: the durable snapshots and the
    /// log. A log torn short of the newest snapshot is useless before it
    /// (the snapshot covers it), so the log then starts after the snapshot.
    pub fn load(&self) -> Durable<T, S> {
        let mut s = self.lock();
        let snapshots: Vec<Snapshot<S>> = s
            .snapshots
            .iter()
            .filter(|(_, _, synced)| *synced)
            .map(|(_, snap, _)| snap.clone())
            .collect();
        let mut floor = s.floor;
        let mut log = s.log.clone();
        if let Some(newest) = snapshots.last() {
            s.stats.loads_from_snapshot += 1;
            if log.last().map_or(floor, |e| e.zxid) < newest.zxid {
                floor = newest.zxid;
                log = im::Vector::new();
            }
        }
        Durable {
            accepted_epoch: s.accepted_epoch,
            current_epoch: s.current_epoch,
            snapshots,
            floor,
            log,
        }
    }

    /// Applies the replication core's writes. Returns a ticket to fsync if
    /// anything needs one.
    pub fn write(&self, ops: Vec<DiskOp<T, S>>) -> Option<FsyncTicket> {
        let mut s = self.lock();
        let mut needs_sync = false;
        for op in ops {
            match op {
                DiskOp::SetEpochs { accepted, current } => {
                    s.accepted_epoch = accepted;
                    s.current_epoch = current;
                }
                DiskOp::Truncate { after } => {
                    let keep = upper_bound(&s.log, after);
                    s.log.truncate(keep);
                    s.synced = s.synced.min(after);
                    s.generation += 1;
                }
                DiskOp::Append(e) => {
                    s.log.push_back(e);
                    needs_sync = true;
                }
                DiskOp::Snapshot(snap) => {
                    s.snap_seq += 1;
                    let seq = s.snap_seq;
                    s.snapshots.push((seq, snap, false));
                    s.stats.snapshots_written += 1;
                    needs_sync = true;
                }
                DiskOp::InstallSnapshot(snap) => {
                    s.snap_seq += 1;
                    let seq = s.snap_seq;
                    s.floor = snap.zxid;
                    s.synced = snap.zxid;
                    s.log = im::Vector::new();
                    s.snapshots = vec![(seq, snap, true)];
                    s.generation += 1;
                    s.stats.snaps_installed += 1;
                }
                DiskOp::Purge { upto } => {
                    let n = upper_bound(&s.log, upto);
                    s.log = s.log.skip(n);
                    s.floor = s.floor.max(upto);
                    s.snapshots.retain(|(_, snap, _)| snap.zxid >= upto);
                    s.stats.purges += 1;
                    s.stats.purged_entries += n as u64;
                }
            }
        }
        needs_sync.then(|| FsyncTicket {
            generation: s.generation,
            zxid: s.log.last().map(|e| e.zxid),
            snap_seq: s.snap_seq,
        })
    }

    /// Completes an fsync; says what is now durable, if anything.
    pub fn fsync(&self, t: FsyncTicket) -> Option<Synced> {
        let mut s = self.lock();
        let mut out = Synced::default();
        if let Some(z) = t.zxid.filter(|_| t.generation == s.generation) {
            s.synced = s.synced.max(z);
            out.log = Some(z);
        }
        let mut newly = 0;
        for (seq, snap, synced) in s.snapshots.iter_mut() {
            if *seq <= t.snap_seq && !*synced {
                newly += 1;
                *synced = true;
                out.snapshot = Some(snap.zxid);
            }
        }
        s.stats.snapshots_synced += newly;
        (out != Synced::default()).then_some(out)
    }

    /// A crash: unsynced snapshots are torn (lost); with `lose_unsynced`,
    /// the unsynced log tail is lost except for a random prefix of it (a
    /// torn write that still checksums).
    pub fn crash(&self, lose_unsynced: bool, rng: &mut impl Rng) -> usize {
        let mut s = self.lock();
        let before = s.snapshots.len();
        s.snapshots.retain(|(_, _, synced)| *synced);
        s.stats.snapshots_torn += (before - s.snapshots.len()) as u64;
        let durable = upper_bound(&s.log, s.synced);
        let unsynced = s.log.len() - durable;
        let mut lost = 0;
        if lose_unsynced && unsynced > 0 {
            let keep = durable + rng.gen_range(0..=unsynced);
            lost = s.log.len() - keep;
            s.log.truncate(keep);
        }
        s.synced = s.log.last().map_or(s.floor, |e| e.zxid);
        s.generation += 1;
        lost
    }

    /// Counts a server start; each start gets a distinct number.
    pub fn next_incarnation(&self) -> u64 {
        let mut s = self.lock();
        s.incarnation += 1;
        s.incarnation
    }

    pub fn log_len(&self) -> usize {
        self.lock().log.len()
    }

    pub fn unsynced(&self) -> usize {
        let s = self.lock();
        s.log.len() - upper_bound(&s.log, s.synced)
    }

    pub fn stats(&self) -> DiskStats {
        self.lock().stats
    }
}

/// Number of entries with zxid ≤ `zxid`.
fn upper_bound<T: Clone>(log: &im::Vector<Entry<T>>, zxid: Zxid) -> usize {
    let (mut lo, mut hi) = (0, log.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if log[mid].zxid <= zxid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
