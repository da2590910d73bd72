//! How a znode's raw `ephemeralOwner` encodes its kind (`EphemeralType.java`):
//! 0 for a persistent node, the owning session for an ephemeral,
//! `Long.MIN_VALUE` for a container, and `0xFF` in the high byte plus the TTL
//! for a TTL node.

use zkdst_recipes::zk::{CreateMode, SessionId};

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

/// Java's `String.hashCode` (over UTF-16 code units, wrapping).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// `HashMap.hash`'s bucket of `path` in a table of `capacity` slots.
fn java_bucket(path: &str, capacity: usize) -> usize {
    let h = java_string_hash(path) as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}

/// The order in which a `java.util.HashSet<String>` built by inserting
/// `(path, insertion key)` pairs in key order iterates them: by bucket of
/// `HashMap.hash` (`h ^ (h >>> 16)`) in a table of 16 slots doubled while
/// more than 3/4 full, then by insertion within a bucket. (A table only grows,
/// so one that was once larger iterates differently; and buckets with 8+
/// entries in a table of 64+ become trees — neither is modelled.)
pub fn java_hash_set_order<K: Ord + Copy>(mut entries: Vec<(String, K)>) -> Vec<String> {
    let mut capacity: usize = 16;
    while entries.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    entries.sort_by_key(|(path, key)| (java_bucket(path, capacity), *key));
    entries.into_iter().map(|(p, _)| p).collect()
}

/// The order in which ZooKeeper 3.8 deletes a closed session's ephemerals
/// (and so fires their watches): `PrepRequestProcessor` takes
/// `DataTree.getEphemerals(session)` — a `clone()` of the session's
/// `HashSet<String>` (filled in creation order) — and puts it, in the
/// clone's iteration order, into the `CloseSessionTxn` that
/// `DataTree.killSession` applies. The clone is pre-sized by JDK 17's
/// `HashMap.putMapEntries` (`tableSizeFor((int)(n / 0.75f + 1))` slots, so
/// usually fewer than the original's) and filled in the original's order.
pub fn close_session_order<K: Ord + Copy>(entries: Vec<(String, K)>) -> Vec<String> {
    let original = java_hash_set_order(entries);
    if original.is_empty() {
        return original;
    }
    let t = (original.len() as f32 / 0.75 + 1.0) as usize;
    let capacity = t.next_power_of_two();
    let mut clone: Vec<(usize, String)> = original.into_iter().enumerate().collect();
    clone.sort_by_key(|(i, path)| (java_bucket(path, capacity), *i));
    clone.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_set_iteration_order() {
        // Known Java values.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99162322);
        assert_eq!(java_string_hash("/t-1234-5/a/e"), {
            let mut h = 0i32;
            for b in "/t-1234-5/a/e".bytes() {
                h = h.wrapping_mul(31).wrapping_add(b as i32);
            }
            h
        });
        // new HashSet<>(List.of("b", "a", "q")) iterates a, b, q: buckets
        // 97 & 15 = 1, 98 & 15 = 2, 113 & 15 = 1 -> a, q (inserted later), b.
        let order = java_hash_set_order(vec![("b".to_string(), 0), ("a".to_string(), 1), ("q".to_string(), 2)]);
        assert_eq!(order, vec!["a", "q", "b"]);
        // Its clone (4 slots for 3 entries): a 97 & 3 = 1, q 113 & 3 = 1,
        // b 98 & 3 = 2 -> a, q, b again; but {b, e}: 16 slots give b (2),
        // e (5); the clone's 4 slots give e (1), b (2).
        assert_eq!(
            close_session_order(vec![("b".to_string(), 0), ("a".to_string(), 1), ("q".to_string(), 2)]),
            vec!["a", "q", "b"]
        );
        assert_eq!(
            java_hash_set_order(vec![("b".to_string(), 0), ("e".to_string(), 1)]),
            vec!["b", "e"]
        );
        assert_eq!(
            close_session_order(vec![("b".to_string(), 0), ("e".to_string(), 1)]),
            vec!["e", "b"]
        );
    }

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
