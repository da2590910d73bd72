//! What the poll checks (`hold-polls`, `member-polls`) share: a client's
//! reads of one node, told answered from failed, and the commits that
//! could have changed what such a read answers.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Time, TxnRecord, Value};

use super::common::ok_value;

/// Commit times of each path's changes.
#[derive(Default)]
pub struct NodeLife {
    pub created: Vec<Time>,
    pub sets: Vec<Time>,
    /// Deletions, a session's end included.
    pub deleted: Vec<Time>,
}

impl NodeLife {
    /// Changes of any kind within `window`.
    pub fn changes_within(&self, window: &std::ops::Range<Time>) -> usize {
        [&self.created, &self.sets, &self.deleted]
            .iter()
            .map(|ts| ts.iter().filter(|t| window.contains(*t)).count())
            .sum()
    }
}

/// Every path's [`NodeLife`], by the commit log.
pub fn node_lives(h: &History) -> BTreeMap<&str, NodeLife> {
    let mut out: BTreeMap<&str, NodeLife> = BTreeMap::new();
    for (t, _, txn) in h.committed_parts() {
        match txn {
            TxnRecord::Create { path, .. } => out.entry(path.as_str()).or_default().created.push(t),
            TxnRecord::SetData { path, .. } => out.entry(path.as_str()).or_default().sets.push(t),
            TxnRecord::Delete { path } => out.entry(path.as_str()).or_default().deleted.push(t),
            TxnRecord::CloseSession { deleted, .. } => {
                for p in deleted {
                    out.entry(p.as_str()).or_default().deleted.push(t);
                }
            }
            _ => {}
        }
    }
    out
}

/// The path a read names, for reads of one node (`getData`, `exists`).
pub fn read_path(o: &Operation) -> Option<&str> {
    match &o.op {
        Op::GetData { path, .. } | Op::Exists { path, .. } => Some(path),
        _ => None,
    }
}

/// How many of `reads` were answered, and how many failed: an error reply
/// (NoNode) counts as failed, as the reader tries again after it.
pub fn answered_and_failed(reads: &[&&Operation]) -> (usize, usize) {
    let answered = reads
        .iter()
        .filter(|o| ok_value(o).is_some_and(|v| !matches!(v, Value::Error { .. })))
        .count();
    (answered, reads.len() - answered)
}

/// Reads allowed beyond twice the wake-ups: the first try, a change that
/// raced a read, a reconnect's re-read.
const SLACK: usize = 4;

/// Whether `answered` reads are more than `wakeups` could have called for:
/// each wake-up (the first read among them) may take two (a read, then
/// the watch re-armed), plus [`SLACK`].
pub fn polled(answered: usize, wakeups: usize) -> bool {
    answered > 2 * wakeups + SLACK
}
