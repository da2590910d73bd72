//! Making traces of two backends (or two runs) comparable, and comparing
//! them.
//!
//! What differs between two correct runs, and how it is removed:
//! - The per-run root: absolute paths under it become `~/...` (`~` is the
//!   root). Sequential suffixes are kept as they are: under a fresh parent
//!   the counters start at 0 on every backend, so they must match.
//! - zxids (czxid, mzxid, pzxid): replaced by their rank among all zxids the
//!   trace shows (1, 2, ...), which keeps their order and equalities but not
//!   the gaps (other sessions, session creation, pings of other tests).
//! - ctime / mtime: wall clock; set to 0.
//! - Offsets in an InvalidPath error: counted from the normalised root.
//! - Session ids: an ephemeral owner becomes its client's index + 1 (0 stays
//!   0; an unknown session becomes -1).
//! - The Stat in a `multi`'s create result: ZooKeeper 3.8.0 answers creates
//!   inside a multi with a plain CREATE response, without a Stat
//!   (ZOOKEEPER-4026/4667), so `zookeeper-client` reports an invalid Stat
//!   (all -1). Blanked to `Stat::default()` on both sides unless
//!   `keep_multi_create_stat`.
//! - When a watch event arrived (`seen_after`): timing; dropped. Which event
//!   each watch delivered is kept, and so is the order in which each client
//!   received its one-shot watch events (see [`event_sequences`]). Which of
//!   several watches fired by one notification came first is the client
//!   library's business: [`compare`] checks each client's sequence of
//!   events, not which watch took which place in it.
//!
//! Files: `norm` (the value rewriting), `events` (each client's event
//! order), `compare` (the first difference).

mod compare;
mod events;
mod norm;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::exec::{OpRecord, Trace, WatchRecord};
use norm::{for_each_stat, Norm};

pub use compare::{compare, compare_with, Divergence};
pub use events::event_sequences;

/// Normaliser switches.
#[derive(Debug, Clone, Default)]
pub struct NormalizeOptions {
    /// Keep the Stat of creates inside a multi (a backend that reports it on
    /// both sides).
    pub keep_multi_create_stat: bool,
}

/// A trace with the run-specific values replaced (see the module doc).
pub fn normalize(trace: &Trace, options: &NormalizeOptions) -> Trace {
    let mut zxids = Vec::new();
    for op in &trace.ops {
        for_each_stat(&op.outcome, options, &mut |s| {
            zxids.extend([s.czxid, s.mzxid, s.pzxid]);
        });
    }
    zxids.retain(|z| *z > 0);
    zxids.sort_unstable();
    zxids.dedup();
    let rank: BTreeMap<i64, i64> = zxids.iter().enumerate().map(|(i, z)| (*z, i as i64 + 1)).collect();
    let n = Norm {
        root: &trace.root,
        sessions: &trace.sessions,
        rank: &rank,
        options,
    };
    Trace {
        root: "~".to_string(),
        sessions: (0..trace.sessions.len() as i64).map(|i| i + 1).collect(),
        ops: trace
            .ops
            .iter()
            .map(|op| OpRecord {
                index: op.index,
                step: op.step.clone(),
                versions: op.versions.clone(),
                outcome: n.outcome(&op.outcome),
            })
            .collect(),
        watches: trace
            .watches
            .iter()
            .map(|w| WatchRecord {
                client: w.client,
                set_at: w.set_at,
                kind: w.kind,
                path: n.path(&w.path),
                event: w.event.as_ref().map(|e| n.event(e)),
                events: w.events.iter().map(|e| n.event(e)).collect(),
                seen_after: None,
            })
            .collect(),
        deliveries: trace.deliveries.clone(),
        bursts: trace.bursts.clone(),
    }
}
