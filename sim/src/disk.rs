//! A server's simulated disk: epoch files and the transaction log. It
//! outlives the server process (the node's `init` closure captures it), so a
//! restart finds what was durable. Appends are durable only after an fsync;
//! a crash may lose the unsynced tail, or keep a torn prefix of it.

use std::sync::{Arc, Mutex};

use rand::Rng;

use crate::zab::{DiskOp, Durable, Entry};

/// The log entry payload: the transaction and its header.
pub type LogTxn = Arc<crate::proto::LoggedTxn>;

#[derive(Debug, Default)]
struct State {
    accepted_epoch: u32,
    current_epoch: u32,
    log: im::Vector<Entry<LogTxn>>,
    synced: usize,
    generation: u64,
    fsyncs: u64,
    incarnation: u64,
}

/// A disk shared between a server and its restarts.
#[derive(Debug, Clone, Default)]
pub struct Disk {
    inner: Arc<Mutex<State>>,
}

/// A pending fsync: durable up to `len` entries unless the log was
/// truncated meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsyncTicket {
    generation: u64,
    len: usize,
}

impl Disk {
    pub fn new() -> Self {
        Disk::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock means a simulated task panicked mid-write; the
        // state is still the last one written.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a restarting server reads back.
    pub fn load(&self) -> Durable<LogTxn> {
        let s = self.lock();
        Durable {
            accepted_epoch: s.accepted_epoch,
            current_epoch: s.current_epoch,
            log: s.log.clone(),
        }
    }

    /// Applies the replication core's writes. Returns a ticket to fsync if
    /// anything was appended.
    pub fn write(&self, ops: Vec<DiskOp<LogTxn>>) -> Option<FsyncTicket> {
        let mut s = self.lock();
        let mut appended = false;
        for op in ops {
            match op {
                DiskOp::SetEpochs { accepted, current } => {
                    s.accepted_epoch = accepted;
                    s.current_epoch = current;
                }
                DiskOp::Truncate { len } => {
                    s.log.truncate(len);
                    s.synced = s.synced.min(len);
                    s.generation += 1;
                }
                DiskOp::Append(e) => {
                    s.log.push_back(e);
                    appended = true;
                }
            }
        }
        appended.then_some(FsyncTicket {
            generation: s.generation,
            len: s.log.len(),
        })
    }

    /// Completes an fsync; returns the zxid now durable, if any.
    pub fn fsync(&self, t: FsyncTicket) -> Option<i64> {
        let mut s = self.lock();
        if t.generation != s.generation || t.len > s.log.len() || t.len == 0 {
            return None;
        }
        s.fsyncs += 1;
        s.synced = s.synced.max(t.len);
        s.log.get(t.len - 1).map(|e| e.zxid)
    }

    /// A crash: with `lose_unsynced`, the unsynced tail is lost except for a
    /// random prefix of it (a torn write that still checksums).
    pub fn crash(&self, lose_unsynced: bool, rng: &mut impl Rng) -> usize {
        let mut s = self.lock();
        let unsynced = s.log.len() - s.synced;
        let mut lost = 0;
        if lose_unsynced && unsynced > 0 {
            let keep = s.synced + rng.gen_range(0..=unsynced);
            lost = s.log.len() - keep;
            s.log.truncate(keep);
        }
        s.synced = s.log.len();
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
        s.log.len() - s.synced
    }
}
