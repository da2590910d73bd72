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

use std::collections::BTreeMap;
use std::fmt;

use zkdst_recipes::zk::{OpResult, PathError, PathProblem, ReadResult, SessionId, Stat, WatchedEvent, ZkError};

use crate::exec::{OpRecord, Outcome, Trace, WatchKind, WatchRecord};

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

/// Each client's one-shot watch events in the order it received them, as
/// `(client, events)` for every client that received any.
///
/// Persistent watches are left out: each one's own event list is compared
/// watch by watch, but how its events interleave with other watches' is not
/// observable through `RealClient`, which forwards every watch through its
/// own task (a persistent watch's task may deliver two queued events before
/// a one-shot watch's task delivers the first one's twin). One-shot
/// forwarding tasks each deliver one event and run in the order the client
/// library woke them (a current-thread runtime), so their order is the
/// client's.
///
/// The events one reconnect delivered (a [`Trace::bursts`] entry: the
/// server's SetWatches verdicts) are sorted by (path, event type): the
/// server answers the client's lists in the order the client sent them,
/// and each client library sends its watch table in its own order (a hash
/// map's in both the Java client and `zookeeper-client`), so that order
/// says nothing about ZooKeeper. Which events the burst holds is compared.
pub fn event_sequences(trace: &Trace) -> Vec<(usize, Vec<WatchedEvent>)> {
    type Burst = (usize, usize, Vec<WatchedEvent>);
    fn flush(by_client: &mut BTreeMap<usize, Vec<WatchedEvent>>, b: Option<Burst>) {
        if let Some((client, _, mut events)) = b {
            events.sort_by_key(|e| (e.path.clone(), e.event_type.code()));
            by_client.entry(client).or_default().extend(events);
        }
    }
    let mut by_client: BTreeMap<usize, Vec<WatchedEvent>> = BTreeMap::new();
    let mut taken = vec![0usize; trace.watches.len()];
    let mut burst: Option<Burst> = None;
    for (k, &i) in trace.deliveries.iter().enumerate() {
        if burst.as_ref().is_some_and(|(_, to, _)| k >= *to) {
            flush(&mut by_client, burst.take());
        }
        if burst.is_none() {
            if let Some(&(client, _, to)) = trace.bursts.iter().find(|(_, from, to)| *from <= k && k < *to) {
                burst = Some((client, to, Vec::new()));
            }
        }
        let Some(w) = trace.watches.get(i) else { continue };
        let event = w.events.get(taken[i]).cloned();
        taken[i] += 1;
        if matches!(w.kind, WatchKind::Persistent | WatchKind::PersistentRecursive) {
            continue;
        }
        let Some(e) = event else { continue };
        match &mut burst {
            Some((client, _, events)) if *client == w.client => events.push(e),
            _ => by_client.entry(w.client).or_default().push(e),
        }
    }
    flush(&mut by_client, burst.take());
    by_client.into_iter().collect()
}

fn for_each_stat(outcome: &Outcome, options: &NormalizeOptions, f: &mut impl FnMut(&Stat)) {
    match outcome {
        Outcome::Created { stat, .. }
        | Outcome::Data { stat, .. }
        | Outcome::Children { stat, .. }
        | Outcome::SetData(stat) => f(stat),
        Outcome::Exists(Some(stat)) => f(stat),
        Outcome::Reads(results) => {
            for r in results {
                if let ReadResult::Data { stat, .. } = r {
                    f(stat)
                }
            }
        }
        Outcome::Multi(results) => {
            for r in results {
                match r {
                    OpResult::Create { stat, .. } if options.keep_multi_create_stat => f(stat),
                    OpResult::SetData { stat } => f(stat),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

struct Norm<'a> {
    root: &'a str,
    sessions: &'a [SessionId],
    rank: &'a BTreeMap<i64, i64>,
    options: &'a NormalizeOptions,
}

impl Norm<'_> {
    fn path(&self, p: &str) -> String {
        if p == self.root {
            "~".to_string()
        } else if let Some(rest) = p.strip_prefix(self.root).filter(|r| r.starts_with('/')) {
            format!("~{rest}")
        } else {
            p.to_string()
        }
    }

    fn zxid(&self, z: i64) -> i64 {
        if z <= 0 {
            z
        } else {
            self.rank.get(&z).copied().unwrap_or(-1)
        }
    }

    fn stat(&self, s: &Stat) -> Stat {
        let owner = if s.ephemeral_owner == 0 {
            0
        } else {
            self.sessions
                .iter()
                .position(|id| *id == s.ephemeral_owner)
                .map(|i| i as i64 + 1)
                .unwrap_or(-1)
        };
        Stat {
            czxid: self.zxid(s.czxid),
            mzxid: self.zxid(s.mzxid),
            pzxid: self.zxid(s.pzxid),
            ctime: 0,
            mtime: 0,
            ephemeral_owner: owner,
            ..*s
        }
    }

    fn error(&self, e: &ZkError) -> ZkError {
        match e {
            ZkError::InvalidPath(pe) => {
                // Offsets into the path count from the normalised root.
                let shift = if pe.path.starts_with(self.root) {
                    self.root.len().saturating_sub(1)
                } else {
                    0
                };
                let at = |a: &usize| a.saturating_sub(shift);
                let reason = match &pe.reason {
                    PathProblem::EmptyComponent { at: a } => PathProblem::EmptyComponent { at: at(a) },
                    PathProblem::RelativeComponent { at: a } => PathProblem::RelativeComponent { at: at(a) },
                    PathProblem::BadCharacter { at: a, ch } => PathProblem::BadCharacter { at: at(a), ch: *ch },
                    other => other.clone(),
                };
                ZkError::InvalidPath(PathError {
                    path: self.path(&pe.path),
                    reason,
                })
            }
            other => other.clone(),
        }
    }

    fn op_result(&self, r: &OpResult) -> OpResult {
        match r {
            OpResult::Create { path, stat } => OpResult::Create {
                path: self.path(path),
                stat: if self.options.keep_multi_create_stat {
                    self.stat(stat)
                } else {
                    Stat::default()
                },
            },
            OpResult::SetData { stat } => OpResult::SetData { stat: self.stat(stat) },
            OpResult::Error(Some(e)) => OpResult::Error(Some(self.error(e))),
            other => other.clone(),
        }
    }

    fn outcome(&self, o: &Outcome) -> Outcome {
        match o {
            Outcome::Created { path, stat } => Outcome::Created {
                path: self.path(path),
                stat: self.stat(stat),
            },
            Outcome::Exists(stat) => Outcome::Exists(stat.as_ref().map(|s| self.stat(s))),
            Outcome::Data { data, stat } => Outcome::Data {
                data: data.clone(),
                stat: self.stat(stat),
            },
            Outcome::Children { children, stat } => {
                let mut children = children.clone();
                children.sort();
                Outcome::Children {
                    children,
                    stat: self.stat(stat),
                }
            }
            Outcome::SetData(stat) => Outcome::SetData(self.stat(stat)),
            Outcome::Multi(results) => Outcome::Multi(results.iter().map(|r| self.op_result(r)).collect()),
            Outcome::Reads(results) => Outcome::Reads(
                results
                    .iter()
                    .map(|r| match r {
                        ReadResult::Data { data, stat } => ReadResult::Data {
                            data: data.clone(),
                            stat: self.stat(stat),
                        },
                        ReadResult::Children { children } => {
                            let mut children = children.clone();
                            children.sort();
                            ReadResult::Children { children }
                        }
                        ReadResult::Error(e) => ReadResult::Error(self.error(e)),
                    })
                    .collect(),
            ),
            Outcome::MultiFailed { error, index, results } => Outcome::MultiFailed {
                error: self.error(error),
                index: *index,
                results: results.iter().map(|r| self.op_result(r)).collect(),
            },
            Outcome::Error(e) => Outcome::Error(self.error(e)),
            other => other.clone(),
        }
    }

    fn event(&self, e: &WatchedEvent) -> WatchedEvent {
        WatchedEvent {
            path: e.path.as_ref().map(|p| self.path(p)),
            ..e.clone()
        }
    }
}

/// Where two normalised traces first differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divergence {
    /// Different numbers of ops or watches.
    Shape {
        what: &'static str,
        left: usize,
        right: usize,
    },
    /// Op `index` returned different results (or ran a different step).
    Op {
        index: usize,
        left: Box<OpRecord>,
        right: Box<OpRecord>,
    },
    /// The watch set by step `set_at` delivered different events (for a
    /// persistent watch: a different list).
    Watch {
        set_at: usize,
        left: Box<WatchRecord>,
        right: Box<WatchRecord>,
    },
    /// A client received its watch events in a different order.
    WatchOrder {
        client: usize,
        left: Vec<WatchedEvent>,
        right: Vec<WatchedEvent>,
    },
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Divergence::Shape { what, left, right } => {
                write!(f, "different number of {what}: left {left}, right {right}")
            }
            Divergence::Op { index, left, right } => {
                writeln!(f, "op {index} diverges: {}", left.step)?;
                if left.step != right.step {
                    writeln!(f, "  right ran a different step: {}", right.step)?;
                }
                if left.versions != right.versions {
                    writeln!(
                        f,
                        "  versions sent: left {:?}, right {:?}",
                        left.versions, right.versions
                    )?;
                }
                writeln!(f, "  left:  {:?}", left.outcome)?;
                write!(f, "  right: {:?}", right.outcome)
            }
            Divergence::Watch { set_at, left, right } => {
                writeln!(
                    f,
                    "watch set by op {set_at} (client {}, {:?} {}) diverges:",
                    left.client, left.kind, left.path
                )?;
                writeln!(f, "  left:  {:?}", left.events)?;
                write!(f, "  right: {:?}", right.events)
            }
            Divergence::WatchOrder { client, left, right } => {
                writeln!(f, "client {client} received its watch events in a different order:")?;
                let show = |v: &[WatchedEvent]| {
                    v.iter()
                        .map(|e| format!("{:?} {:?} {}", e.event_type, e.state, e.path.as_deref().unwrap_or("-")))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                writeln!(f, "  left:  [{}]", show(left))?;
                write!(f, "  right: [{}]", show(right))
            }
        }
    }
}

impl std::error::Error for Divergence {}

/// Compares two traces after normalising both; the first difference.
pub fn compare(a: &Trace, b: &Trace) -> Result<(), Divergence> {
    compare_with(a, b, &NormalizeOptions::default())
}

/// [`compare`] with explicit normaliser options.
pub fn compare_with(a: &Trace, b: &Trace, options: &NormalizeOptions) -> Result<(), Divergence> {
    let (a, b) = (normalize(a, options), normalize(b, options));
    for (l, r) in a.ops.iter().zip(&b.ops) {
        if l != r {
            return Err(Divergence::Op {
                index: l.index,
                left: Box::new(l.clone()),
                right: Box::new(r.clone()),
            });
        }
    }
    if a.ops.len() != b.ops.len() {
        return Err(Divergence::Shape {
            what: "ops",
            left: a.ops.len(),
            right: b.ops.len(),
        });
    }
    for (l, r) in a.watches.iter().zip(&b.watches) {
        if l != r {
            return Err(Divergence::Watch {
                set_at: l.set_at,
                left: Box::new(l.clone()),
                right: Box::new(r.clone()),
            });
        }
    }
    if a.watches.len() != b.watches.len() {
        return Err(Divergence::Shape {
            what: "watches",
            left: a.watches.len(),
            right: b.watches.len(),
        });
    }
    let (la, lb) = (event_sequences(&a), event_sequences(&b));
    for client in 0..a.sessions.len().max(b.sessions.len()) {
        let get = |v: &[(usize, Vec<WatchedEvent>)]| {
            v.iter()
                .find(|(c, _)| *c == client)
                .map(|(_, e)| e.clone())
                .unwrap_or_default()
        };
        let (l, r) = (get(&la), get(&lb));
        if l != r {
            return Err(Divergence::WatchOrder {
                client,
                left: l,
                right: r,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Step;
    use zkdst_recipes::zk::{CreateMode, EventType};

    fn stat(czxid: i64, owner: i64, ctime: i64) -> Stat {
        Stat {
            czxid,
            mzxid: czxid,
            pzxid: czxid,
            ctime,
            mtime: ctime,
            ephemeral_owner: owner,
            ..Stat::default()
        }
    }

    fn trace(root: &str, base: i64, sessions: [i64; 2], ctime: i64) -> Trace {
        let create = |i, path: &str, s| OpRecord {
            index: i,
            step: Step::Create {
                client: 0,
                path: path.to_string(),
                data: vec![],
                mode: CreateMode::Ephemeral,
            },
            versions: vec![],
            outcome: Outcome::Created {
                path: format!("{root}/{path}"),
                stat: s,
            },
        };
        Trace {
            root: root.to_string(),
            sessions: sessions.to_vec(),
            ops: vec![
                create(0, "a", stat(base + 3, sessions[1], ctime)),
                create(1, "b", stat(base + 10, sessions[0], ctime + 5)),
            ],
            watches: vec![WatchRecord {
                client: 1,
                set_at: 0,
                kind: crate::exec::WatchKind::Exists,
                path: format!("{root}/a"),
                event: Some(WatchedEvent::node(EventType::NodeDeleted, format!("{root}/a"))),
                events: vec![WatchedEvent::node(EventType::NodeDeleted, format!("{root}/a"))],
                seen_after: Some(base as usize),
            }],
            deliveries: vec![0],
            bursts: vec![],
        }
    }

    #[test]
    fn run_specific_values_are_removed() {
        let a = trace("/t-1", 100, [0x111, 0x222], 1000);
        let b = trace("/t-2", 7000, [0x333, 0x444], 99999);
        assert_eq!(compare(&a, &b), Ok(()));
        let n = normalize(&a, &NormalizeOptions::default());
        assert_eq!(
            n.ops[0].outcome,
            Outcome::Created {
                path: "~/a".to_string(),
                stat: stat(1, 2, 0)
            }
        );
    }

    #[test]
    fn real_differences_are_reported() {
        let a = trace("/t-1", 100, [0x111, 0x222], 1000);
        let mut b = trace("/t-2", 7000, [0x333, 0x444], 1000);
        // Same zxid order, but owned by the other client.
        if let Outcome::Created { stat, .. } = &mut b.ops[1].outcome {
            stat.ephemeral_owner = 0x444;
        }
        let d = compare(&a, &b).expect_err("owners differ");
        assert!(matches!(d, Divergence::Op { index: 1, .. }), "{d}");
        assert!(d.to_string().contains("op 1 diverges"));

        let mut c = trace("/t-3", 100, [0x111, 0x222], 1000);
        c.watches[0].event = None;
        c.watches[0].events.clear();
        c.deliveries.clear();
        let d = compare(&a, &c).expect_err("watch differs");
        assert!(matches!(d, Divergence::Watch { set_at: 0, .. }), "{d}");

        // zxid equalities are kept: a create that shares its zxid differs
        // from one that does not.
        let mut e = trace("/t-4", 100, [0x111, 0x222], 1000);
        if let Outcome::Created { stat, .. } = &mut e.ops[1].outcome {
            stat.mzxid = 103;
        }
        assert!(compare(&a, &e).is_err());
    }

    #[test]
    fn a_clients_event_order_is_compared() {
        let mut a = trace("/t-1", 100, [0x111, 0x222], 1000);
        let second = WatchRecord {
            set_at: 1,
            kind: crate::exec::WatchKind::Children,
            event: Some(WatchedEvent::node(EventType::NodeChildrenChanged, "/t-1".to_string())),
            events: vec![WatchedEvent::node(EventType::NodeChildrenChanged, "/t-1".to_string())],
            ..a.watches[0].clone()
        };
        a.watches.push(second);
        a.deliveries = vec![0, 1];
        let mut b = a.clone();
        b.root = "/t-2".to_string();
        for w in &mut b.watches {
            for e in w.events.iter_mut().chain(w.event.iter_mut()) {
                e.path = e.path.as_ref().map(|p| p.replace("/t-1", "/t-2"));
            }
            w.path = w.path.replace("/t-1", "/t-2");
        }
        if let Outcome::Created { path, .. } = &mut b.ops[0].outcome {
            *path = path.replace("/t-1", "/t-2");
        }
        if let Outcome::Created { path, .. } = &mut b.ops[1].outcome {
            *path = path.replace("/t-1", "/t-2");
        }
        assert_eq!(compare(&a, &b), Ok(()));
        b.deliveries = vec![1, 0];
        let d = compare(&a, &b).expect_err("order differs");
        assert!(matches!(d, Divergence::WatchOrder { client: 1, .. }), "{d}");
    }
}
