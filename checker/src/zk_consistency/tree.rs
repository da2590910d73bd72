//! A small pure model of ZooKeeper 3.8's data tree, for replaying a history
//! in zxid order: creates in every mode (sequential names from the parent's
//! internal create counter; ephemeral, container and TTL owners encoded as a
//! server commits them, shown to clients as ZooKeeper shows them), deletes and setData with
//! versions (-1 = any), check, all-or-nothing multi, and sessions ending
//! (their ephemerals deleted in one txn). Times (ctime/mtime) and ACLs are
//! not modelled.
//!
//! Persistent maps (`im`): the replay tries each write on a copy of the
//! tree, so a copy must cost O(1), not O(nodes).

use im::{OrdMap, OrdSet};
use zkdst_model::EphemeralType;

use crate::history::{CreateMode, Data, MultiOpResult, Op, SessionId, Stat, TxnRecord, Value, Zxid};

/// One znode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub data: Data,
    pub czxid: Zxid,
    pub mzxid: Zxid,
    pub pzxid: Zxid,
    pub version: i32,
    /// The raw `ephemeralOwner` a server commits (`EphemeralType`'s
    /// encoding: a container's is `Long.MIN_VALUE`); `stat()` shows clients
    /// 0 for everything but an ephemeral.
    pub ephemeral_owner: SessionId,
    /// The parent's internal counter of child creations (names sequential
    /// children; never decremented).
    pub child_creates: i32,
    pub children: OrdSet<String>,
}

impl Node {
    fn new(data: Data, zxid: Zxid, ephemeral_owner: SessionId) -> Self {
        Node {
            data,
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            version: 0,
            ephemeral_owner,
            child_creates: 0,
            children: OrdSet::new(),
        }
    }

    /// The client-visible Stat (ctime/mtime/aversion are not modelled: 0).
    pub fn stat(&self) -> Stat {
        let n = self.children.len() as i32;
        Stat {
            czxid: self.czxid,
            mzxid: self.mzxid,
            ctime: 0,
            mtime: 0,
            version: self.version,
            cversion: self.child_creates.wrapping_mul(2).wrapping_sub(n),
            aversion: 0,
            ephemeral_owner: EphemeralType::client_owner(self.ephemeral_owner),
            data_length: self.data.0.len() as i32,
            num_children: n,
            pzxid: self.pzxid,
        }
    }
}

/// ZooKeeper error codes the model decides, by ZooKeeper's names.
pub mod code {
    use zkdst_model::ErrorCode;

    pub const NO_NODE: &str = ErrorCode::NoNode.name();
    pub const NODE_EXISTS: &str = ErrorCode::NodeExists.name();
    pub const BAD_VERSION: &str = ErrorCode::BadVersion.name();
    pub const NOT_EMPTY: &str = ErrorCode::NotEmpty.name();
    pub const NO_CHILDREN_FOR_EPHEMERALS: &str = ErrorCode::NoChildrenForEphemerals.name();
    pub const BAD_ARGUMENTS: &str = ErrorCode::BadArguments.name();
    pub const RUNTIME_INCONSISTENCY: &str = ErrorCode::RuntimeInconsistency.name();
    pub const OK: &str = ErrorCode::Ok.name();

    /// Codes the model can decide; replies with other codes are not compared.
    pub fn modelled(c: &str) -> bool {
        [
            NO_NODE,
            NODE_EXISTS,
            BAD_VERSION,
            NOT_EMPTY,
            NO_CHILDREN_FOR_EPHEMERALS,
            BAD_ARGUMENTS,
        ]
        .contains(&c)
    }
}

/// The data tree. Starts with the root only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTree {
    nodes: OrdMap<String, Node>,
    /// Added to the parent's counter when naming a sequential child: the
    /// simulator's knob for starting names near the 32-bit wrap (history
    /// meta `sequence_base`; 0 on a real server).
    sequence_base: i32,
}

impl Default for DataTree {
    fn default() -> Self {
        let mut nodes = OrdMap::new();
        nodes.insert("/".to_string(), Node::new(Data::default(), 0, 0));
        DataTree {
            nodes,
            sequence_base: 0,
        }
    }
}

/// What applying a client write produced: the reply and, if it changed the
/// tree, the txn a server would commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub reply: Value,
    pub txn: Option<TxnRecord>,
}

fn err(code: &str) -> Value {
    Value::Error {
        code: code.to_string(),
        results: Vec::new(),
    }
}

/// The parent of a valid path ("/" for top-level nodes); `None` for the root.
pub fn parent_of(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

fn child_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// ZooKeeper's path syntax (`PathUtils.validatePath`): the server refuses
/// a create of a path it breaks with BadArguments.
pub fn valid_path(path: &str) -> bool {
    super::paths::path_problem(path).is_none()
}

impl DataTree {
    pub fn new() -> Self {
        Self::default()
    }

    /// A tree whose sequential names start `base` past ZooKeeper's.
    pub fn with_sequence_base(base: i32) -> Self {
        DataTree {
            sequence_base: base,
            ..Self::default()
        }
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    /// The ephemerals a session owns, sorted.
    pub fn ephemerals_of(&self, session: SessionId) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| EphemeralType::from_owner(n.ephemeral_owner) == EphemeralType::Normal(session))
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Applies a client write (`Create`, `Delete`, `SetData`, `Check`,
    /// `Multi`) issued by `session`, as the leader would at `zxid`.
    /// Returns `None` for ops that are not data-tree writes.
    pub fn apply_op(&mut self, op: &Op, session: SessionId, zxid: Zxid) -> Option<Applied> {
        match op {
            Op::Multi { ops } => Some(self.apply_multi(ops, session, zxid)),
            _ => {
                let r = self.apply_single(op, session, zxid)?;
                Some(match r {
                    Ok((reply, txn)) => Applied { reply, txn },
                    Err(code) => Applied {
                        reply: err(code),
                        txn: None,
                    },
                })
            }
        }
    }

    fn apply_multi(&mut self, ops: &[Op], session: SessionId, zxid: Zxid) -> Applied {
        let mut scratch = self.clone();
        let mut results = Vec::new();
        let mut txns = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match scratch.apply_single(op, session, zxid) {
                Some(Ok((reply, txn))) => {
                    results.push(match reply {
                        Value::Created { path, stat } => MultiOpResult::Create { path, stat },
                        Value::Stat { stat: Some(stat) } => MultiOpResult::SetData { stat },
                        _ if matches!(op, Op::Check { .. }) => MultiOpResult::Check,
                        _ => MultiOpResult::Delete,
                    });
                    txns.extend(txn);
                }
                failed => {
                    let code = match failed {
                        Some(Err(c)) => c,
                        _ => code::BAD_ARGUMENTS,
                    };
                    let mut results: Vec<MultiOpResult> =
                        (0..i).map(|_| MultiOpResult::Error { code: code::OK.into() }).collect();
                    results.push(MultiOpResult::Error { code: code.into() });
                    results.extend((i + 1..ops.len()).map(|_| MultiOpResult::Error {
                        code: code::RUNTIME_INCONSISTENCY.into(),
                    }));
                    return Applied {
                        reply: Value::Error {
                            code: code.into(),
                            results,
                        },
                        txn: None,
                    };
                }
            }
        }
        *self = scratch;
        Applied {
            reply: Value::Multi { results },
            txn: Some(TxnRecord::Multi { txns }),
        }
    }

    #[allow(clippy::type_complexity)]
    fn apply_single(
        &mut self,
        op: &Op,
        session: SessionId,
        zxid: Zxid,
    ) -> Option<Result<(Value, Option<TxnRecord>), &'static str>> {
        Some(match op {
            Op::Create { path, data, mode } => self.create(path, data, *mode, session, zxid),
            Op::Delete { path, version } => self.delete(path, *version, zxid).map(|t| (Value::Unit, Some(t))),
            Op::SetData { path, data, version } => self.set_data(path, data, *version, zxid),
            Op::Check { path, version } => self
                .check(path, *version)
                .map(|_| (Value::Unit, Some(TxnRecord::Check { path: path.clone() }))),
            _ => return None,
        })
    }

    fn create(
        &mut self,
        path: &str,
        data: &Data,
        mode: CreateMode,
        session: SessionId,
        zxid: Zxid,
    ) -> Result<(Value, Option<TxnRecord>), &'static str> {
        // PrepRequestProcessor.pRequest2TxnCreate's order: a path with no
        // `/` or with a NUL is refused before the parent (everything before
        // the last `/`; the root for `/` itself) is looked up; the full
        // syntax check runs on the final name, after the sequence suffix.
        // So `/` is NodeExists, and a sequential `/` a top-level node.
        let slash = match path.rfind('/') {
            Some(i) if !path.contains('\0') => i,
            _ => return Err(code::BAD_ARGUMENTS),
        };
        let parent_path = if slash == 0 { "/" } else { &path[..slash] };
        let parent = self.nodes.get(parent_path).ok_or(code::NO_NODE)?;
        let name = if mode.is_sequential() {
            format!("{path}{:010}", parent.child_creates.wrapping_add(self.sequence_base))
        } else {
            path.to_string()
        };
        if !valid_path(&name) {
            return Err(code::BAD_ARGUMENTS);
        }
        if self.nodes.contains_key(&name) {
            return Err(code::NODE_EXISTS);
        }
        // Only an ephemeral parent refuses children (PrepRequestProcessor
        // asks for EphemeralType.NORMAL): a container or TTL parent takes them.
        if matches!(
            EphemeralType::from_owner(parent.ephemeral_owner),
            EphemeralType::Normal(_)
        ) {
            return Err(code::NO_CHILDREN_FOR_EPHEMERALS);
        }
        let owner = EphemeralType::for_create(mode, session).owner();
        let txn = TxnRecord::Create {
            path: name.clone(),
            data: data.clone(),
            ephemeral_owner: owner,
            session,
        };
        self.insert(&name, data.clone(), owner, zxid);
        let stat = self.nodes.get(&name).map(Node::stat).unwrap_or_default();
        Ok((Value::Created { path: name, stat }, Some(txn)))
    }

    fn insert(&mut self, path: &str, data: Data, owner: SessionId, zxid: Zxid) {
        if let Some(parent) = parent_of(path).and_then(|p| self.nodes.get_mut(p)) {
            parent.child_creates = parent.child_creates.wrapping_add(1);
            parent.pzxid = zxid;
            parent.children.insert(child_name(path).to_string());
        }
        self.nodes.insert(path.to_string(), Node::new(data, zxid, owner));
    }

    fn remove(&mut self, path: &str, zxid: Zxid) {
        self.nodes.remove(path);
        if let Some(parent) = parent_of(path).and_then(|p| self.nodes.get_mut(p)) {
            parent.pzxid = zxid;
            parent.children.remove(child_name(path));
        }
    }

    fn delete(&mut self, path: &str, version: i32, zxid: Zxid) -> Result<TxnRecord, &'static str> {
        if !valid_path(path) || path == "/" || path == "/zookeeper" {
            return Err(code::BAD_ARGUMENTS);
        }
        let parent = parent_of(path).ok_or(code::BAD_ARGUMENTS)?;
        if !self.nodes.contains_key(parent) {
            return Err(code::NO_NODE);
        }
        let node = self.nodes.get(path).ok_or(code::NO_NODE)?;
        if version != -1 && version != node.version {
            return Err(code::BAD_VERSION);
        }
        if !node.children.is_empty() {
            return Err(code::NOT_EMPTY);
        }
        self.remove(path, zxid);
        Ok(TxnRecord::Delete { path: path.to_string() })
    }

    fn set_data(
        &mut self,
        path: &str,
        data: &Data,
        version: i32,
        zxid: Zxid,
    ) -> Result<(Value, Option<TxnRecord>), &'static str> {
        if !valid_path(path) {
            return Err(code::BAD_ARGUMENTS);
        }
        let node = self.nodes.get_mut(path).ok_or(code::NO_NODE)?;
        if version != -1 && version != node.version {
            return Err(code::BAD_VERSION);
        }
        node.version = node.version.wrapping_add(1);
        node.mzxid = zxid;
        node.data = data.clone();
        let stat = node.stat();
        Ok((
            Value::Stat { stat: Some(stat) },
            Some(TxnRecord::SetData {
                path: path.to_string(),
                data: data.clone(),
                version: stat.version,
            }),
        ))
    }

    fn check(&self, path: &str, version: i32) -> Result<(), &'static str> {
        let node = self.nodes.get(path).ok_or(code::NO_NODE)?;
        if version != -1 && version != node.version {
            return Err(code::BAD_VERSION);
        }
        Ok(())
    }

    /// Ends a session: deletes its ephemerals (one txn). Returns the paths
    /// deleted, sorted.
    pub fn close_session(&mut self, session: SessionId, zxid: Zxid) -> Vec<String> {
        let gone = self.ephemerals_of(session);
        for p in &gone {
            self.remove(p, zxid);
        }
        gone
    }

    /// Applies a committed txn as a server would, or says why it cannot
    /// apply to this tree (the commit stream contradicts the model).
    pub fn apply_txn(&mut self, txn: &TxnRecord, zxid: Zxid) -> Result<(), CannotApply> {
        match txn {
            TxnRecord::Create {
                path,
                data,
                ephemeral_owner,
                ..
            } => {
                let parent = parent_of(path).ok_or_else(|| CannotApply::NoParent(path.clone()))?;
                if !self.nodes.contains_key(parent) {
                    return Err(CannotApply::ParentMissing(path.clone(), parent.to_string()));
                }
                if self.nodes.contains_key(path) {
                    return Err(CannotApply::Exists(path.clone()));
                }
                self.insert(path, data.clone(), *ephemeral_owner, zxid);
                Ok(())
            }
            TxnRecord::Delete { path } => {
                let node = self
                    .nodes
                    .get(path)
                    .ok_or_else(|| CannotApply::Missing("delete", path.clone()))?;
                if !node.children.is_empty() {
                    return Err(CannotApply::HasChildren(path.clone()));
                }
                self.remove(path, zxid);
                Ok(())
            }
            TxnRecord::SetData { path, data, .. } => {
                let node = self
                    .nodes
                    .get_mut(path)
                    .ok_or_else(|| CannotApply::Missing("setData", path.clone()))?;
                node.version = node.version.wrapping_add(1);
                node.mzxid = zxid;
                node.data = data.clone();
                Ok(())
            }
            TxnRecord::Multi { txns } => {
                let mut scratch = self.clone();
                for t in txns {
                    scratch.apply_txn(t, zxid)?;
                }
                *self = scratch;
                Ok(())
            }
            TxnRecord::CloseSession { session, .. } => {
                self.close_session(*session, zxid);
                Ok(())
            }
            TxnRecord::CreateSession { .. } | TxnRecord::Check { .. } | TxnRecord::Error { .. } => Ok(()),
        }
    }
}

/// Why a committed txn cannot apply to the model's tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CannotApply {
    #[error("create of {0:?} has no parent")]
    NoParent(String),
    #[error("create of {0} but its parent {1} does not exist")]
    ParentMissing(String, String),
    #[error("create of {0} but it already exists")]
    Exists(String),
    #[error("{0} of {1} but it does not exist")]
    Missing(&'static str, String),
    #[error("delete of {0} but it has children")]
    HasChildren(String),
}

/// True when a txn the model derived from a client op is the txn a server
/// committed (same kind, path, data; ephemeral owner when recorded).
pub fn same_txn(model: &TxnRecord, committed: &TxnRecord) -> bool {
    match (model, committed) {
        (
            TxnRecord::Create {
                path: a,
                data: da,
                ephemeral_owner: oa,
                ..
            },
            TxnRecord::Create {
                path: b,
                data: db,
                ephemeral_owner: ob,
                ..
            },
        ) => a == b && da == db && oa == ob,
        (TxnRecord::Delete { path: a }, TxnRecord::Delete { path: b }) => a == b,
        (TxnRecord::SetData { path: a, data: da, .. }, TxnRecord::SetData { path: b, data: db, .. }) => {
            a == b && da == db
        }
        (TxnRecord::Check { path: a }, TxnRecord::Check { path: b }) => a == b,
        (TxnRecord::Multi { txns: a }, TxnRecord::Multi { txns: b }) => {
            let a: Vec<_> = a.iter().filter(|t| !matches!(t, TxnRecord::Check { .. })).collect();
            let b: Vec<_> = b.iter().filter(|t| !matches!(t, TxnRecord::Check { .. })).collect();
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same_txn(x, y))
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
