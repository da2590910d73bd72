//! Error codes carried in `ReplyHeader.err` and multi results: the values of
//! ZooKeeper 3.8's `KeeperException.Code`.

crate::int_enum::int_enum!(
    /// `KeeperException.Code`. Unknown integers are refused, not guessed.
    ErrorCode {
        Ok = 0,
        SystemError = -1,
        RuntimeInconsistency = -2,
        DataInconsistency = -3,
        ConnectionLoss = -4,
        MarshallingError = -5,
        Unimplemented = -6,
        OperationTimeout = -7,
        BadArguments = -8,
        UnknownSession = -12,
        NewConfigNoQuorum = -13,
        ReconfigInProgress = -14,
        ApiError = -100,
        NoNode = -101,
        NoAuth = -102,
        BadVersion = -103,
        NoChildrenForEphemerals = -108,
        NodeExists = -110,
        NotEmpty = -111,
        SessionExpired = -112,
        InvalidCallback = -113,
        InvalidAcl = -114,
        AuthFailed = -115,
        SessionMoved = -118,
        NotReadOnly = -119,
        EphemeralOnLocalSession = -120,
        NoWatcher = -121,
        RequestTimeout = -122,
        ReconfigDisabled = -123,
        SessionClosedRequireSaslAuth = -124,
        QuotaExceeded = -125,
        ThrottledOp = -127,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_keeper_exception() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_i32(c.as_i32()), Some(c));
        }
        assert_eq!(ErrorCode::ALL.len(), 32);
        assert_eq!(ErrorCode::NoNode.as_i32(), -101);
        assert_eq!(ErrorCode::ThrottledOp.as_i32(), -127);
        assert_eq!(ErrorCode::from_i32(-126), None);
    }
}
