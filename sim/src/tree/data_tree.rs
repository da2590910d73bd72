//! The replicated state of one server: znodes, the ephemeral/container/TTL
//! indexes and the session table (`DataTree` + `ZKDatabase.sessionsWithTimeouts`).
//! The nodes are in a plain hash map: `clone()` copies each node's path and
//! stat (its data and child set are shared), which a server does once per
//! snapshot (every ~`snap_count` txns) and per election. With a persistent
//! map instead, every write after a snapshot copied the map's path to the
//! node: 4–8% of a seed. The indexes are persistent `im` maps.

use std::collections::HashMap;
use std::sync::Arc;

use im::{OrdMap, OrdSet};
use zkdst_recipes::zk::path::{basename, parent};
use zkdst_recipes::zk::{SessionId, Stat, ZkError, Zxid};

use super::digest::{Hash64, PathHash};
use super::ephemeral::EphemeralType;
use super::node::Node;

/// Paths ZooKeeper refuses to delete (`ZKDatabase.isSpecialPath`).
pub const SPECIAL_PATHS: [&str; 4] = ["/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"];

/// The data tree. Every server applies the same txns in zxid order to its
/// own copy; `digest()` tells whether two copies are identical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTree {
    /// Hashed, not ordered: a lookup hashes the path once instead of
    /// comparing it with ~log2(n) others (most of a write's cost). Nothing
    /// replicated depends on this map's order.
    pub(crate) nodes: HashMap<String, Node, PathHash>,
    /// Ephemeral paths per owning session.
    pub(crate) ephemerals: OrdMap<SessionId, OrdSet<String>>,
    pub(crate) containers: OrdSet<String>,
    pub(crate) ttls: OrdSet<String>,
    /// Live sessions and their negotiated timeouts.
    pub(crate) sessions: OrdMap<SessionId, i32>,
    pub(crate) last_zxid: Zxid,
    /// Wrapping sum of every node's and session's hash, kept up to date.
    pub(crate) digest: u64,
}

impl Default for DataTree {
    fn default() -> Self {
        DataTree::new()
    }
}

impl DataTree {
    /// A fresh server's tree: `/`, `/zookeeper`, `/zookeeper/config` and
    /// `/zookeeper/quota`, all with zero stats. Their internal create
    /// counters are 0, so `/` shows cversion -1 and `/zookeeper` -2.
    pub fn new() -> DataTree {
        let mut tree = DataTree {
            nodes: HashMap::default(),
            ephemerals: OrdMap::new(),
            containers: OrdSet::new(),
            ttls: OrdSet::new(),
            sessions: OrdMap::new(),
            last_zxid: 0,
            digest: 0,
        };
        let mut root = Node::builtin();
        root.children.insert("zookeeper".into());
        let mut zookeeper = Node::builtin();
        zookeeper.children.insert("config".into());
        zookeeper.children.insert("quota".into());
        tree.put_node("/", root);
        tree.put_node("/zookeeper", zookeeper);
        tree.put_node("/zookeeper/config", Node::builtin());
        tree.put_node("/zookeeper/quota", Node::builtin());
        tree
    }

    /// The zxid of the last applied txn (0 for a fresh tree).
    pub fn last_zxid(&self) -> Zxid {
        self.last_zxid
    }

    pub fn exists(&self, path: &str) -> bool {
        self.nodes.contains_key(path)
    }

    pub fn stat(&self, path: &str) -> Option<Stat> {
        self.nodes.get(path).map(Node::stat)
    }

    pub fn get_data(&self, path: &str) -> Option<(Vec<u8>, Stat)> {
        self.nodes.get(path).map(|n| (n.data.to_vec(), n.stat()))
    }

    /// Like `get_data`, sharing the stored bytes instead of copying them.
    pub fn get_data_shared(&self, path: &str) -> Option<(Arc<[u8]>, Stat)> {
        self.nodes.get(path).map(|n| (n.data.clone(), n.stat()))
    }

    /// The children's names, sorted (the server layer shuffles them), and
    /// the node's Stat.
    pub fn get_children(&self, path: &str) -> Option<(Vec<String>, Stat)> {
        self.nodes
            .get(path)
            .map(|n| (n.children.iter().cloned().collect(), n.stat()))
    }

    /// Number of descendants of `path` (`getAllChildrenNumber`).
    pub fn all_children_number(&self, path: &str) -> Option<usize> {
        self.nodes.get(path)?;
        if path == "/" {
            return Some(self.nodes.len() - 1);
        }
        let mut count = 0;
        let mut stack = vec![path.to_string()];
        while let Some(p) = stack.pop() {
            let Some(n) = self.nodes.get(p.as_str()) else { continue };
            for c in n.children.iter() {
                count += 1;
                stack.push(if p == "/" { format!("/{c}") } else { format!("{p}/{c}") });
            }
        }
        Some(count)
    }

    /// The session's ephemeral nodes, sorted.
    pub fn ephemerals(&self, session: SessionId) -> Vec<String> {
        self.ephemerals
            .get(&session)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Live sessions (created and not yet closed) with their timeouts, by id.
    pub fn sessions(&self) -> Vec<(SessionId, i32)> {
        self.sessions.iter().map(|(s, t)| (*s, *t)).collect()
    }

    pub fn session_timeout(&self, session: SessionId) -> Option<i32> {
        self.sessions.get(&session).copied()
    }

    pub fn has_session(&self, session: SessionId) -> bool {
        self.sessions.contains_key(&session)
    }

    /// Number of znodes, built-in ones included (4 on a fresh tree; real
    /// ZooKeeper's `zk_znode_count` says 5 because it counts the root twice).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Every path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> + '_ {
        let mut paths: Vec<&str> = self.nodes.keys().map(String::as_str).collect();
        paths.sort_unstable();
        paths.into_iter()
    }

    /// The kind of the node at `path`.
    pub fn ephemeral_type(&self, path: &str) -> Option<EphemeralType> {
        self.nodes.get(path).map(Node::kind)
    }

    /// The parent's internal child-create counter: the next sequential
    /// child's number.
    pub fn child_counter(&self, path: &str) -> Option<i32> {
        self.nodes.get(path).map(|n| n.cversion)
    }

    /// Sets a node's internal child-create counter, e.g. near `i32::MAX` to
    /// exercise sequence wrap-around, which takes 2^31 creates otherwise.
    /// A scenario hook, not a ZooKeeper operation: apply it identically to
    /// every server's tree (the digest changes).
    pub fn preset_child_counter(&mut self, path: &str, counter: i32) -> Result<(), ZkError> {
        let mut node = self.nodes.get(path).cloned().ok_or(ZkError::NoNode)?;
        node.cversion = counter;
        self.put_node(path, node);
        Ok(())
    }

    /// A deterministic hash of the whole replicated state (nodes with data
    /// and stats, and sessions), maintained incrementally: O(1).
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// The digest recomputed from scratch (to check the incremental one).
    pub fn compute_digest(&self) -> u64 {
        let nodes = self
            .nodes
            .iter()
            .fold(0u64, |acc, (p, n)| acc.wrapping_add(n.digest(p)));
        self.sessions
            .iter()
            .fold(nodes, |acc, (s, t)| acc.wrapping_add(session_digest(*s, *t)))
    }

    /// Containers the reaper should delete (`ContainerManager.getCandidates`):
    /// no children, and the internal create counter > 0 (it had a child).
    pub fn containers_to_reap(&self) -> Vec<String> {
        self.containers_to_reap_with(0, 0)
    }

    /// Like `containers_to_reap`, with `znode.container.maxNeverUsedIntervalMs`:
    /// when non-zero, a never-used container unmodified for longer than it
    /// is reaped too.
    pub fn containers_to_reap_with(&self, now_ms: i64, max_never_used_ms: i64) -> Vec<String> {
        self.containers
            .iter()
            .filter(|p| {
                self.nodes.get(p.as_str()).is_some_and(|n| {
                    n.children.is_empty()
                        && (n.cversion > 0
                            || (max_never_used_ms != 0 && now_ms.saturating_sub(n.mtime) > max_never_used_ms))
                })
            })
            .cloned()
            .collect()
    }

    /// TTL nodes the reaper should delete: no children and not modified for
    /// longer than their TTL (`now - mtime > ttl`).
    pub fn ttl_expired(&self, now_ms: i64) -> Vec<String> {
        self.ttls
            .iter()
            .filter(|p| {
                self.nodes.get(p.as_str()).is_some_and(|n| match n.kind() {
                    EphemeralType::Ttl(ttl) => {
                        n.children.is_empty() && ttl != 0 && now_ms.saturating_sub(n.mtime) > ttl
                    }
                    _ => false,
                })
            })
            .cloned()
            .collect()
    }

    // ---- low-level mutations, keeping digest and indexes in step ----

    pub(crate) fn node(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    /// Inserts or replaces a node. Indexes follow its kind.
    /// Returns the node it replaced.
    pub(crate) fn put_node(&mut self, path: &str, node: Node) -> Option<Node> {
        let new_digest = node.digest(path);
        let kind = node.kind();
        let old = self.nodes.insert(path.to_string(), node);
        if let Some(old) = &old {
            self.digest = self.digest.wrapping_sub(old.digest(path));
            self.unindex(path, old.kind());
        }
        self.digest = self.digest.wrapping_add(new_digest);
        self.index(path, kind);
        old
    }

    pub(crate) fn remove_node(&mut self, path: &str) -> Option<Node> {
        let old = self.nodes.remove(path)?;
        self.digest = self.digest.wrapping_sub(old.digest(path));
        self.unindex(path, old.kind());
        Some(old)
    }

    fn index(&mut self, path: &str, kind: EphemeralType) {
        match kind {
            EphemeralType::Void => {}
            EphemeralType::Normal(session) => {
                self.ephemerals.entry(session).or_default().insert(path.to_string());
            }
            EphemeralType::Container => {
                self.containers.insert(path.to_string());
            }
            EphemeralType::Ttl(_) => {
                self.ttls.insert(path.to_string());
            }
        }
    }

    fn unindex(&mut self, path: &str, kind: EphemeralType) {
        match kind {
            EphemeralType::Void => {}
            EphemeralType::Normal(session) => {
                if let Some(set) = self.ephemerals.get_mut(&session) {
                    set.remove(path);
                    if set.is_empty() {
                        self.ephemerals.remove(&session);
                    }
                }
            }
            EphemeralType::Container => {
                self.containers.remove(path);
            }
            EphemeralType::Ttl(_) => {
                self.ttls.remove(path);
            }
        }
    }

    pub(crate) fn put_session(&mut self, session: SessionId, timeout_ms: i32) {
        if let Some(old) = self.sessions.insert(session, timeout_ms) {
            self.digest = self.digest.wrapping_sub(session_digest(session, old));
        }
        self.digest = self.digest.wrapping_add(session_digest(session, timeout_ms));
    }

    pub(crate) fn remove_session(&mut self, session: SessionId) {
        if let Some(old) = self.sessions.remove(&session) {
            self.digest = self.digest.wrapping_sub(session_digest(session, old));
        }
    }

    /// Adds `name` to the children of `parent_path` (which must exist).
    /// Mutates the parent in place: cloning it out and back would copy the
    /// children set's B-tree path on every create.
    pub(crate) fn link_child(&mut self, parent_path: &str, name: &str, new_counter: i32, zxid: Zxid) -> bool {
        self.update_node(parent_path, |parent| {
            parent.children.insert(name.to_string());
            // Real 3.8 only raises the counter if larger (a fuzzy-snapshot
            // replay guard), which would stall it at i32::MAX; the counter
            // wraps here as the semantics page specifies.
            parent.cversion = new_counter;
            parent.pzxid = zxid;
        })
    }

    /// Changes the node at `path` in place, keeping the digest up to date;
    /// false if there is none. Its kind must not change.
    pub(crate) fn update_node(&mut self, path: &str, f: impl FnOnce(&mut Node)) -> bool {
        let Some(node) = self.nodes.get_mut(path) else {
            return false;
        };
        let old = node.digest(path);
        f(node);
        let new = node.digest(path);
        self.digest = self.digest.wrapping_sub(old).wrapping_add(new);
        true
    }

    /// Removes the child `path` from its parent's children (in place).
    pub(crate) fn unlink_child(&mut self, path: &str, zxid: Zxid) {
        self.update_node(parent(path), |parent| {
            parent.children.remove(basename(path));
            if zxid > parent.pzxid {
                parent.pzxid = zxid;
            }
        });
    }
}

fn session_digest(session: SessionId, timeout_ms: i32) -> u64 {
    Hash64::new()
        .bytes(b"session")
        .i64(session)
        .i64(i64::from(timeout_ms))
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_tree_matches_a_fresh_zookeeper() {
        let t = DataTree::new();
        assert_eq!(t.node_count(), 4);
        assert_eq!(t.stat("/").map(|s| s.cversion), Some(-1));
        assert_eq!(t.stat("/zookeeper").map(|s| s.cversion), Some(-2));
        assert_eq!(t.stat("/zookeeper/quota").map(|s| s.cversion), Some(0));
        assert_eq!(t.get_children("/").map(|c| c.0), Some(vec!["zookeeper".to_string()]));
        assert_eq!(
            t.get_children("/zookeeper").map(|c| c.0),
            Some(vec!["config".to_string(), "quota".to_string()])
        );
        assert_eq!(t.last_zxid(), 0);
        assert_eq!(t.stat("/").map(|s| (s.czxid, s.num_children)), Some((0, 1)));
        assert_eq!(t.digest(), t.compute_digest());
        assert_eq!(t.all_children_number("/"), Some(3));
        assert_eq!(t.all_children_number("/zookeeper"), Some(2));
        assert_eq!(t.all_children_number("/nope"), None);
    }

    #[test]
    fn preset_counter_changes_digest_and_stat() {
        let mut t = DataTree::new();
        let before = t.digest();
        assert_eq!(t.preset_child_counter("/", 10), Ok(()));
        assert_ne!(t.digest(), before);
        assert_eq!(t.digest(), t.compute_digest());
        assert_eq!(t.stat("/").map(|s| s.cversion), Some(19));
        assert_eq!(t.preset_child_counter("/nope", 1), Err(ZkError::NoNode));
    }
}
