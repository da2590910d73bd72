//! Applying a txn to the tree (`DataTree.processTxn`): the state change, the
//! client's result and the watch triggers, in ZooKeeper's order.
//!
//! Txns come from `prep`, so they normally apply cleanly. A txn that does
//! not fit the tree (only possible with a buggy leader) changes nothing and
//! yields an error result, as real ZooKeeper's `processTxn` reports a
//! `KeeperException` in `rc.err`; a multi is rolled back whole.

use std::sync::Arc;

use zkdst_recipes::zk::path::{basename, parent};
use zkdst_recipes::zk::{validate_path, EventType, OpResult, Stat, ZkError, Zxid};

use super::data_tree::{DataTree, SPECIAL_PATHS};
use super::ephemeral::{close_session_order, EphemeralType};
use super::node::Node;
use super::txn::{failed_multi, Applied, Trigger, Txn, TxnResult};
use super::undo::{Journal, Undo};

impl DataTree {
    /// Applies `txn` at `zxid` with the leader's timestamp `time_ms`.
    pub fn apply(&mut self, zxid: Zxid, time_ms: i64, txn: &Txn) -> Applied {
        let mut triggers = Vec::new();
        let result = match txn {
            Txn::CreateSession { session, timeout_ms } => {
                self.put_session(*session, *timeout_ms);
                TxnResult::CreateSession
            }
            Txn::CloseSession { session } => {
                // Deleted in the order 3.8's CloseSessionTxn lists them
                // (see `close_session_order`), which decides the order of
                // the watch events; the result lists them sorted.
                let owned: Vec<(String, Zxid)> = self
                    .ephemerals(*session)
                    .into_iter()
                    .map(|p| {
                        let czxid = self.nodes.get(&p).map_or(0, |n| n.czxid);
                        (p, czxid)
                    })
                    .collect();
                let mut deleted = Vec::new();
                for path in close_session_order(owned) {
                    if self
                        .delete_node(&path, zxid, &mut triggers, &mut Journal::off())
                        .is_ok()
                    {
                        deleted.push(path);
                    }
                }
                deleted.sort();
                self.remove_session(*session);
                TxnResult::CloseSession { deleted }
            }
            Txn::Multi(txns) => self.apply_multi(zxid, time_ms, txns, &mut triggers),
            Txn::Error(error) => TxnResult::Error(error.clone()),
            Txn::MultiError { index, error, op_count } => {
                TxnResult::MultiFailed(failed_multi(*index, error.clone(), *op_count))
            }
            Txn::DeleteContainer { path } => match self.delete_container(path, zxid, &mut triggers) {
                Ok(()) => TxnResult::Delete,
                Err(e) => TxnResult::Error(e),
            },
            op => match self.apply_op(zxid, time_ms, op, &mut triggers, &mut Journal::off()) {
                Ok(r) => match r {
                    OpResult::Create { path, stat } => TxnResult::Create { path, stat },
                    OpResult::Delete => TxnResult::Delete,
                    OpResult::SetData { stat } => TxnResult::SetData { stat },
                    OpResult::Check => TxnResult::Check,
                    OpResult::Error(_) => TxnResult::Error(ZkError::SystemError),
                },
                Err(e) => TxnResult::Error(e),
            },
        };
        self.last_zxid = self.last_zxid.max(zxid);
        Applied { result, triggers }
    }

    fn apply_multi(&mut self, zxid: Zxid, time_ms: i64, txns: &[Txn], triggers: &mut Vec<Trigger>) -> TxnResult {
        let mut journal = Journal::on();
        let mut results = Vec::with_capacity(txns.len());
        let mut multi_triggers = Vec::new();
        for (index, txn) in txns.iter().enumerate() {
            match self.apply_op(zxid, time_ms, txn, &mut multi_triggers, &mut journal) {
                Ok(r) => results.push(r),
                Err(error) => {
                    journal.roll_back(self);
                    return TxnResult::MultiFailed(failed_multi(index, error, txns.len()));
                }
            }
        }
        triggers.extend(multi_triggers);
        TxnResult::Multi(results)
    }

    /// Applies one op of a multi being prepared, journaling what undoes it
    /// (`prep` tries a multi's ops on the speculative tree itself, then
    /// rolls them back). Triggers are dropped.
    pub(super) fn apply_journaled(
        &mut self,
        zxid: Zxid,
        time_ms: i64,
        txn: &Txn,
        journal: &mut Journal,
    ) -> Result<(), ZkError> {
        self.apply_op(zxid, time_ms, txn, &mut Vec::new(), journal).map(drop)
    }

    /// One op of a multi, or a plain create/delete/setData/check.
    fn apply_op(
        &mut self,
        zxid: Zxid,
        time_ms: i64,
        txn: &Txn,
        triggers: &mut Vec<Trigger>,
        journal: &mut Journal,
    ) -> Result<OpResult, ZkError> {
        match txn {
            Txn::Create {
                path,
                data,
                ephemeral_owner,
                parent_cversion,
            } => {
                let stat = self.create_node(
                    path,
                    data,
                    *ephemeral_owner,
                    *parent_cversion,
                    zxid,
                    time_ms,
                    triggers,
                    journal,
                )?;
                Ok(OpResult::Create {
                    path: path.clone(),
                    stat,
                })
            }
            Txn::Delete { path } => {
                self.delete_node(path, zxid, triggers, journal)?;
                Ok(OpResult::Delete)
            }
            Txn::SetData { path, data, version } => {
                let stat = self.set_data(path, data, *version, zxid, time_ms, triggers, journal)?;
                Ok(OpResult::SetData { stat })
            }
            Txn::Check { .. } => Ok(OpResult::Check),
            // Not a multi op.
            _ => Err(ZkError::MarshallingError),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn create_node(
        &mut self,
        path: &str,
        data: &[u8],
        ephemeral_owner: i64,
        parent_cversion: i32,
        zxid: Zxid,
        time_ms: i64,
        triggers: &mut Vec<Trigger>,
        journal: &mut Journal,
    ) -> Result<Stat, ZkError> {
        validate_path(path, false).map_err(|_| ZkError::BadArguments)?;
        if self.exists(path) {
            return Err(ZkError::NodeExists);
        }
        let parent_path = parent(path);
        let Some((cversion, pzxid)) = self.node(parent_path).map(|p| (p.cversion, p.pzxid)) else {
            return Err(ZkError::NoNode);
        };
        self.link_child(parent_path, basename(path), parent_cversion, zxid);
        journal.record(|| Undo::Linked {
            parent: parent_path.to_string(),
            name: basename(path).to_string(),
            cversion,
            pzxid,
        });
        let node = Node::new(Arc::from(data), zxid, time_ms, ephemeral_owner);
        let stat = node.stat();
        self.put_node(path, node);
        journal.record(|| Undo::Node(path.to_string(), None));
        triggers.push(Trigger::new(path, EventType::NodeCreated));
        triggers.push(Trigger::new(parent_path, EventType::NodeChildrenChanged));
        Ok(stat)
    }

    pub(crate) fn delete_node(
        &mut self,
        path: &str,
        zxid: Zxid,
        triggers: &mut Vec<Trigger>,
        journal: &mut Journal,
    ) -> Result<(), ZkError> {
        if path == "/" {
            return Err(ZkError::BadArguments);
        }
        let node = self.node(path).ok_or(ZkError::NoNode)?;
        if !node.children.is_empty() {
            return Err(ZkError::NotEmpty);
        }
        let removed = self.remove_node(path);
        journal.record(|| Undo::Node(path.to_string(), removed));
        if let Some(pzxid) = self.node(parent(path)).map(|p| p.pzxid) {
            self.unlink_child(path, zxid);
            journal.record(|| Undo::Unlinked {
                parent: parent(path).to_string(),
                name: basename(path).to_string(),
                pzxid,
            });
        }
        triggers.push(Trigger::new(path, EventType::NodeDeleted));
        triggers.push(Trigger::new(parent(path), EventType::NodeChildrenChanged));
        Ok(())
    }

    fn set_data(
        &mut self,
        path: &str,
        data: &[u8],
        version: i32,
        zxid: Zxid,
        time_ms: i64,
        triggers: &mut Vec<Trigger>,
        journal: &mut Journal,
    ) -> Result<Stat, ZkError> {
        let mut node = self.node(path).cloned().ok_or(ZkError::NoNode)?;
        node.set_data(Arc::from(data));
        node.version = version;
        node.mzxid = zxid;
        node.mtime = time_ms;
        let stat = node.stat();
        let old = self.put_node(path, node);
        journal.record(|| Undo::Node(path.to_string(), old));
        triggers.push(Trigger::new(path, EventType::NodeDataChanged));
        Ok(stat)
    }

    /// The checks of `deleteContainer`, then the delete.
    fn delete_container(&mut self, path: &str, zxid: Zxid, triggers: &mut Vec<Trigger>) -> Result<(), ZkError> {
        check_delete_container(self, path)?;
        self.delete_node(path, zxid, triggers, &mut Journal::off())
    }
}

/// `PrepRequestProcessor`'s `deleteContainer` checks, in its order:
/// BadArguments → NoNode → NotEmpty → BadVersion (a session's ephemeral).
/// A persistent node passes, as in ZooKeeper.
pub(crate) fn check_delete_container(tree: &DataTree, path: &str) -> Result<(), ZkError> {
    if SPECIAL_PATHS.contains(&path) || validate_path(path, false).is_err() {
        return Err(ZkError::BadArguments);
    }
    let node = tree.node(path).ok_or(ZkError::NoNode)?;
    if !node.children.is_empty() {
        return Err(ZkError::NotEmpty);
    }
    if matches!(node.kind(), EphemeralType::Normal(_)) {
        return Err(ZkError::BadVersion);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(path: &str, counter: i32) -> Txn {
        Txn::Create {
            path: path.into(),
            data: b"d".to_vec(),
            ephemeral_owner: 0,
            parent_cversion: counter,
        }
    }

    #[test]
    fn create_sets_stats_and_triggers() {
        let mut t = DataTree::new();
        let a = t.apply(5, 100, &create("/a", 1));
        let TxnResult::Create { path, stat } = a.result else {
            panic!("{:?}", a.result)
        };
        assert_eq!(path, "/a");
        assert_eq!(
            (stat.czxid, stat.mzxid, stat.pzxid, stat.ctime, stat.data_length),
            (5, 5, 5, 100, 1)
        );
        assert_eq!(
            a.triggers,
            vec![
                Trigger::new("/a", EventType::NodeCreated),
                Trigger::new("/", EventType::NodeChildrenChanged)
            ]
        );
        assert_eq!(
            t.stat("/").map(|s| (s.pzxid, s.cversion, s.num_children)),
            Some((5, 0, 2))
        );
        assert_eq!(t.last_zxid(), 5);
        assert_eq!(t.digest(), t.compute_digest());
    }

    #[test]
    fn delete_updates_parent_pzxid_only_if_larger() {
        let mut t = DataTree::new();
        t.apply(5, 0, &create("/a", 1));
        t.apply(6, 0, &create("/a/b", 1));
        // an out-of-order (smaller) zxid leaves the parent's pzxid alone
        let d = t.apply(3, 0, &Txn::Delete { path: "/a/b".into() });
        assert_eq!(d.result, TxnResult::Delete);
        assert_eq!(t.stat("/a").map(|s| s.pzxid), Some(6));
        assert_eq!(t.last_zxid(), 6);
        t.apply(7, 0, &create("/a/c", 2));
        t.apply(9, 0, &Txn::Delete { path: "/a/c".into() });
        assert_eq!(t.stat("/a").map(|s| (s.pzxid, s.cversion)), Some((9, 4)));
    }

    #[test]
    fn inconsistent_txns_change_nothing() {
        let mut t = DataTree::new();
        let before = t.digest();
        assert_eq!(
            t.apply(1, 0, &create("/x/y", 1)).result,
            TxnResult::Error(ZkError::NoNode)
        );
        assert_eq!(
            t.apply(2, 0, &create("/zookeeper", 1)).result,
            TxnResult::Error(ZkError::NodeExists)
        );
        assert_eq!(
            t.apply(
                3,
                0,
                &Txn::Delete {
                    path: "/zookeeper".into()
                }
            )
            .result,
            TxnResult::Error(ZkError::NotEmpty)
        );
        assert_eq!(
            t.apply(4, 0, &create("bad", 1)).result,
            TxnResult::Error(ZkError::BadArguments)
        );
        let m = t.apply(5, 0, &Txn::Multi(vec![create("/m", 1), create("/m", 2)]));
        assert!(matches!(m.result, TxnResult::MultiFailed(ref e) if e.index == 1 && e.error == ZkError::NodeExists));
        assert!(m.triggers.is_empty());
        assert_eq!(t.digest(), before);
        assert_eq!(t.last_zxid(), 5);
    }

    #[test]
    fn failed_multi_at_apply_leaves_the_tree_exactly_as_it_was() {
        // Every kind of change a multi makes, then an op that does not fit:
        // the journal must undo them all, indexes and counters included.
        let mut t = DataTree::new();
        t.apply(1, 0, &create("/p", 1));
        t.apply(2, 0, &create("/p/a", 1));
        t.apply(3, 0, &create("/p/b", 2));
        let eph = |path: &str, counter| Txn::Create {
            path: path.into(),
            data: b"e".to_vec(),
            ephemeral_owner: 0x77,
            parent_cversion: counter,
        };
        t.apply(4, 0, &eph("/p/e", 3));
        let before = t.clone();
        let m = t.apply(
            5,
            9,
            &Txn::Multi(vec![
                eph("/p/c", 4),
                Txn::SetData {
                    path: "/p/a".into(),
                    data: b"new".to_vec(),
                    version: 1,
                },
                Txn::Delete { path: "/p/b".into() },
                Txn::Delete { path: "/p/e".into() },
                create("/p/c/x", 1),
                create("/p/b/x", 1),
            ]),
        );
        assert!(matches!(m.result, TxnResult::MultiFailed(ref e) if e.index == 5 && e.error == ZkError::NoNode));
        assert!(m.triggers.is_empty());
        assert_eq!(t.digest(), t.compute_digest());
        // A failed multi still consumes its zxid; nothing else changed.
        let mut expected = before.clone();
        expected.last_zxid = 5;
        assert_eq!(t, expected);
        assert_eq!(t.ephemerals(0x77), before.ephemerals(0x77));
        assert_eq!(t.stat("/p"), before.stat("/p"));
    }

    #[test]
    fn delete_container_rechecks_at_apply() {
        let mut t = DataTree::new();
        let c = EphemeralType::Container.owner();
        t.apply(
            1,
            0,
            &Txn::Create {
                path: "/c".into(),
                data: vec![],
                ephemeral_owner: c,
                parent_cversion: 1,
            },
        );
        t.apply(2, 0, &create("/c/x", 1));
        let r = t.apply(3, 0, &Txn::DeleteContainer { path: "/c".into() });
        assert_eq!(r.result, TxnResult::Error(ZkError::NotEmpty));
        t.apply(4, 0, &Txn::Delete { path: "/c/x".into() });
        assert_eq!(t.containers_to_reap(), vec!["/c".to_string()]);
        let r = t.apply(5, 0, &Txn::DeleteContainer { path: "/c".into() });
        assert_eq!(r.result, TxnResult::Delete);
        assert!(!t.exists("/c"));
        assert!(t.containers_to_reap().is_empty());
        let r = t.apply(6, 0, &Txn::DeleteContainer { path: "/c".into() });
        assert_eq!(r.result, TxnResult::Error(ZkError::NoNode));
    }
}
