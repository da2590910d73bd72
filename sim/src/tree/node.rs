//! One znode: data, persisted stat and child names (`DataNode` +
//! `StatPersisted`), and its conversion to the client's `Stat`.

use std::sync::Arc;

use zkdst_recipes::zk::{Stat, Zxid};

use super::children::Children;
use super::digest::Hash64;
use super::ephemeral::EphemeralType;

/// A znode as the server stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub data: Arc<[u8]>,
    /// Hash of `data`, cached so that a parent's digest update (on every
    /// child create or delete) does not rehash its data.
    pub data_hash: u64,
    pub czxid: Zxid,
    pub mzxid: Zxid,
    pub pzxid: Zxid,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    /// The *internal* child-create counter (`StatPersisted.cversion`): every
    /// child create increments it, deletes do not. Clients see
    /// `2 * cversion - numChildren` (see `stat`).
    pub cversion: i32,
    pub aversion: i32,
    /// Raw owner, see `EphemeralType`.
    pub ephemeral_owner: i64,
    /// Child names (not paths), sorted.
    pub children: Children,
}

impl Node {
    /// A new node as `DataTree.createStat` makes it: czxid = mzxid = pzxid,
    /// ctime = mtime, all versions 0.
    pub fn new(data: Arc<[u8]>, zxid: Zxid, time_ms: i64, ephemeral_owner: i64) -> Node {
        Node {
            data_hash: hash_data(&data),
            data,
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            ctime: time_ms,
            mtime: time_ms,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner,
            children: Children::default(),
        }
    }

    /// One of the built-in nodes of a fresh server (`/`, `/zookeeper`, ...):
    /// an all-zero stat and empty data.
    pub fn builtin() -> Node {
        Node::new(Arc::from(&[][..]), 0, 0, 0)
    }

    pub fn set_data(&mut self, data: Arc<[u8]>) {
        self.data_hash = hash_data(&data);
        self.data = data;
    }

    pub fn kind(&self) -> EphemeralType {
        EphemeralType::from_owner(self.ephemeral_owner)
    }

    /// The client's Stat, exactly as `DataNode.copyStat` computes it.
    pub fn stat(&self) -> Stat {
        let num_children = i32::try_from(self.children.len()).unwrap_or(i32::MAX);
        Stat {
            czxid: self.czxid,
            mzxid: self.mzxid,
            ctime: self.ctime,
            mtime: self.mtime,
            version: self.version,
            // Java int arithmetic: wraps.
            cversion: self.cversion.wrapping_mul(2).wrapping_sub(num_children),
            aversion: self.aversion,
            ephemeral_owner: EphemeralType::client_owner(self.ephemeral_owner),
            data_length: i32::try_from(self.data.len()).unwrap_or(i32::MAX),
            num_children,
            pzxid: self.pzxid,
        }
    }

    /// This node's contribution to the tree digest. Children are not hashed:
    /// they are implied by the set of paths.
    pub fn digest(&self, path: &str) -> u64 {
        Hash64::new()
            .bytes(path.as_bytes())
            .u64(self.data_hash)
            .i64(self.czxid)
            .i64(self.mzxid)
            .i64(self.pzxid)
            .i64(self.ctime)
            .i64(self.mtime)
            .i64(i64::from(self.version))
            .i64(i64::from(self.cversion))
            .i64(i64::from(self.aversion))
            .i64(self.ephemeral_owner)
            .finish()
    }
}

fn hash_data(data: &[u8]) -> u64 {
    Hash64::new().bytes(data).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_cversion_is_two_creates_minus_children() {
        let mut n = Node::builtin();
        n.cversion = 2;
        n.children.insert("a".into());
        assert_eq!(n.stat().cversion, 3);
        assert_eq!(n.stat().num_children, 1);
        // the built-in root: no creates, one child
        let mut root = Node::builtin();
        root.children.insert("zookeeper".into());
        assert_eq!(root.stat().cversion, -1);
    }

    #[test]
    fn client_cversion_wraps_like_java() {
        let mut n = Node::builtin();
        n.cversion = i32::MAX;
        assert_eq!(n.stat().cversion, -2);
    }

    #[test]
    fn container_and_ttl_show_owner_zero() {
        let c = Node::new(Arc::from(&b"xy"[..]), 5, 7, EphemeralType::Container.owner());
        assert_eq!(c.stat().ephemeral_owner, 0);
        assert_eq!(c.stat().data_length, 2);
        let e = Node::new(Arc::from(&[][..]), 5, 7, 99);
        assert_eq!(e.stat().ephemeral_owner, 99);
        assert_eq!((e.stat().czxid, e.stat().mzxid, e.stat().pzxid), (5, 5, 5));
        assert_eq!((e.stat().ctime, e.stat().mtime), (7, 7));
    }

    #[test]
    fn digest_sees_every_field() {
        let base = Node::builtin();
        let mut changed = base.clone();
        changed.version = 1;
        assert_ne!(base.digest("/a"), changed.digest("/a"));
        assert_ne!(base.digest("/a"), base.digest("/b"));
        let mut data = base.clone();
        data.set_data(Arc::from(&b"x"[..]));
        assert_ne!(base.digest("/a"), data.digest("/a"));
    }
}
