//! Request types (`ZooDefs.OpCode`) and the xids with a fixed meaning
//! (`ClientCnxn`'s `NOTIFICATION_XID`, `PING_XID`, `AUTHPACKET_XID`,
//! `SET_WATCHES_XID`).

crate::int_enum::int_enum!(
    /// A ZooKeeper request type. Unknown integers are refused with the value
    /// preserved ([`OpCode::from_i32`] returns `None`; decoders turn that into a
    /// [`crate::WireError`]), never a panic.
    OpCode {
        Notification = 0,
        Create = 1,
        Delete = 2,
        Exists = 3,
        GetData = 4,
        SetData = 5,
        GetAcl = 6,
        SetAcl = 7,
        GetChildren = 8,
        Sync = 9,
        Ping = 11,
        GetChildren2 = 12,
        Check = 13,
        Multi = 14,
        Create2 = 15,
        Reconfig = 16,
        CheckWatches = 17,
        RemoveWatches = 18,
        CreateContainer = 19,
        DeleteContainer = 20,
        CreateTtl = 21,
        MultiRead = 22,
        Auth = 100,
        SetWatches = 101,
        Sasl = 102,
        GetEphemerals = 103,
        GetAllChildrenNumber = 104,
        SetWatches2 = 105,
        AddWatch = 106,
        /// 3.9 only: a 3.8 server answers `Unimplemented` and closes.
        WhoAmI = 107,
        CreateSession = -10,
        CloseSession = -11,
        /// The type of an error result inside a multi response.
        Error = -1,
    }
);

impl OpCode {
    /// A transaction the leader orders (PrepRequestProcessor's write types):
    /// applied through the log, its reply carries its own zxid.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            OpCode::Create
                | OpCode::Create2
                | OpCode::CreateContainer
                | OpCode::CreateTtl
                | OpCode::Delete
                | OpCode::DeleteContainer
                | OpCode::SetData
                | OpCode::SetAcl
                | OpCode::Check
                | OpCode::Multi
                | OpCode::Reconfig
                | OpCode::CreateSession
                | OpCode::CloseSession
        )
    }

    /// Whether a client may send this type to a 3.8 server: not the
    /// server-internal ones, not `whoAmI` (3.9).
    pub fn is_client_request(self) -> bool {
        !matches!(
            self,
            OpCode::Notification | OpCode::DeleteContainer | OpCode::WhoAmI | OpCode::CreateSession | OpCode::Error
        )
    }
}

/// Xids with a fixed meaning; ordinary requests use positive, increasing xids.
pub mod xid {
    /// A watch notification (server → client).
    pub const NOTIFICATION: i32 = -1;
    /// Ping and its reply.
    pub const PING: i32 = -2;
    /// An auth packet and its reply.
    pub const AUTH: i32 = -4;
    /// SetWatches / SetWatches2 after a reconnect, and its reply.
    pub const SET_WATCHES: i32 = -8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_round_trips_and_values_are_distinct() {
        for &op in OpCode::ALL {
            assert_eq!(OpCode::from_i32(op.as_i32()), Some(op));
        }
        let mut values: Vec<i32> = OpCode::ALL.iter().map(|op| op.as_i32()).collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(values.len(), OpCode::ALL.len());
        assert_eq!(OpCode::from_i32(10), None);
        assert_eq!(OpCode::Create2.as_i32(), 15);
        assert_eq!(OpCode::CloseSession.as_i32(), -11);
    }
}
