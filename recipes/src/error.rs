//! The error every recipe returns.

use crate::zk::{MultiError, ZkError};

/// Why a recipe call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    /// A ZooKeeper call failed with an error the recipe does not absorb
    /// (ConnectionLoss only once retries are exhausted).
    #[error("zookeeper: {0}")]
    Zk(ZkError),
    /// The session expired or was closed: every ephemeral node it owned
    /// (locks, leases, leadership, membership) is gone.
    #[error("session lost (expired or closed)")]
    SessionLost,
    /// The call was abandoned (a caller timeout, or the handle was closed).
    #[error("cancelled: {0}")]
    Cancelled(&'static str),
    /// The outcome of a write is unknown and the recipe cannot find out; the
    /// caller must treat the operation as possibly applied.
    #[error("ambiguous outcome: {0}")]
    Ambiguous(String),
    /// A node the recipe owned disappeared while its session is alive
    /// (deleted by someone else).
    #[error("node {0} disappeared")]
    NodeGone(String),
    /// A node's data is not in the format this recipe writes.
    #[error("bad data at {path}: {reason}")]
    BadData { path: String, reason: String },
    /// The recipe's protocol was violated by another participant (for
    /// example a conflicting vote already recorded).
    #[error("protocol conflict: {0}")]
    Conflict(String),
    /// An argument the caller passed is unusable.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl RecipeError {
    /// Maps session-ending ZooKeeper errors to [`RecipeError::SessionLost`].
    pub fn from_zk(e: ZkError) -> Self {
        if e.is_session_lost() {
            RecipeError::SessionLost
        } else {
            RecipeError::Zk(e)
        }
    }

    /// True when retrying with the same session cannot help.
    pub fn is_session_lost(&self) -> bool {
        matches!(self, RecipeError::SessionLost)
    }
}

impl From<ZkError> for RecipeError {
    fn from(e: ZkError) -> Self {
        RecipeError::from_zk(e)
    }
}

impl From<MultiError> for RecipeError {
    fn from(e: MultiError) -> Self {
        RecipeError::from_zk(e.error)
    }
}

/// Result of a recipe call.
pub type RecipeResult<T> = Result<T, RecipeError>;
