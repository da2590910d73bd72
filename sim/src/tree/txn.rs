//! Transactions (what the leader proposes and every server applies in zxid
//! order), their results, and the watch triggers they cause.

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{EventType, MultiError, OpResult, SessionId, Stat, ZkError};

/// A transaction, as ZooKeeper's `TxnHeader` type + record. Decided by
/// `prep` against the leader's speculative tree; `DataTree::apply` turns it
/// into a state change. Every variant consumes one zxid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Txn {
    /// A session was created (`CreateSessionTxn`).
    CreateSession {
        session: SessionId,
        timeout_ms: i32,
    },
    /// A session ended (close or expiry): all its ephemerals are deleted in
    /// this one txn.
    CloseSession {
        session: SessionId,
    },
    /// `CreateTxn`: `path` is final (sequence suffix included);
    /// `ephemeral_owner` is raw (see `EphemeralType`); `parent_cversion` is
    /// the parent's new internal child-create counter.
    Create {
        path: String,
        data: Vec<u8>,
        ephemeral_owner: i64,
        parent_cversion: i32,
    },
    Delete {
        path: String,
    },
    /// `version` is the node's new version.
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    /// A multi's version check; applies as a no-op. `version` is the version
    /// that was checked.
    Check {
        path: String,
        version: i32,
    },
    /// A successful multi: every op applies at the same zxid.
    Multi(Vec<Txn>),
    /// A request decided as an error (`ErrorTxn`): changes nothing.
    Error(ZkError),
    /// A failed multi (a `MultiTxn` of `ErrorTxn`s): changes nothing; the
    /// per-op results are OK before `index`, `error` at it and
    /// RuntimeInconsistency after it, `op_count` in all.
    MultiError {
        index: usize,
        error: ZkError,
        op_count: usize,
    },
    /// A container or TTL node deletion decided by the reaper
    /// (`deleteContainer`). Re-checked at apply: a node that is gone or has
    /// children is left alone.
    DeleteContainer {
        path: String,
    },
}

/// What the client that issued the request gets back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TxnResult {
    /// The created path and the new node's Stat (`create2`).
    Create {
        path: String,
        stat: Stat,
    },
    Delete,
    SetData {
        stat: Stat,
    },
    Check,
    /// A successful multi: one result per op.
    Multi(Vec<OpResult>),
    /// A failed multi: nothing applied.
    MultiFailed(MultiError),
    Error(ZkError),
    CreateSession,
    /// The session's ephemerals that were deleted, sorted.
    CloseSession {
        deleted: Vec<String>,
    },
}

impl TxnResult {
    /// The error code the client sees, `None` for success.
    pub fn error(&self) -> Option<&ZkError> {
        match self {
            TxnResult::Error(e) => Some(e),
            TxnResult::MultiFailed(m) => Some(&m.error),
            _ => None,
        }
    }
}

/// A watch trigger: `event_type` happened to `path`. `DataTree::apply` lists
/// them in ZooKeeper's order; `WatchManager::trigger` turns them into events.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trigger {
    pub path: String,
    pub event_type: EventType,
}

impl Trigger {
    pub fn new(path: impl Into<String>, event_type: EventType) -> Trigger {
        Trigger {
            path: path.into(),
            event_type,
        }
    }
}

/// The outcome of applying one txn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub result: TxnResult,
    pub triggers: Vec<Trigger>,
}

/// The per-op results of a multi that failed at `index`.
pub(crate) fn failed_multi(index: usize, error: ZkError, op_count: usize) -> MultiError {
    let op_count = op_count.max(index + 1);
    let results = (0..op_count)
        .map(|i| match i.cmp(&index) {
            std::cmp::Ordering::Less => OpResult::Error(None),
            std::cmp::Ordering::Equal => OpResult::Error(Some(error.clone())),
            std::cmp::Ordering::Greater => OpResult::Error(Some(ZkError::RuntimeInconsistency)),
        })
        .collect();
    MultiError { error, index, results }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_multi_results() {
        let m = failed_multi(1, ZkError::NodeExists, 3);
        assert_eq!(
            m.results,
            vec![
                OpResult::Error(None),
                OpResult::Error(Some(ZkError::NodeExists)),
                OpResult::Error(Some(ZkError::RuntimeInconsistency))
            ]
        );
        assert_eq!(m.index, 1);
        assert_eq!(m.error, ZkError::NodeExists);
    }

    #[test]
    fn txns_round_trip_through_serde() {
        let t = Txn::Multi(vec![
            Txn::Create {
                path: "/a".into(),
                data: vec![1],
                ephemeral_owner: 7,
                parent_cversion: 3,
            },
            Txn::Check {
                path: "/a".into(),
                version: 0,
            },
        ]);
        let json = serde_json::to_string(&t).expect("serializable");
        assert_eq!(serde_json::from_str::<Txn>(&json).expect("deserializable"), t);
    }
}
