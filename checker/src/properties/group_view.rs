//! A group member's views (`Members`, answered by `Value::View`: the member
//! ids as of the group node's pzxid). The recipe promises:
//! - a view is a state the group was in: its members are the group's
//!   children at its zxid, by the commit log (`view-never-held`);
//! - views never go back in time: one member object (a client's `Members`
//!   reads from one `Join` to the next) never returns a view older than one
//!   it returned before (`view-went-back`);
//! - a wait for a change (`newer_than: Some(n)`) returns a view newer than
//!   `n`, and gives up only if the member held nothing newer
//!   ([`super::change_wait`], by zxid).

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{History, Op, Operation, TxnRecord, Value};

use super::change_wait::{judge, Watched};
use crate::zk_consistency::tree::parent_of;

use super::common::{by_client, describe, has_commit_log, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// The members and zxid of a `Members` that returned a view.
fn view(o: &Operation) -> Option<(&[String], i64)> {
    match ok_value(o) {
        Some(Value::View { members, zxid }) => Some((members, *zxid)),
        _ => None,
    }
}

fn newer_than(o: &Operation) -> Option<i64> {
    match &o.op {
        Op::Members { newer_than, .. } => *newer_than,
        _ => None,
    }
}

/// Adds the violations of `group`'s views among `os` (that group's Join,
/// Leave and Members operations) to `r`.
pub fn check_into(h: &History, group: &str, os: &[&Operation], r: &mut CheckResult) {
    never_held(h, group, os, r);
    for ops in by_client(os.iter().copied()).values_mut() {
        ops.sort_by_key(|o| (o.invoked, o.id));
        went_back(group, ops, r);
        waits(group, ops, r);
    }
}

/// `group`'s children after each commit that changed them, by zxid (a
/// multi's parts applied together).
fn children_by_zxid<'h>(h: &'h History, group: &str) -> BTreeMap<i64, BTreeSet<&'h str>> {
    let child = |path: &'h str| (parent_of(path) == Some(group)).then(|| &path[path.rfind('/').map_or(0, |i| i + 1)..]);
    let mut now = BTreeSet::new();
    let mut states = BTreeMap::new();
    for (_, zxid, txn) in h.committed_parts() {
        let changed = match txn {
            TxnRecord::Create { path, .. } => child(path).is_some_and(|c| now.insert(c)),
            TxnRecord::Delete { path } => child(path).is_some_and(|c| now.remove(c)),
            TxnRecord::CloseSession { deleted, .. } => deleted
                .iter()
                .fold(false, |changed, p| child(p).is_some_and(|c| now.remove(c)) || changed),
            _ => false,
        };
        // A multi's later parts overwrite its earlier ones: one state per zxid.
        if changed {
            states.insert(zxid, now.clone());
        }
    }
    states
}

fn never_held(h: &History, group: &str, os: &[&Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    let states = children_by_zxid(h, group);
    let empty = BTreeSet::new();
    for o in os {
        let Some((members, zxid)) = view(o) else { continue };
        let held = states.range(..=zxid).next_back().map_or(&empty, |(_, s)| s);
        let shown: BTreeSet<&str> = members.iter().map(String::as_str).collect();
        if &shown != held {
            r.violation(
                Violation::new(
                    ViolationKind::ViewNeverHeld,
                    format!(
                        "group {group}: {} returned [{}] as of zxid {zxid:#x}, but the group then held [{}]",
                        describe(o),
                        members.join(", "),
                        held.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                )
                .ops([o.id])
                .clients([o.client]),
            );
        }
    }
}

/// `ops`: one client's operations on the group, in invocation order.
fn went_back(group: &str, ops: &[&Operation], r: &mut CheckResult) {
    let mut newest: Option<(&Operation, i64)> = None;
    for o in ops {
        if matches!(o.op, Op::Join { .. }) {
            newest = None;
            continue;
        }
        let Some((_, zxid)) = view(o) else { continue };
        match newest {
            Some((prev, z)) if zxid < z => r.violation(
                Violation::new(
                    ViolationKind::ViewWentBack,
                    format!(
                        "group {group}: {} returned the view as of zxid {zxid:#x}, older than {z:#x} of {}",
                        describe(o),
                        describe(prev)
                    ),
                )
                .ops([prev.id, o.id])
                .clients([o.client]),
            ),
            Some((_, z)) if zxid == z => {}
            _ => newest = Some((o, zxid)),
        }
    }
}

/// The zxid of the view a plain read (no `newer_than`) returned.
fn read(o: &Operation) -> Option<i64> {
    view(o)
        .map(|(_, z)| z)
        .filter(|_| matches!(o.op, Op::Members { newer_than: None, .. }))
}

/// `ops`: one client's operations on the group, in invocation order (its
/// Joins among them: each starts a new member object).
fn waits(group: &str, ops: &[&Operation], r: &mut CheckResult) {
    let subject = format!("group {group}");
    let watched = Watched {
        subject: &subject,
        order: "zxid",
        newer_than,
        read,
        returned: |o| view(o).map(|(_, z)| z),
    };
    judge(&watched, ops, r);
}

#[cfg(test)]
#[path = "group_view_tests.rs"]
mod tests;
