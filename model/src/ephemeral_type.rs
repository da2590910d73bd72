//! How a znode's raw `ephemeralOwner` encodes its kind (`EphemeralType.java`):
//! 0 for a persistent node, the owning session for an ephemeral,
//! `Long.MIN_VALUE` for a container, and `0xFF` in the high byte plus the TTL
//! for a TTL node.

use crate::{CreateMode, SessionId};

/// The kind of a znode, decoded from its raw `ephemeralOwner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EphemeralType {
    /// A persistent node (owner 0); ZooKeeper's `VOID`.
    Void,
    /// An ephemeral node owned by this session; ZooKeeper's `NORMAL`.
    Normal(SessionId),
    /// A container node.
    Container,
    /// A TTL node with this TTL in ms.
    Ttl(i64),
}

impl EphemeralType {
    /// The raw owner of a container node (`Long.MIN_VALUE`).
    pub const CONTAINER_OWNER: i64 = i64::MIN;
    /// High byte set on every extended-type owner.
    const EXTENDED_MASK: i64 = 0xff00_0000_0000_0000_u64 as i64;
    /// The TTL value bits (40 bits).
    const VALUE_MASK: i64 = 0x0000_00ff_ffff_ffff;

    /// Decodes a raw owner.
    pub fn from_owner(raw: i64) -> EphemeralType {
        if raw & Self::EXTENDED_MASK == Self::EXTENDED_MASK {
            EphemeralType::Ttl(raw & Self::VALUE_MASK)
        } else if raw == Self::CONTAINER_OWNER {
            EphemeralType::Container
        } else if raw == 0 {
            EphemeralType::Void
        } else {
            EphemeralType::Normal(raw)
        }
    }

    /// The raw owner stored in the node.
    pub fn owner(self) -> i64 {
        match self {
            EphemeralType::Void => 0,
            EphemeralType::Normal(session) => session,
            EphemeralType::Container => Self::CONTAINER_OWNER,
            EphemeralType::Ttl(ttl) => Self::EXTENDED_MASK | (ttl & Self::VALUE_MASK),
        }
    }

    /// The kind a create with `mode` by `session` makes (the TTL must already
    /// have been validated).
    pub fn for_create(mode: CreateMode, session: SessionId) -> EphemeralType {
        match mode {
            CreateMode::Persistent | CreateMode::PersistentSequential => EphemeralType::Void,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential => EphemeralType::Normal(session),
            CreateMode::Container => EphemeralType::Container,
            CreateMode::PersistentWithTtl { ttl_ms } | CreateMode::PersistentSequentialWithTtl { ttl_ms } => {
                EphemeralType::Ttl(ttl_ms)
            }
        }
    }

    /// What `Stat.ephemeralOwner` shows a client: the session for an
    /// ephemeral, 0 for everything else (`DataNode.getClientEphemeralOwner`).
    pub fn client_owner(raw: i64) -> i64 {
        match Self::from_owner(raw) {
            EphemeralType::Normal(session) => session,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for t in [
            EphemeralType::Void,
            EphemeralType::Normal(0x0100_0005_4c31_0003),
            EphemeralType::Container,
            EphemeralType::Ttl(1),
            EphemeralType::Ttl(CreateMode::MAX_TTL_MS),
        ] {
            assert_eq!(EphemeralType::from_owner(t.owner()), t);
        }
    }

    #[test]
    fn encodings_match_zookeeper() {
        assert_eq!(EphemeralType::Container.owner(), i64::MIN);
        assert_eq!(EphemeralType::Ttl(1000).owner() as u64, 0xff00_0000_0000_03e8);
        assert_eq!(EphemeralType::client_owner(i64::MIN), 0);
        assert_eq!(EphemeralType::client_owner(EphemeralType::Ttl(5).owner()), 0);
        assert_eq!(EphemeralType::client_owner(42), 42);
        assert_eq!(EphemeralType::client_owner(0), 0);
    }
}
