//! Request preparation (`PrepRequestProcessor`): validates a write request
//! against the leader's speculative tree — the committed tree plus every txn
//! already proposed — and decides the txn. Errors become `Txn::Error`, which
//! still consumes a zxid, as ZooKeeper's `ErrorTxn` does.

use zkdst_recipes::zk::path::parent;
use zkdst_recipes::zk::{validate_path, CreateMode, Op, SessionId, ZkError, Zxid, ANY_VERSION};

use super::apply::check_delete_container;
use super::data_tree::{DataTree, SPECIAL_PATHS};
use super::ephemeral::EphemeralType;
use super::request::WriteRequest;
use super::txn::Txn;
use super::undo::Journal;

/// Server settings that change how requests are decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrepConfig {
    /// `zookeeper.extendedTypesEnabled`: TTL creates are `Unimplemented`
    /// without it.
    pub extended_types_enabled: bool,
    /// Reject requests of a session the tree does not know (never created,
    /// or closed — including a close already proposed) with `SessionExpired`,
    /// as the leader's `sessionTracker.checkSession` does. Turn off to prep
    /// requests for sessions the tree has not seen.
    pub check_sessions: bool,
    /// Added to the parent's counter when naming a sequential child (not
    /// to its cversion): a simulator knob that starts every directory's
    /// names near the 32-bit wrap (ZOOKEEPER-4372), which takes 2^31
    /// creates on a real server. 0 is ZooKeeper's own naming.
    pub sequence_base: i32,
}

impl Default for PrepConfig {
    fn default() -> Self {
        PrepConfig {
            extended_types_enabled: false,
            check_sessions: true,
            sequence_base: 0,
        }
    }
}

/// Decides the txn for `req` from `session` against the speculative `tree`.
/// `now_ms` is the leader's clock (the txn's timestamp).
///
/// `tree` is left as it was: a multi's ops are tried on it and undone.
pub fn prep(tree: &mut DataTree, session: SessionId, req: &WriteRequest, now_ms: i64, cfg: &PrepConfig) -> Txn {
    let decided = match req {
        WriteRequest::Create { path, data, mode } => prep_create(tree, session, path, data, *mode, cfg),
        WriteRequest::Delete { path, version } => prep_delete(tree, session, path, *version, cfg),
        WriteRequest::SetData { path, data, version } => prep_set_data(tree, session, path, data, *version, cfg),
        WriteRequest::Multi(ops) => Ok(prep_multi(tree, session, ops, now_ms, cfg)),
        WriteRequest::CreateSession { timeout_ms } => Ok(Txn::CreateSession {
            session,
            timeout_ms: *timeout_ms,
        }),
        // Not session-checked: the expiry thread issues it for dead sessions.
        WriteRequest::CloseSession => Ok(Txn::CloseSession { session }),
        WriteRequest::DeleteContainer { path } => {
            check_delete_container(tree, path).map(|()| Txn::DeleteContainer { path: path.clone() })
        }
    };
    decided.unwrap_or_else(Txn::Error)
}

/// The `%010d` suffix of a sequential node: Java's formatting of the
/// parent's create counter, negative after it wraps (`-000000005`,
/// `-2147483648`).
pub fn sequence_suffix(counter: i32) -> String {
    format!("{counter:010}")
}

fn check_session(tree: &DataTree, session: SessionId, cfg: &PrepConfig) -> Result<(), ZkError> {
    if cfg.check_sessions && !tree.has_session(session) {
        return Err(ZkError::SessionExpired);
    }
    Ok(())
}

/// `checkAndIncVersion`: -1 matches anything; the new version wraps.
fn check_and_inc_version(current: i32, expected: i32) -> Result<i32, ZkError> {
    if expected != ANY_VERSION && expected != current {
        return Err(ZkError::BadVersion);
    }
    Ok(current.wrapping_add(1))
}

/// Create, in `pRequest2TxnCreate`'s order: TTL → session → a '/' at all →
/// parent NoNode → sequential name → path syntax → NodeExists →
/// NoChildrenForEphemerals.
fn prep_create(
    tree: &DataTree,
    session: SessionId,
    path: &str,
    data: &[u8],
    mode: CreateMode,
    cfg: &PrepConfig,
) -> Result<Txn, ZkError> {
    if let Some(ttl) = mode.ttl_ms() {
        if !cfg.extended_types_enabled {
            return Err(ZkError::Unimplemented);
        }
        if ttl <= 0 || ttl > CreateMode::MAX_TTL_MS {
            return Err(ZkError::BadArguments);
        }
    }
    check_session(tree, session, cfg)?;
    // `validatePathForCreate`: only a path without '/' (or with a NUL) is
    // refused before the parent is looked up. The parent is everything
    // before the last '/' (for a sequential `/p/` that is `/p`, for `/` the
    // root); the full syntax check runs on the final name, after the parent
    // lookup — so `/missing/x/` is NoNode, `/existing/` BadArguments
    // (verified byte for byte against 3.8 by conformance/tests/bytes.rs).
    if !path.contains('/') || path.contains('\0') {
        return Err(ZkError::BadArguments);
    }
    let parent_path = parent(path);
    let parent_node = tree.node(parent_path).ok_or(ZkError::NoNode)?;
    let final_path = if mode.is_sequential() {
        format!(
            "{path}{}",
            sequence_suffix(parent_node.cversion.wrapping_add(cfg.sequence_base))
        )
    } else {
        path.to_string()
    };
    validate_path(&final_path, false).map_err(|_| ZkError::BadArguments)?;
    if tree.exists(&final_path) {
        return Err(ZkError::NodeExists);
    }
    if matches!(parent_node.kind(), EphemeralType::Normal(_)) {
        return Err(ZkError::NoChildrenForEphemerals);
    }
    Ok(Txn::Create {
        path: final_path,
        data: data.to_vec(),
        ephemeral_owner: EphemeralType::for_create(mode, session).owner(),
        parent_cversion: parent_node.cversion.wrapping_add(1),
    })
}

/// Delete: session → BadArguments (a special path, no '/' at all, a NUL)
/// → NoNode (parent, then node) → BadVersion → NotEmpty. 3.8's
/// `getParentPathAndValidate` runs no full syntax check: a malformed path
/// names no node, so it is NoNode (verified byte for byte by
/// conformance/tests/bytes.rs).
fn prep_delete(
    tree: &DataTree,
    session: SessionId,
    path: &str,
    version: i32,
    cfg: &PrepConfig,
) -> Result<Txn, ZkError> {
    check_session(tree, session, cfg)?;
    if SPECIAL_PATHS.contains(&path) || !path.contains('/') || path.contains('\0') {
        return Err(ZkError::BadArguments);
    }
    tree.node(parent(path)).ok_or(ZkError::NoNode)?;
    let node = tree.node(path).ok_or(ZkError::NoNode)?;
    check_and_inc_version(node.version, version)?;
    if !node.children.is_empty() {
        return Err(ZkError::NotEmpty);
    }
    Ok(Txn::Delete { path: path.to_string() })
}

/// SetData: session → BadArguments → NoNode → BadVersion.
fn prep_set_data(
    tree: &DataTree,
    session: SessionId,
    path: &str,
    data: &[u8],
    version: i32,
    cfg: &PrepConfig,
) -> Result<Txn, ZkError> {
    check_session(tree, session, cfg)?;
    validate_path(path, false).map_err(|_| ZkError::BadArguments)?;
    let node = tree.node(path).ok_or(ZkError::NoNode)?;
    let version = check_and_inc_version(node.version, version)?;
    Ok(Txn::SetData {
        path: path.to_string(),
        data: data.to_vec(),
        version,
    })
}

/// Check (multi only): session → BadArguments → NoNode → BadVersion.
fn prep_check(tree: &DataTree, session: SessionId, path: &str, version: i32, cfg: &PrepConfig) -> Result<Txn, ZkError> {
    check_session(tree, session, cfg)?;
    validate_path(path, false).map_err(|_| ZkError::BadArguments)?;
    let node = tree.node(path).ok_or(ZkError::NoNode)?;
    check_and_inc_version(node.version, version)?;
    Ok(Txn::Check {
        path: path.to_string(),
        version: node.version,
    })
}

/// Multi: each op is prepped against a scratch copy that already has the
/// earlier ops applied; the first failure makes the whole multi a
/// `Txn::MultiError` (nothing applied).
fn prep_multi(tree: &mut DataTree, session: SessionId, ops: &[Op], now_ms: i64, cfg: &PrepConfig) -> Txn {
    // Each op is decided against the tree as the ops before it left it
    // (intra-multi visibility), so they are applied as they are decided —
    // to the tree itself, journaled and undone at the end: a copy of the
    // tree would copy every map node the ops touch.
    let zxid = tree.last_zxid().wrapping_add(1);
    let mut journal = Journal::on();
    let txn = prep_ops(tree, &mut journal, zxid, session, ops, now_ms, cfg);
    journal.roll_back(tree);
    txn
}

fn prep_ops(
    tree: &mut DataTree,
    journal: &mut Journal,
    zxid: Zxid,
    session: SessionId,
    ops: &[Op],
    now_ms: i64,
    cfg: &PrepConfig,
) -> Txn {
    let mut txns = Vec::with_capacity(ops.len());
    for (index, op) in ops.iter().enumerate() {
        let decided = match op {
            Op::Create { path, data, mode } => prep_create(tree, session, path, data, *mode, cfg),
            Op::Delete { path, version } => prep_delete(tree, session, path, *version, cfg),
            Op::SetData { path, data, version } => prep_set_data(tree, session, path, data, *version, cfg),
            Op::Check { path, version } => prep_check(tree, session, path, *version, cfg),
        };
        let failure = match decided {
            Ok(txn) => match tree.apply_journaled(zxid, now_ms, &txn, journal) {
                Err(e) => Some(e),
                Ok(()) => {
                    txns.push(txn);
                    None
                }
            },
            Err(e) => Some(e),
        };
        if let Some(error) = failure {
            return Txn::MultiError {
                index,
                error,
                op_count: ops.len(),
            };
        }
    }
    Txn::Multi(txns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_is_javas_percent_010d() {
        assert_eq!(sequence_suffix(0), "0000000000");
        assert_eq!(sequence_suffix(42), "0000000042");
        assert_eq!(sequence_suffix(i32::MAX), "2147483647");
        assert_eq!(sequence_suffix(-5), "-000000005");
        assert_eq!(sequence_suffix(i32::MIN), "-2147483648");
    }

    #[test]
    fn version_check() {
        assert_eq!(check_and_inc_version(3, -1), Ok(4));
        assert_eq!(check_and_inc_version(3, 3), Ok(4));
        assert_eq!(check_and_inc_version(3, -2), Err(ZkError::BadVersion));
        assert_eq!(check_and_inc_version(i32::MAX, -1), Ok(i32::MIN));
    }
}
