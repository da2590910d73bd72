//! Request types (`ZooDefs.OpCode`) and the xids with a fixed meaning
//! (`ClientCnxn`'s `NOTIFICATION_XID`, `PING_XID`, `AUTHPACKET_XID`,
//! `SET_WATCHES_XID`).

/// A ZooKeeper request type. Unknown integers are refused with the value
/// preserved ([`OpCode::from_i32`] returns `None`; decoders turn that into a
/// [`crate::WireError`]), never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpCode {
    Notification,
    Create,
    Delete,
    Exists,
    GetData,
    SetData,
    GetAcl,
    SetAcl,
    GetChildren,
    Sync,
    Ping,
    GetChildren2,
    Check,
    Multi,
    Create2,
    Reconfig,
    CheckWatches,
    RemoveWatches,
    CreateContainer,
    DeleteContainer,
    CreateTtl,
    MultiRead,
    Auth,
    SetWatches,
    Sasl,
    GetEphemerals,
    GetAllChildrenNumber,
    SetWatches2,
    AddWatch,
    /// 3.9 only: a 3.8 server answers `Unimplemented` and closes.
    WhoAmI,
    CreateSession,
    CloseSession,
    /// The type of an error result inside a multi response.
    Error,
}

/// Every opcode with its wire value, the single source of both directions.
const TABLE: [(OpCode, i32); 33] = [
    (OpCode::Notification, 0),
    (OpCode::Create, 1),
    (OpCode::Delete, 2),
    (OpCode::Exists, 3),
    (OpCode::GetData, 4),
    (OpCode::SetData, 5),
    (OpCode::GetAcl, 6),
    (OpCode::SetAcl, 7),
    (OpCode::GetChildren, 8),
    (OpCode::Sync, 9),
    (OpCode::Ping, 11),
    (OpCode::GetChildren2, 12),
    (OpCode::Check, 13),
    (OpCode::Multi, 14),
    (OpCode::Create2, 15),
    (OpCode::Reconfig, 16),
    (OpCode::CheckWatches, 17),
    (OpCode::RemoveWatches, 18),
    (OpCode::CreateContainer, 19),
    (OpCode::DeleteContainer, 20),
    (OpCode::CreateTtl, 21),
    (OpCode::MultiRead, 22),
    (OpCode::Auth, 100),
    (OpCode::SetWatches, 101),
    (OpCode::Sasl, 102),
    (OpCode::GetEphemerals, 103),
    (OpCode::GetAllChildrenNumber, 104),
    (OpCode::SetWatches2, 105),
    (OpCode::AddWatch, 106),
    (OpCode::WhoAmI, 107),
    (OpCode::CreateSession, -10),
    (OpCode::CloseSession, -11),
    (OpCode::Error, -1),
];

impl OpCode {
    pub const ALL: [OpCode; 33] = {
        let mut all = [OpCode::Error; 33];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    pub fn as_i32(self) -> i32 {
        TABLE.iter().find(|(op, _)| *op == self).map_or(-1, |(_, v)| *v)
    }

    pub fn from_i32(value: i32) -> Option<OpCode> {
        TABLE.iter().find(|(_, v)| *v == value).map(|(op, _)| *op)
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
        for op in OpCode::ALL {
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
