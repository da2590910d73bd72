//! Error codes carried in `ReplyHeader.err` and multi results: the values of
//! ZooKeeper 3.8's `KeeperException.Code`.

/// `KeeperException.Code`. Unknown integers are refused, not guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Ok,
    SystemError,
    RuntimeInconsistency,
    DataInconsistency,
    ConnectionLoss,
    MarshallingError,
    Unimplemented,
    OperationTimeout,
    BadArguments,
    UnknownSession,
    NewConfigNoQuorum,
    ReconfigInProgress,
    ApiError,
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
    ReconfigDisabled,
    SessionClosedRequireSaslAuth,
    QuotaExceeded,
    ThrottledOp,
}

const TABLE: [(ErrorCode, i32); 32] = [
    (ErrorCode::Ok, 0),
    (ErrorCode::SystemError, -1),
    (ErrorCode::RuntimeInconsistency, -2),
    (ErrorCode::DataInconsistency, -3),
    (ErrorCode::ConnectionLoss, -4),
    (ErrorCode::MarshallingError, -5),
    (ErrorCode::Unimplemented, -6),
    (ErrorCode::OperationTimeout, -7),
    (ErrorCode::BadArguments, -8),
    (ErrorCode::UnknownSession, -12),
    (ErrorCode::NewConfigNoQuorum, -13),
    (ErrorCode::ReconfigInProgress, -14),
    (ErrorCode::ApiError, -100),
    (ErrorCode::NoNode, -101),
    (ErrorCode::NoAuth, -102),
    (ErrorCode::BadVersion, -103),
    (ErrorCode::NoChildrenForEphemerals, -108),
    (ErrorCode::NodeExists, -110),
    (ErrorCode::NotEmpty, -111),
    (ErrorCode::SessionExpired, -112),
    (ErrorCode::InvalidCallback, -113),
    (ErrorCode::InvalidAcl, -114),
    (ErrorCode::AuthFailed, -115),
    (ErrorCode::SessionMoved, -118),
    (ErrorCode::NotReadOnly, -119),
    (ErrorCode::EphemeralOnLocalSession, -120),
    (ErrorCode::NoWatcher, -121),
    (ErrorCode::RequestTimeout, -122),
    (ErrorCode::ReconfigDisabled, -123),
    (ErrorCode::SessionClosedRequireSaslAuth, -124),
    (ErrorCode::QuotaExceeded, -125),
    (ErrorCode::ThrottledOp, -127),
];

impl ErrorCode {
    pub const ALL: [ErrorCode; 32] = {
        let mut all = [ErrorCode::Ok; 32];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    pub fn as_i32(self) -> i32 {
        TABLE.iter().find(|(c, _)| *c == self).map_or(0, |(_, v)| *v)
    }

    pub fn from_i32(value: i32) -> Option<ErrorCode> {
        TABLE.iter().find(|(_, v)| *v == value).map(|(c, _)| *c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_keeper_exception() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_i32(c.as_i32()), Some(c));
        }
        assert_eq!(ErrorCode::NoNode.as_i32(), -101);
        assert_eq!(ErrorCode::ThrottledOp.as_i32(), -127);
        assert_eq!(ErrorCode::from_i32(-126), None);
    }
}
