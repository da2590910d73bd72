//! A data tree as plain serializable data (the content of ZooKeeper's
//! snapshot file), for dumping or inspecting a tree. Simulated disks keep
//! the persistent tree itself (see `disk::SnapImage`). Loading rebuilds
//! children, indexes and the digest, and refuses an image that is not a
//! tree.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::path::{basename, parent};
use zkdst_recipes::zk::{validate_path, SessionId, Zxid};

use super::data_tree::DataTree;
use super::node::Node;

/// One znode in a snapshot image (`StatPersisted` + data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeImage {
    pub path: String,
    pub data: Vec<u8>,
    pub czxid: Zxid,
    pub mzxid: Zxid,
    pub pzxid: Zxid,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    /// Internal child-create counter.
    pub cversion: i32,
    pub aversion: i32,
    /// Raw owner (see `EphemeralType`).
    pub ephemeral_owner: i64,
}

/// A whole tree: nodes sorted by path, sessions by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeImage {
    pub last_zxid: Zxid,
    pub sessions: Vec<(SessionId, i32)>,
    pub nodes: Vec<NodeImage>,
}

impl Default for TreeImage {
    /// A fresh server's tree.
    fn default() -> Self {
        DataTree::new().to_image()
    }
}

/// Why an image is not a valid tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot has no root node \"/\"")]
    NoRoot,
    #[error("snapshot node {0:?} is not a valid path")]
    BadPath(String),
    #[error("snapshot node {0:?} appears twice")]
    Duplicate(String),
    #[error("snapshot node {0:?} has no parent in the snapshot")]
    Orphan(String),
}

impl DataTree {
    /// The tree as plain data.
    pub fn to_image(&self) -> TreeImage {
        let mut nodes: Vec<NodeImage> = self
            .nodes
            .iter()
            .map(|(path, n)| NodeImage {
                path: path.clone(),
                data: n.data.to_vec(),
                czxid: n.czxid,
                mzxid: n.mzxid,
                pzxid: n.pzxid,
                ctime: n.ctime,
                mtime: n.mtime,
                version: n.version,
                cversion: n.cversion,
                aversion: n.aversion,
                ephemeral_owner: n.ephemeral_owner,
            })
            .collect();
        nodes.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        TreeImage {
            last_zxid: self.last_zxid,
            sessions: self.sessions(),
            nodes,
        }
    }

    /// Rebuilds a tree from an image.
    pub fn from_image(image: &TreeImage) -> Result<DataTree, SnapshotError> {
        let mut tree = DataTree::new();
        for path in tree.paths().map(String::from).collect::<Vec<_>>() {
            tree.remove_node(&path);
        }
        let mut sorted: Vec<&NodeImage> = image.nodes.iter().collect();
        // parents sort before their children
        sorted.sort_by(|a, b| a.path.cmp(&b.path));
        for n in sorted {
            if validate_path(&n.path, false).is_err() {
                return Err(SnapshotError::BadPath(n.path.clone()));
            }
            if tree.exists(&n.path) {
                return Err(SnapshotError::Duplicate(n.path.clone()));
            }
            let mut node = Node::new(Arc::from(&n.data[..]), n.czxid, n.ctime, n.ephemeral_owner);
            node.mzxid = n.mzxid;
            node.pzxid = n.pzxid;
            node.mtime = n.mtime;
            node.version = n.version;
            node.cversion = n.cversion;
            node.aversion = n.aversion;
            if n.path != "/" {
                let parent_path = parent(&n.path);
                let mut p = tree
                    .node(parent_path)
                    .cloned()
                    .ok_or_else(|| SnapshotError::Orphan(n.path.clone()))?;
                p.children.insert(basename(&n.path).to_string());
                tree.put_node(parent_path, p);
            }
            tree.put_node(&n.path, node);
        }
        if !tree.exists("/") {
            return Err(SnapshotError::NoRoot);
        }
        for &(session, timeout) in &image.sessions {
            tree.put_session(session, timeout);
        }
        tree.last_zxid = image.last_zxid;
        Ok(tree)
    }
}

impl Serialize for DataTree {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_image().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for DataTree {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<DataTree, D::Error> {
        let image = TreeImage::deserialize(deserializer)?;
        DataTree::from_image(&image).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{prep, PrepConfig, Txn, WriteRequest};
    use zkdst_recipes::zk::CreateMode;

    fn busy_tree() -> DataTree {
        let mut t = DataTree::new();
        t.apply(
            1,
            10,
            &Txn::CreateSession {
                session: 5,
                timeout_ms: 4000,
            },
        );
        let reqs = [
            WriteRequest::Create {
                path: "/a".into(),
                data: b"x".to_vec(),
                mode: CreateMode::Container,
            },
            WriteRequest::Create {
                path: "/a/s-".into(),
                data: vec![],
                mode: CreateMode::EphemeralSequential,
            },
            WriteRequest::SetData {
                path: "/a".into(),
                data: b"yy".to_vec(),
                version: 0,
            },
            WriteRequest::Create {
                path: "/b".into(),
                data: vec![],
                mode: CreateMode::Persistent,
            },
        ];
        for (i, r) in reqs.iter().enumerate() {
            let zxid = i as i64 + 2;
            let txn = prep(&t, 5, r, zxid * 10, &PrepConfig::default());
            t.apply(zxid, zxid * 10, &txn);
        }
        t
    }

    #[test]
    fn image_round_trips() {
        let t = busy_tree();
        let back = DataTree::from_image(&t.to_image()).expect("valid image");
        assert_eq!(back, t);
        assert_eq!(back.digest(), t.digest());
        assert_eq!(back.ephemerals(5), vec!["/a/s-0000000000".to_string()]);
        let json = serde_json::to_string(&t).expect("serializes");
        let parsed: DataTree = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(parsed, t);
        assert_eq!(DataTree::from_image(&DataTree::new().to_image()), Ok(DataTree::new()));
    }

    #[test]
    fn bad_images_are_refused() {
        let t = busy_tree();
        let mut orphan = t.to_image();
        orphan.nodes.retain(|n| n.path != "/a");
        assert_eq!(
            DataTree::from_image(&orphan),
            Err(SnapshotError::Orphan("/a/s-0000000000".into()))
        );
        let mut rootless = t.to_image();
        rootless.nodes.retain(|n| n.path == "/zz");
        assert_eq!(DataTree::from_image(&rootless), Err(SnapshotError::NoRoot));
        let mut dup = t.to_image();
        let first = dup.nodes[1].clone();
        dup.nodes.push(first.clone());
        assert_eq!(DataTree::from_image(&dup), Err(SnapshotError::Duplicate(first.path)));
        let mut bad = t.to_image();
        bad.nodes[1].path = "/a/".into();
        assert!(matches!(DataTree::from_image(&bad), Err(SnapshotError::BadPath(_))));
    }
}
