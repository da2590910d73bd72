//! ZooKeeper's error codes (`KeeperException.Code`), as recipes see them.

use serde::{Deserialize, Serialize};

use super::path::PathError;

/// An error a ZooKeeper operation can return. The discriminants are
/// ZooKeeper's own wire codes, so `code()` round-trips with the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
pub enum ZkError {
    #[error("SystemError (-1)")]
    SystemError,
    /// Per-op result of the ops after the failing one in a failed multi.
    #[error("RuntimeInconsistency (-2)")]
    RuntimeInconsistency,
    #[error("DataInconsistency (-3)")]
    DataInconsistency,
    /// The connection was lost with the request in flight or queued: the
    /// operation may or may not have been applied.
    #[error("ConnectionLoss (-4): the operation may or may not have been applied")]
    ConnectionLoss,
    #[error("MarshallingError (-5)")]
    MarshallingError,
    #[error("Unimplemented (-6)")]
    Unimplemented,
    #[error("OperationTimeout (-7)")]
    OperationTimeout,
    #[error("BadArguments (-8)")]
    BadArguments,
    #[error("UnknownSession (-12)")]
    UnknownSession,
    #[error("NoNode (-101)")]
    NoNode,
    #[error("NoAuth (-102)")]
    NoAuth,
    #[error("BadVersion (-103)")]
    BadVersion,
    #[error("NoChildrenForEphemerals (-108)")]
    NoChildrenForEphemerals,
    #[error("NodeExists (-110)")]
    NodeExists,
    #[error("NotEmpty (-111)")]
    NotEmpty,
    /// The session is gone: every operation on this handle fails from now on.
    #[error("SessionExpired (-112)")]
    SessionExpired,
    #[error("InvalidCallback (-113)")]
    InvalidCallback,
    #[error("InvalidACL (-114)")]
    InvalidAcl,
    #[error("AuthFailed (-115)")]
    AuthFailed,
    #[error("SessionMoved (-118)")]
    SessionMoved,
    #[error("NotReadOnly (-119)")]
    NotReadOnly,
    #[error("EphemeralOnLocalSession (-120)")]
    EphemeralOnLocalSession,
    #[error("NoWatcher (-121)")]
    NoWatcher,
    #[error("RequestTimeout (-122)")]
    RequestTimeout,
    #[error("QuotaExceeded (-125)")]
    QuotaExceeded,
    #[error("Throttled (-127)")]
    Throttled,
    /// The handle was closed by its owner (client-side; not a server code).
    #[error("Closed: the client handle was closed")]
    Closed,
    /// Rejected by the client before anything was sent (Java's
    /// IllegalArgumentException): says which rule the path broke.
    #[error("{0}")]
    InvalidPath(PathError),
    /// Rejected by the client before anything was sent: a bad argument other
    /// than the path (TTL out of range, TTL with a non-TTL mode, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl ZkError {
    /// ZooKeeper's numeric code.
    pub fn code(&self) -> i32 {
        use ZkError::*;
        match self {
            SystemError => -1,
            RuntimeInconsistency => -2,
            DataInconsistency => -3,
            ConnectionLoss => -4,
            MarshallingError => -5,
            Unimplemented => -6,
            OperationTimeout => -7,
            BadArguments => -8,
            UnknownSession => -12,
            NoNode => -101,
            NoAuth => -102,
            BadVersion => -103,
            NoChildrenForEphemerals => -108,
            NodeExists => -110,
            NotEmpty => -111,
            SessionExpired => -112,
            InvalidCallback => -113,
            InvalidAcl => -114,
            AuthFailed => -115,
            SessionMoved => -118,
            NotReadOnly => -119,
            EphemeralOnLocalSession => -120,
            NoWatcher => -121,
            RequestTimeout => -122,
            QuotaExceeded => -125,
            Throttled => -127,
            Closed => -112_000,
            InvalidPath(_) | InvalidArgument(_) => -8_000,
        }
    }

    /// The error for a numeric code, if ZooKeeper defines it.
    pub fn from_code(code: i32) -> Option<ZkError> {
        use ZkError::*;
        const ALL: [ZkError; 27] = [
            SystemError,
            RuntimeInconsistency,
            DataInconsistency,
            ConnectionLoss,
            MarshallingError,
            Unimplemented,
            OperationTimeout,
            BadArguments,
            UnknownSession,
            NoNode,
            NoAuth,
            BadVersion,
            NoChildrenForEphemerals,
            NodeExists,
            NotEmpty,
            SessionExpired,
            InvalidCallback,
            InvalidAcl,
            AuthFailed,
            SessionMoved,
            NotReadOnly,
            EphemeralOnLocalSession,
            NoWatcher,
            RequestTimeout,
            QuotaExceeded,
            Throttled,
            Closed,
        ];
        ALL.into_iter().find(|e| e.code() == code)
    }

    /// ZooKeeper's name for the code (`NoNode`, `ConnectionLoss`, ...).
    pub fn name(&self) -> &'static str {
        use ZkError::*;
        match self {
            SystemError => "SystemError",
            RuntimeInconsistency => "RuntimeInconsistency",
            DataInconsistency => "DataInconsistency",
            ConnectionLoss => "ConnectionLoss",
            MarshallingError => "MarshallingError",
            Unimplemented => "Unimplemented",
            OperationTimeout => "OperationTimeout",
            BadArguments => "BadArguments",
            UnknownSession => "UnknownSession",
            NoNode => "NoNode",
            NoAuth => "NoAuth",
            BadVersion => "BadVersion",
            NoChildrenForEphemerals => "NoChildrenForEphemerals",
            NodeExists => "NodeExists",
            NotEmpty => "NotEmpty",
            SessionExpired => "SessionExpired",
            InvalidCallback => "InvalidCallback",
            InvalidAcl => "InvalidACL",
            AuthFailed => "AuthFailed",
            SessionMoved => "SessionMoved",
            NotReadOnly => "NotReadOnly",
            EphemeralOnLocalSession => "EphemeralOnLocalSession",
            NoWatcher => "NoWatcher",
            RequestTimeout => "RequestTimeout",
            QuotaExceeded => "QuotaExceeded",
            Throttled => "Throttled",
            Closed => "Closed",
            InvalidPath(_) => "InvalidPath",
            InvalidArgument(_) => "InvalidArgument",
        }
    }

    /// True when the outcome of the failed call is unknown: it may have been
    /// applied on the server (ZOOKEEPER-22).
    pub fn is_ambiguous(&self) -> bool {
        matches!(
            self,
            ZkError::ConnectionLoss | ZkError::RequestTimeout | ZkError::OperationTimeout
        )
    }

    /// True when the session (and so every ephemeral it owned) is gone.
    pub fn is_session_lost(&self) -> bool {
        matches!(self, ZkError::SessionExpired | ZkError::Closed)
    }
}

/// Result of a ZooKeeper call.
pub type ZkResult<T> = Result<T, ZkError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in -200..=0 {
            if let Some(e) = ZkError::from_code(code) {
                assert_eq!(e.code(), code);
            }
        }
        assert_eq!(ZkError::from_code(-110), Some(ZkError::NodeExists));
        assert_eq!(ZkError::from_code(-9), None);
    }
}
