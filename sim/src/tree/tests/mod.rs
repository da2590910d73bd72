//! The semantics page's cases, end to end through `prep` and `apply`.

use zkdst_recipes::zk::{CreateMode, SessionId};

use super::*;

/// A tree with live sessions 1 and 2, plus a helper to run requests.
pub(super) struct Server {
    pub tree: DataTree,
    pub cfg: PrepConfig,
    pub log: Vec<Txn>,
}

impl Server {
    pub fn new() -> Server {
        let mut s = Server {
            tree: DataTree::new(),
            cfg: PrepConfig::default(),
            log: Vec::new(),
        };
        s.run(1, WriteRequest::CreateSession { timeout_ms: 6000 });
        s.run(2, WriteRequest::CreateSession { timeout_ms: 6000 });
        s
    }

    /// Preps and applies at the next zxid; the time is 10 ms per zxid.
    pub fn run(&mut self, session: SessionId, req: WriteRequest) -> Applied {
        let zxid = self.tree.last_zxid() + 1;
        let before = self.tree.clone();
        let txn = prep(&mut self.tree, session, &req, zxid * 10, &self.cfg);
        // prep leaves the tree exactly as it found it (a multi is tried on
        // it and undone).
        assert_eq!(self.tree, before, "prep changed the tree");
        assert_eq!(self.tree.digest(), self.tree.compute_digest());
        self.log.push(txn.clone());
        self.tree.apply(zxid, zxid * 10, &txn)
    }

    pub fn create(&mut self, path: &str, mode: CreateMode) -> TxnResult {
        self.run(
            1,
            WriteRequest::Create {
                path: path.into(),
                data: Vec::new(),
                mode,
            },
        )
        .result
    }

    /// The created path, or panics with the result.
    pub fn created(&mut self, path: &str, mode: CreateMode) -> String {
        match self.create(path, mode) {
            TxnResult::Create { path, .. } => path,
            other => panic!("create {path}: {other:?}"),
        }
    }

    pub fn delete(&mut self, path: &str, version: i32) -> TxnResult {
        self.run(
            1,
            WriteRequest::Delete {
                path: path.into(),
                version,
            },
        )
        .result
    }

    pub fn set_data(&mut self, path: &str, data: &[u8], version: i32) -> TxnResult {
        self.run(
            1,
            WriteRequest::SetData {
                path: path.into(),
                data: data.to_vec(),
                version,
            },
        )
        .result
    }

    pub fn cversion(&self, path: &str) -> i32 {
        self.tree.stat(path).map(|s| s.cversion).unwrap_or(i32::MIN)
    }
}

fn err(e: zkdst_recipes::zk::ZkError) -> TxnResult {
    TxnResult::Error(e)
}

#[test]
fn all_children_number_counts_descendants_only() {
    let mut s = Server::new();
    for p in ["/a", "/a/b", "/a/b/c", "/a/d", "/ab", "/ab/x"] {
        s.created(p, CreateMode::Persistent);
    }
    // `/ab` shares `/a`'s prefix but is not below it.
    assert_eq!(s.tree.all_children_number("/a"), Some(3));
    assert_eq!(s.tree.all_children_number("/a/b"), Some(1));
    assert_eq!(s.tree.all_children_number("/a/b/c"), Some(0));
    assert_eq!(s.tree.all_children_number("/ab"), Some(1));
    // The root counts everything but itself, built-in nodes included.
    assert_eq!(s.tree.all_children_number("/"), Some(s.tree.node_count() - 1));
    assert_eq!(s.tree.all_children_number("/"), Some(6 + 3));
}

mod errors;
mod multi;
mod replay;
mod sequence;
mod sessions;
mod watches;
