//! A holder's account of its node. A lock guard (or semaphore lease) names
//! the node its hold stands on: its path, its name, its sequence number and
//! the Stat it was created with. Applications rely on them: they log the
//! name, watch or delete the path, compare sequence numbers, and fence
//! with the Stat's czxid. The promise (`wrong-hold-node`), for each
//! `HoldNode` report:
//! - the path lies in the lock's directory (the report's `lock`, as the
//!   application read it from the recipe: it builds paths from it);
//! - the name is the path's last component, and ends with the sequence
//!   number as ZooKeeper appends it (`%010d`);
//! - the Stat is the node's: its czxid is the hold's token, its
//!   ephemeralOwner the holder's session (the rest may be newer than the
//!   create: an acquire whose create was lost to ConnectionLoss reads its
//!   node again, perhaps after a revocation request changed its data);
//! - by the servers' commit log (when the history has one), the holder's
//!   session created that path at the token's zxid.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, SessionId, TxnRecord, Zxid};

use super::common::{describe, has_commit_log};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Every committed create, a multi's included: (zxid, path) → owner.
fn created(h: &History) -> BTreeMap<(Zxid, &str), SessionId> {
    h.committed_parts()
        .filter_map(|(_, zxid, txn)| match txn {
            TxnRecord::Create {
                path, ephemeral_owner, ..
            } => Some(((zxid, path.as_str()), *ephemeral_owner)),
            _ => None,
        })
        .collect()
}

/// What is wrong with one report, if anything.
fn fault(o: &Operation, log: Option<&BTreeMap<(Zxid, &str), SessionId>>) -> Option<String> {
    let Op::HoldNode {
        lock,
        token,
        path,
        name,
        sequence,
        stat,
        ..
    } = &o.op
    else {
        return None;
    };
    let in_dir = lock.starts_with('/')
        && path
            .strip_prefix(lock.as_str())
            .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'));
    if !in_dir {
        return Some(format!("its path {path:?} is not in the lock's directory {lock:?}"));
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    if name != last {
        return Some(format!("its name {name:?} is not the last part of its path {path:?}"));
    }
    let suffix = format!("{sequence:010}");
    if !name.ends_with(&suffix) {
        return Some(format!(
            "its sequence number {sequence} is not the one its name {name:?} ends with"
        ));
    }
    if stat.czxid != *token {
        return Some(format!("its Stat's czxid {} is not the token {token}", stat.czxid));
    }
    if let Some(s) = o.session.filter(|&s| stat.ephemeral_owner != s) {
        return Some(format!(
            "its Stat's ephemeralOwner {:#x} is not the holder's session {s:#x}",
            stat.ephemeral_owner
        ));
    }
    let log = log?;
    match log.get(&(*token, path.as_str())) {
        None => Some(format!("no create of {path} committed at zxid {token} (the token)")),
        Some(&owner) if o.session.is_some_and(|s| s != owner) => Some(format!(
            "{path} was created by session {owner:#x}, not the holder's {:#x}",
            o.session.unwrap_or_default()
        )),
        Some(_) => None,
    }
}

/// Flags each `HoldNode` report that misnames its hold's node.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let log = has_commit_log(h).then(|| created(h));
    for o in ops {
        let Op::HoldNode { lock, token, .. } = &o.op else {
            continue;
        };
        let Some(why) = fault(o, log.as_ref()) else {
            continue;
        };
        r.violation(Violation::of_op(
            ViolationKind::WrongHoldNode,
            format!(
                "lock {lock}: client {} holds with token {token}, but the node its guard names is wrong: {why}: {}",
                o.client,
                describe(o)
            ),
            o,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Event, Outcome, Stat, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    const PATH: &str = "/l/_c_1f-lock-0000000003";

    fn stat(czxid: Zxid, owner: SessionId) -> Stat {
        Stat {
            czxid,
            mzxid: czxid,
            ephemeral_owner: owner,
            ..Stat::default()
        }
    }

    /// Session 0xa created PATH at zxid 7 and its guard reported `report`.
    fn history(report: Op) -> History {
        let mut b = Builder::new();
        b.commit(
            1,
            7,
            TxnRecord::Create {
                path: PATH.into(),
                data: Default::default(),
                ephemeral_owner: 0xa,
                session: 0xa,
            },
        );
        let id = b.invoke_s(2, 1, Some(0xa), report);
        b.complete(id, 2, Outcome::Ok { value: Value::Unit });
        b.build()
    }

    fn report(path: &str, name: &str, sequence: i32, stat: Stat) -> Op {
        Op::HoldNode {
            lock: "/l".into(),
            token: 7,
            path: path.into(),
            name: name.into(),
            sequence,
            stat,
        }
    }

    fn kinds(h: &History) -> Vec<String> {
        kinds_found(h, check_into)
    }

    #[test]
    fn a_guard_naming_its_own_node_passes() {
        let h = history(report(PATH, "_c_1f-lock-0000000003", 3, stat(7, 0xa)));
        assert!(kinds(&h).is_empty());
    }

    #[test]
    fn a_guard_misnaming_its_node_fails() {
        let bad = [
            // Another path: nothing was created there at the token.
            report("/l/_c_1f-lock-0000000004", "_c_1f-lock-0000000004", 4, stat(7, 0xa)),
            // An empty path / name.
            report("", "", 3, stat(7, 0xa)),
            report(PATH, "xyzzy", 3, stat(7, 0xa)),
            // The wrong sequence number.
            report(PATH, "_c_1f-lock-0000000003", 0, stat(7, 0xa)),
            report(PATH, "_c_1f-lock-0000000003", -1, stat(7, 0xa)),
            // A Stat that is not the node's.
            report(PATH, "_c_1f-lock-0000000003", 3, Stat::default()),
            report(PATH, "_c_1f-lock-0000000003", 3, stat(7, 0xb)),
        ];
        for op in bad {
            let h = history(op.clone());
            assert_eq!(kinds(&h), vec!["wrong-hold-node"], "{op:?}");
        }
    }

    #[test]
    fn a_lock_directory_that_is_not_the_nodes_fails() {
        for dir in ["", "xyzzy", "/", "/other", "/l/_c_1f-lock-0000000003"] {
            let mut op = report(PATH, "_c_1f-lock-0000000003", 3, stat(7, 0xa));
            if let Op::HoldNode { lock, .. } = &mut op {
                *lock = dir.into();
            }
            assert_eq!(kinds(&history(op)), vec!["wrong-hold-node"], "{dir:?}");
        }
    }

    #[test]
    fn a_node_another_session_created_is_not_the_holders() {
        let mut h = history(report(PATH, "_c_1f-lock-0000000003", 3, stat(7, 0xa)));
        for e in &mut h.events {
            if let Event::Commit {
                txn: TxnRecord::Create { ephemeral_owner, .. },
                ..
            } = e
            {
                *ephemeral_owner = 0xb;
            }
        }
        assert_eq!(kinds(&h), vec!["wrong-hold-node"]);
    }

    #[test]
    fn without_a_commit_log_the_report_is_judged_on_its_own() {
        let mut h = history(report(PATH, "_c_1f-lock-0000000003", 3, stat(7, 0xa)));
        h.events.retain(|e| !matches!(e, Event::Commit { .. }));
        assert!(kinds(&h).is_empty());
        let mut h = history(report(PATH, "_c_1f-lock-0000000003", 2, stat(7, 0xa)));
        h.events.retain(|e| !matches!(e, Event::Commit { .. }));
        assert_eq!(kinds(&h), vec!["wrong-hold-node"]);
    }
}
