//! ZooKeeper's own consistency model, checked with the zxids a history
//! records as the witness (ZooKeeper 3.8 guarantees, zookeeper-semantics.md
//! §1.11):
//!
//! - writes are linearizable: write zxids increase in real-time order, and
//!   replaying the writes in zxid order through a data-tree model
//!   reproduces every reply (result, error code, sequential name, Stat);
//! - a session's operations are FIFO and the zxids it sees never go back,
//!   across reconnects too;
//! - reads are sequentially consistent: each read equals the replayed state
//!   at its reply zxid (a follower may be behind: a stale read is legal),
//!   and never reflects a write invoked after it returned;
//! - `sync` then read sees every write completed before the sync;
//! - an expired or closed session's ephemerals all go in its one close txn;
//! - the client refuses exactly the paths ZooKeeper's `PathUtils` refuses,
//!   before sending them (`paths`);
//! - a one-shot watch fires once, on the first change after it was set,
//!   and its event comes before any reply that reflects that change: the
//!   `watches` checker, run on every scenario's seeds, which also holds
//!   each client's session states to transitions (`states`).
//!
//! With Commit events, the commit stream is the truth and indeterminate
//! (ConnectionLoss) writes are resolved against it. Without them, every
//! order check still runs, and the replay covers acknowledged writes and
//! reads up to the first zxid an indeterminate write or an observed session
//! end could occupy (reported in the notes and the `unchecked_ops` figure).

mod compare;
mod op_text;
mod order;
pub mod paths;
mod replay;
mod states;
pub mod tree;
pub mod watches;

use std::collections::BTreeMap;

use crate::history::{Event, History, Op, OpId, Operation, Outcome, SessionId, Zxid};
use crate::properties::{CheckResult, Params};

pub use tree::DataTree;

/// The registry name of this checker.
pub const NAME: &str = "zk-consistency";

/// History meta: the simulator's offset of sequential names (its
/// `sequence_base` knob); absent means ZooKeeper's own naming.
pub const SEQUENCE_BASE: &str = "sequence_base";

/// Checks ZooKeeper's consistency model on a history.
pub fn check(history: &History, params: &Params) -> CheckResult {
    crate::properties::with_operations(history, NAME, params, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(history: &History, ops: &[Operation], _params: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let sequence_base = match history.meta.get(SEQUENCE_BASE).map(|b| b.trim().parse::<i32>()) {
        None => 0,
        Some(Ok(b)) => b,
        Some(Err(e)) => {
            return CheckResult::unknown(
                NAME,
                format!("malformed history: meta {SEQUENCE_BASE:?} is not a 32-bit integer ({e})"),
            )
        }
    };
    let commits = replay::collect_commits(history, &mut r);
    let bound = if commits.is_empty() {
        let b = certain_bound(history, &ops);
        r.note(match b {
            Some(z) => format!(
                "no Commit events: the replay covers acknowledged writes and reads up to zxid {z:#x}; after it an indeterminate write or a session end may have happened at an unknown zxid"
            ),
            None => "no Commit events: acknowledged writes were replayed at their reply zxids (no indeterminate writes or session ends)".into(),
        });
        b
    } else {
        None
    };
    let replayed = replay::replay(&ops, &commits, bound, sequence_base, &mut r);
    let by_id: BTreeMap<OpId, &Operation> = ops.iter().map(|o| (o.id, o)).collect();
    order::writes_in_real_time_order(&by_id, &replayed.write_zxids, &mut r);
    order::sessions_monotonic(history, &by_id, &replayed.write_zxids, &mut r);
    order::no_reads_from_future(&by_id, &replayed.write_zxids, &commits, &mut r);
    order::sync_then_read(&by_id, &replayed.write_zxids, &mut r);
    paths::client_validation(&ops, &mut r);
    r.figure("commits", commits.len() as f64);
    r.figure("checked_writes", replayed.checked_writes as f64);
    r.figure("checked_reads", replayed.checked_reads as f64);
    r.figure("unchecked_ops", replayed.unchecked as f64);
    r
}

/// Without Commit events: the largest zxid whose state is certain. An
/// indeterminate write, if it happened, has a zxid above every zxid returned
/// before it was invoked; an observed session end (with ephemerals) comes
/// after every zxid that session was answered with.
fn certain_bound(history: &History, ops: &[Operation]) -> Option<Zxid> {
    let answered: Vec<(u64, Zxid)> = ops
        .iter()
        .filter_map(|o| match (&o.outcome, o.completed, o.zxid) {
            (Some(Outcome::Ok { .. }), Some(t), Some(z)) => Some((t, z)),
            _ => None,
        })
        .collect();
    let mut bound: Option<Zxid> = None;
    let mut lower = |z: Zxid| bound = Some(bound.map_or(z, |b: Zxid| b.min(z)));
    for w in ops
        .iter()
        .filter(|o| (replay::is_write(&o.op) || matches!(o.op, Op::CloseSession)) && o.is_indeterminate())
    {
        lower(
            answered
                .iter()
                .filter(|(t, _)| *t < w.invoked)
                .map(|(_, z)| *z)
                .max()
                .unwrap_or(0),
        );
    }
    let with_ephemerals: Vec<SessionId> = ops
        .iter()
        .filter_map(|o| match &o.op {
            Op::Create { mode, .. } if mode.is_ephemeral() => o.session,
            Op::Multi { ops: sub }
                if sub
                    .iter()
                    .any(|s| matches!(s, Op::Create { mode, .. } if mode.is_ephemeral())) =>
            {
                o.session
            }
            _ => None,
        })
        .collect();
    for e in &history.events {
        if let Event::Session { session, state, .. } = e {
            let ended = state.is_end();
            if ended && with_ephemerals.contains(session) {
                let last = ops
                    .iter()
                    .filter(|o| o.session == Some(*session))
                    .filter_map(|o| o.zxid)
                    .max()
                    .unwrap_or(0);
                lower(last);
            }
        }
    }
    bound
}

#[cfg(test)]
mod tests;
