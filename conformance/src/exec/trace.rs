//! What a run records: each call's outcome and each watch's events.

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{OpResult, ReadResult, SessionId, SessionState, Stat, WatchedEvent, ZkError};

use crate::ops::Step;

/// What one call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Created {
        path: String,
        stat: Stat,
    },
    Deleted,
    Exists(Option<Stat>),
    Data {
        data: Vec<u8>,
        stat: Stat,
    },
    /// Children sorted by name (ZooKeeper's order is unspecified).
    Children {
        children: Vec<String>,
        stat: Stat,
    },
    SetData(Stat),
    Multi(Vec<OpResult>),
    /// multiRead results; children sorted by name.
    Reads(Vec<ReadResult>),
    MultiFailed {
        error: ZkError,
        /// `None` when the whole call failed (no per-op verdict).
        index: Option<usize>,
        results: Vec<OpResult>,
    },
    Synced,
    WatchAdded,
    Closed,
    /// A fault step: the client's session state once the fault took
    /// effect (`Disconnect`: Disconnected; `Reconnect`: SyncConnected, and
    /// whether the session is the same; `Expire`: Expired).
    Fault {
        state: SessionState,
        same_session: bool,
    },
    /// Not run: the client is cut off (a step between its `Disconnect`
    /// and `Reconnect`, which the generator never makes, but shrinking
    /// can), or a fault step that does not apply (reconnecting a client
    /// that is not cut off, faulting a closed one).
    NotRun,
    Error(ZkError),
}

/// One executed step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    pub index: usize,
    pub step: Step,
    /// The version arguments actually sent, in op order (-1 for creates).
    pub versions: Vec<i32>,
    pub outcome: Outcome,
}

/// Which read set a one-shot watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WatchKind {
    Exists,
    Data,
    Children,
    /// `addWatch` PERSISTENT.
    Persistent,
    /// `addWatch` PERSISTENT_RECURSIVE.
    PersistentRecursive,
}

/// A watch a step set (one-shot or persistent), and what it delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchRecord {
    pub client: usize,
    /// Index of the step that set it.
    pub set_at: usize,
    pub kind: WatchKind,
    pub path: String,
    /// The (first) event, or `None` if it had not fired when the run ended.
    pub event: Option<WatchedEvent>,
    /// Every event, in order (at most one for a one-shot watch).
    #[serde(default)]
    pub events: Vec<WatchedEvent>,
    /// The step after which the event was first seen (timing-dependent:
    /// the normaliser drops it).
    pub seen_after: Option<usize>,
}

/// Everything one run observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The absolute per-run root all relative paths hang under.
    pub root: String,
    /// Each client's session id, by client index.
    pub sessions: Vec<SessionId>,
    pub ops: Vec<OpRecord>,
    pub watches: Vec<WatchRecord>,
    /// Every delivered event as the index of its watch, in the order the
    /// clients delivered them (see [`Collector`](super::Collector)): the k-th occurrence of
    /// watch `i` is `watches[i].events[k]`.
    #[serde(default)]
    pub deliveries: Vec<usize>,
    /// The events a reconnect delivered (SetWatches' verdicts), as
    /// `(client, from, to)`: `deliveries[from..to]`. Their order within the
    /// burst is the client library's (the order of its watch table), not
    /// the server's.
    #[serde(default)]
    pub bursts: Vec<(usize, usize, usize)>,
}
