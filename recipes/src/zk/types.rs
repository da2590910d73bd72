//! ZooKeeper's data types: create modes, Stat, multi ops and their results.

use serde::{Deserialize, Serialize};

use super::error::ZkError;

pub use zkdst_model::{CreateMode, SessionId, Stat, Zxid};

/// `version` argument meaning "any version" (ZooKeeper's -1; no other
/// negative number is a wildcard).
pub const ANY_VERSION: i32 = -1;

/// Which events a persistent watch delivers (`AddWatchMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddWatchMode {
    /// Created, deleted, data and children changes of the path itself.
    Persistent,
    /// Created, deleted and data changes of the path and all descendants.
    PersistentRecursive,
}

/// One operation of a `multi`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    Check {
        path: String,
        version: i32,
    },
}

impl Op {
    pub fn path(&self) -> &str {
        match self {
            Op::Create { path, .. } | Op::Delete { path, .. } | Op::SetData { path, .. } | Op::Check { path, .. } => {
                path
            }
        }
    }
}

/// One read of a `multi_read` (ZooKeeper 3.6+'s multiRead): getData or
/// getChildren, without watches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadOp {
    GetData { path: String },
    GetChildren { path: String },
}

impl ReadOp {
    pub fn path(&self) -> &str {
        match self {
            ReadOp::GetData { path } | ReadOp::GetChildren { path } => path,
        }
    }
}

/// The result of one read of a `multi_read`. The reads are not atomic as a
/// whole: each one succeeds or fails on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadResult {
    Data {
        data: Vec<u8>,
        stat: Stat,
    },
    /// ZooKeeper's GetChildrenResult carries no Stat.
    Children {
        children: Vec<String>,
    },
    Error(ZkError),
}

/// The result of one operation of a `multi`, as ZooKeeper reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpResult {
    /// The created path (sequence suffix included) and the new node's Stat.
    Create {
        path: String,
        stat: Stat,
    },
    Delete,
    SetData {
        stat: Stat,
    },
    Check,
    /// In a failed multi: OK (`None`) for the ops before the failing one, the
    /// real error for the failing op, `RuntimeInconsistency` after it.
    Error(Option<ZkError>),
}

/// A failed `multi`: the failing op's error, and one result per op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("multi failed with {error} at op {index}")]
pub struct MultiError {
    pub error: ZkError,
    /// Index of the failing op, or `usize::MAX` when the whole call failed
    /// (ConnectionLoss, SessionExpired) and `results` is empty.
    pub index: usize,
    pub results: Vec<OpResult>,
}

impl MultiError {
    /// A multi that failed as a whole, before any per-op verdict.
    pub fn whole(error: ZkError) -> Self {
        MultiError {
            error,
            index: usize::MAX,
            results: Vec::new(),
        }
    }
}

impl From<ZkError> for MultiError {
    fn from(e: ZkError) -> Self {
        MultiError::whole(e)
    }
}
