//! ZooKeeper's error codes (`KeeperException.Code`), as recipes see them.

use serde::{Deserialize, Serialize};

use zkdst_model::{client_error, ErrorCode};

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
    /// The server's code for this error; `None` for the client-side ones
    /// (`Closed`, `InvalidPath`, `InvalidArgument`).
    pub fn keeper_code(&self) -> Option<ErrorCode> {
        use ErrorCode as Code;
        use ZkError::*;
        Some(match self {
            SystemError => Code::SystemError,
            RuntimeInconsistency => Code::RuntimeInconsistency,
            DataInconsistency => Code::DataInconsistency,
            ConnectionLoss => Code::ConnectionLoss,
            MarshallingError => Code::MarshallingError,
            Unimplemented => Code::Unimplemented,
            OperationTimeout => Code::OperationTimeout,
            BadArguments => Code::BadArguments,
            UnknownSession => Code::UnknownSession,
            NoNode => Code::NoNode,
            NoAuth => Code::NoAuth,
            BadVersion => Code::BadVersion,
            NoChildrenForEphemerals => Code::NoChildrenForEphemerals,
            NodeExists => Code::NodeExists,
            NotEmpty => Code::NotEmpty,
            SessionExpired => Code::SessionExpired,
            InvalidCallback => Code::InvalidCallback,
            InvalidAcl => Code::InvalidAcl,
            AuthFailed => Code::AuthFailed,
            SessionMoved => Code::SessionMoved,
            NotReadOnly => Code::NotReadOnly,
            EphemeralOnLocalSession => Code::EphemeralOnLocalSession,
            NoWatcher => Code::NoWatcher,
            RequestTimeout => Code::RequestTimeout,
            QuotaExceeded => Code::QuotaExceeded,
            Throttled => Code::ThrottledOp,
            Closed | InvalidPath(_) | InvalidArgument(_) => return None,
        })
    }

    /// The error a server code means to a client; `None` for `Ok` and the
    /// reconfiguration codes a recipe never sees.
    pub fn from_keeper_code(code: ErrorCode) -> Option<ZkError> {
        use ErrorCode as Code;
        use ZkError::*;
        Some(match code {
            Code::SystemError => SystemError,
            Code::RuntimeInconsistency => RuntimeInconsistency,
            Code::DataInconsistency => DataInconsistency,
            Code::ConnectionLoss => ConnectionLoss,
            Code::MarshallingError => MarshallingError,
            Code::Unimplemented => Unimplemented,
            Code::OperationTimeout => OperationTimeout,
            Code::BadArguments => BadArguments,
            Code::UnknownSession => UnknownSession,
            Code::NoNode => NoNode,
            Code::NoAuth => NoAuth,
            Code::BadVersion => BadVersion,
            Code::NoChildrenForEphemerals => NoChildrenForEphemerals,
            Code::NodeExists => NodeExists,
            Code::NotEmpty => NotEmpty,
            Code::SessionExpired => SessionExpired,
            Code::InvalidCallback => InvalidCallback,
            Code::InvalidAcl => InvalidAcl,
            Code::AuthFailed => AuthFailed,
            Code::SessionMoved => SessionMoved,
            Code::NotReadOnly => NotReadOnly,
            Code::EphemeralOnLocalSession => EphemeralOnLocalSession,
            Code::NoWatcher => NoWatcher,
            Code::RequestTimeout => RequestTimeout,
            Code::QuotaExceeded => QuotaExceeded,
            Code::ThrottledOp => Throttled,
            Code::Ok
            | Code::NewConfigNoQuorum
            | Code::ReconfigInProgress
            | Code::ApiError
            | Code::ReconfigDisabled
            | Code::SessionClosedRequireSaslAuth => return None,
        })
    }

    /// ZooKeeper's numeric code (client-side errors get codes no server sends).
    pub fn code(&self) -> i32 {
        match self.keeper_code() {
            Some(code) => code.as_i32(),
            None if *self == ZkError::Closed => -112_000,
            None => -8_000,
        }
    }

    /// The error for a numeric code, if ZooKeeper defines it.
    pub fn from_code(code: i32) -> Option<ZkError> {
        ErrorCode::from_i32(code).and_then(ZkError::from_keeper_code)
    }

    /// ZooKeeper's name for the code (`NoNode`, `ConnectionLoss`, ...), as a
    /// history records it.
    pub fn name(&self) -> &'static str {
        match (self.keeper_code(), self) {
            (Some(code), _) => code.name(),
            (None, ZkError::InvalidPath(_)) => client_error::INVALID_PATH,
            (None, ZkError::InvalidArgument(_)) => client_error::INVALID_ARGUMENT,
            (None, _) => client_error::CLOSED,
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
        for &c in ErrorCode::ALL {
            if let Some(e) = ZkError::from_keeper_code(c) {
                assert_eq!(e.keeper_code(), Some(c));
                assert_eq!(e.name(), c.name());
            }
        }
    }
}
