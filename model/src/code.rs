//! ZooKeeper's error codes (`KeeperException.Code`): the number a reply
//! header carries, and the name a history records — defined once for the
//! wire codec, the client interface and the checkers.

macro_rules! codes {
    ($( $(#[$vm:meta])* $variant:ident = $value:literal, $name:literal; )+) => {
        /// `KeeperException.Code`. Unknown integers are refused, not guessed.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCode { $( $(#[$vm])* $variant ),+ }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The number on the wire.
            pub const fn as_i32(self) -> i32 {
                match self { $(ErrorCode::$variant => $value),+ }
            }

            pub const fn from_i32(value: i32) -> Option<ErrorCode> {
                match value { $($value => Some(ErrorCode::$variant),)+ _ => None }
            }

            /// ZooKeeper's name (its exception's, without `Exception`), as a
            /// history records it.
            pub const fn name(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name),+ }
            }

            pub fn from_name(name: &str) -> Option<ErrorCode> {
                match name { $($name => Some(ErrorCode::$variant),)+ _ => None }
            }
        }
    };
}

codes! {
    Ok = 0, "Ok";
    SystemError = -1, "SystemError";
    /// Per-op result of the ops after the failing one in a failed multi.
    RuntimeInconsistency = -2, "RuntimeInconsistency";
    DataInconsistency = -3, "DataInconsistency";
    /// The request may or may not have been applied.
    ConnectionLoss = -4, "ConnectionLoss";
    MarshallingError = -5, "MarshallingError";
    Unimplemented = -6, "Unimplemented";
    OperationTimeout = -7, "OperationTimeout";
    BadArguments = -8, "BadArguments";
    UnknownSession = -12, "UnknownSession";
    NewConfigNoQuorum = -13, "NewConfigNoQuorum";
    ReconfigInProgress = -14, "ReconfigInProgress";
    ApiError = -100, "APIError";
    NoNode = -101, "NoNode";
    NoAuth = -102, "NoAuth";
    BadVersion = -103, "BadVersion";
    NoChildrenForEphemerals = -108, "NoChildrenForEphemerals";
    NodeExists = -110, "NodeExists";
    NotEmpty = -111, "NotEmpty";
    SessionExpired = -112, "SessionExpired";
    InvalidCallback = -113, "InvalidCallback";
    InvalidAcl = -114, "InvalidACL";
    AuthFailed = -115, "AuthFailed";
    SessionMoved = -118, "SessionMoved";
    NotReadOnly = -119, "NotReadOnly";
    EphemeralOnLocalSession = -120, "EphemeralOnLocalSession";
    NoWatcher = -121, "NoWatcher";
    RequestTimeout = -122, "RequestTimeout";
    ReconfigDisabled = -123, "ReconfigDisabled";
    SessionClosedRequireSaslAuth = -124, "SessionClosedRequireSaslAuth";
    QuotaExceeded = -125, "QuotaExceeded";
    ThrottledOp = -127, "ThrottledOp";
}

/// The names a history records for errors a client raises itself, before
/// anything is sent (no `KeeperException.Code`): Java's client throws
/// `IllegalArgumentException` for these two and refuses a closed handle.
pub mod client_error {
    /// A path `PathUtils.validatePath` refuses.
    pub const INVALID_PATH: &str = "InvalidPath";
    /// A bad argument other than the path (a TTL out of range, ...).
    pub const INVALID_ARGUMENT: &str = "InvalidArgument";
    /// A call on a closed handle.
    pub const CLOSED: &str = "Closed";
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.as_i32())
    }
}

/// A history records an error code by ZooKeeper's name (`"NoNode"`).
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ErrorCode::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown ZooKeeper error code {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_keeper_exception() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_i32(c.as_i32()), Some(c));
            assert_eq!(ErrorCode::from_name(c.name()), Some(c));
        }
        assert_eq!(ErrorCode::ALL.len(), 32);
        assert_eq!(ErrorCode::NoNode.as_i32(), -101);
        assert_eq!(ErrorCode::ThrottledOp.as_i32(), -127);
        assert_eq!(ErrorCode::from_i32(-126), None);
        assert_eq!(ErrorCode::InvalidAcl.to_string(), "InvalidACL (-114)");
    }
}
