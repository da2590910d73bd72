//! Group membership and configuration: views converge after the faults
//! heal, and a client's configuration never goes back in time.
//!
//! `membership`: the last `Members` view of every client, read after the
//! heal, must be the same, must hold every member whose `Join` was
//! acknowledged (not followed by a leave or its session's end), and none
//! whose `Leave` was acknowledged with no later join. An acknowledged `Join`
//! means the member node `{group}/{member}` existed (the commit log says so)
//! at some moment between its invocation and its completion. Each view is a
//! state the group was in, views never go back, and a wait for a change
//! keeps its word ([`super::group_view`]). A member acts on its standing
//! only while its session is connected ([`super::member_act`]), and waits
//! out another session's node of its id on a watch
//! ([`super::member_polls`]), on the session it has unless something
//! failed on it ([`super::member_session`]).
//!
//! `config`: a client's `ConfigGet` versions never decrease; one version has
//! one value; the last reads after the heal and after every set agree, on a
//! value some set may have written last; a wait for a change keeps its word
//! ([`super::config_wait`]); so does a conditional set
//! ([`super::conditional_set`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{ClientId, History, Op, Operation, Time, TxnRecord, Value};

use super::common::{describe, has_commit_log, ok_value, session_end_after, succeeded, with_operations};
use super::result::{CheckResult, Violation};
use super::ViolationKind;
use super::{healed_at, Params};

pub const MEMBERSHIP: &str = "membership";
pub const CONFIG: &str = "config";

pub fn check_membership(h: &History, p: &Params) -> CheckResult {
    with_operations(h, MEMBERSHIP, p, check_membership_ops)
}

/// [`check_membership`] over the history's operations, already paired.
pub fn check_membership_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(MEMBERSHIP);
    let mut groups: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for o in ops {
        if let Op::Join { group, .. }
        | Op::Leave { group, .. }
        | Op::Members { group, .. }
        | Op::MemberAct { group, .. } = &o.op
        {
            groups.entry(group).or_default().push(o);
        }
    }
    // What holds at every moment, faults or not.
    for (group, os) in &groups {
        joined_with_node(h, group, os, &mut r);
        super::group_view::check_into(h, group, os, &mut r);
    }
    super::member_act::check_into(h, ops, &mut r);
    super::member_polls::check_into(h, ops, &mut r);
    super::member_session::check_into(h, ops, &mut r);
    let Some(heal) = healed_at(h, p) else {
        r.undecided("the faults never healed: convergence is not required");
        return r;
    };
    for (group, os) in groups {
        let mut last: BTreeMap<ClientId, (&Operation, BTreeSet<&str>)> = BTreeMap::new();
        for o in os
            .iter()
            .filter(|o| matches!(o.op, Op::Members { .. }) && o.invoked >= heal)
        {
            if let Some(Value::Names { names } | Value::View { members: names, .. }) = ok_value(o) {
                let newer = last.get(&o.client).is_none_or(|(prev, _)| prev.invoked < o.invoked);
                if newer {
                    last.insert(o.client, (o, names.iter().map(String::as_str).collect()));
                }
            }
        }
        no_view_after_heal(
            &mut r,
            group,
            os.iter()
                .copied()
                .filter(|o| matches!(o.op, Op::Members { .. }) && o.invoked >= heal),
        );
        let views: Vec<_> = last.values().collect();
        if let Some((first, fv)) = views.first() {
            for (o, v) in &views[1..] {
                if v != fv {
                    r.violation(
                        Violation::new(
                            ViolationKind::ViewsDiverge,
                            format!(
                                "group {group}: after the heal {} ended with [{}] but {} ended with [{}]",
                                describe(first),
                                join(fv),
                                describe(o),
                                join(v)
                            ),
                        )
                        .ops([first.id, o.id])
                        .clients([first.client, o.client]),
                    );
                }
            }
        }
        let end = os.iter().filter_map(|o| o.completed).max().unwrap_or(0);
        for (o, view) in last.values() {
            for j in os.iter().filter(|j| succeeded(j)) {
                let (Op::Join { member, .. } | Op::Leave { member, .. }) = &j.op else {
                    continue;
                };
                let joined = matches!(j.op, Op::Join { .. });
                let t = j.completed.unwrap_or(j.invoked);
                let undone = os.iter().any(|x| match &x.op {
                    Op::Join { member: m, .. } | Op::Leave { member: m, .. } => {
                        m == member
                            && x.invoked > j.invoked
                            && matches!(x.op, Op::Join { .. }) != joined
                            && x.may_have_happened()
                    }
                    _ => false,
                });
                if undone || t > o.invoked {
                    continue;
                }
                if joined
                    && !view.contains(member.as_str())
                    && session_end_after(h, j.client, j.session, t).is_none_or(|e| e > end)
                {
                    r.violation(
                        Violation::new(
                            ViolationKind::MemberMissing,
                            format!(
                                "group {group}: {} acknowledged, yet {} did not list {member}",
                                describe(j),
                                describe(o)
                            ),
                        )
                        .ops([j.id, o.id])
                        .clients([o.client]),
                    );
                }
                if !joined && view.contains(member.as_str()) {
                    r.violation(
                        Violation::new(
                            ViolationKind::MemberLingers,
                            format!(
                                "group {group}: {} acknowledged, yet {} still lists {member}",
                                describe(j),
                                describe(o)
                            ),
                        )
                        .ops([j.id, o.id])
                        .clients([o.client]),
                    );
                }
            }
        }
    }
    r
}

/// Each acknowledged `Join` of `group` saw its member node exist (judged only
/// with a commit log).
fn joined_with_node(h: &History, group: &str, os: &[&Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    for j in os.iter().filter(|j| succeeded(j)) {
        let (Op::Join { member, .. }, Some(done)) = (&j.op, j.completed) else {
            continue;
        };
        let path = format!("{group}/{member}");
        if !existed_between(h, &path, j.invoked, done) {
            r.violation(
                Violation::new(
                    ViolationKind::JoinedWithoutNode,
                    format!(
                        "group {group}: {} acknowledged, but {path} did not exist at any moment of it",
                        describe(j)
                    ),
                )
                .ops([j.id])
                .clients([j.client]),
            );
        }
    }
}

/// Whether `path` existed at some instant of `[from, to]`, by the commit log.
fn existed_between(h: &History, path: &str, from: Time, to: Time) -> bool {
    let mut exists = false;
    for (t, _, txn) in h.committed_parts() {
        if t > to {
            break;
        }
        // Existing when the window opens counts, even if this commit ends it.
        if t >= from && exists {
            return true;
        }
        match txn {
            TxnRecord::Create { path: p, .. } if p == path => exists = true,
            TxnRecord::Delete { path: p } if p == path => exists = false,
            TxnRecord::CloseSession { deleted, .. } if deleted.iter().any(|p| p == path) => exists = false,
            _ => {}
        }
        if t >= from && exists {
            return true;
        }
    }
    exists
}

/// Every client's last read among `reads` (all after the heal) must have
/// returned a view: the watcher had time to read and deliver one.
fn no_view_after_heal<'a>(r: &mut CheckResult, what: &str, reads: impl Iterator<Item = &'a Operation>) {
    let mut last: BTreeMap<ClientId, &Operation> = BTreeMap::new();
    for o in reads {
        if last.get(&o.client).is_none_or(|prev| prev.invoked < o.invoked) {
            last.insert(o.client, o);
        }
    }
    for o in last.values().filter(|o| ok_value(o).is_none()) {
        r.violation(
            Violation::new(
                ViolationKind::NoViewAfterHeal,
                format!(
                    "{what}: after the heal, {} (its client's last read) had no view",
                    describe(o)
                ),
            )
            .ops([o.id])
            .clients([o.client]),
        );
    }
}

fn join(s: &BTreeSet<&str>) -> String {
    s.iter().copied().collect::<Vec<_>>().join(", ")
}

pub fn check_config(h: &History, p: &Params) -> CheckResult {
    with_operations(h, CONFIG, p, check_config_ops)
}

/// [`check_config`] over the history's operations, already paired.
pub fn check_config_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(CONFIG);
    let heal = healed_at(h, p);
    let mut keys: BTreeMap<&str, (Vec<&Operation>, Vec<(&Operation, Option<&str>, i64)>)> = BTreeMap::new();
    let mut reads: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for o in ops {
        match &o.op {
            Op::ConfigSet { key, .. } if o.may_have_happened() => keys.entry(key).or_default().0.push(o),
            Op::ConfigGet { key, newer_than } => {
                // A wait that gave up is not a read of the view.
                if newer_than.is_none() {
                    reads.entry(key).or_default().push(o);
                }
                keys.entry(key).or_default();
                if let Some(Value::Versioned { value, version }) = ok_value(o) {
                    keys.entry(key).or_default().1.push((o, value.as_deref(), *version));
                }
            }
            _ => {}
        }
    }
    for (key, (sets, mut gets)) in keys {
        let all_gets = reads.remove(key).unwrap_or_default();
        gets.sort_by_key(|(o, _, _)| o.completed);
        let mut seen: BTreeMap<ClientId, (&Operation, i64)> = BTreeMap::new();
        let mut by_version: BTreeMap<i64, (&Operation, Option<&str>)> = BTreeMap::new();
        for (o, value, version) in &gets {
            if let Some((prev, pv)) = seen.get(&o.client) {
                if version < pv {
                    r.violation(
                        Violation::new(
                            ViolationKind::ConfigWentBack,
                            format!(
                                "key {key}: client {} saw version {pv} ({}) and later version {version} ({})",
                                o.client,
                                describe(prev),
                                describe(o)
                            ),
                        )
                        .ops([prev.id, o.id])
                        .clients([o.client]),
                    );
                }
            }
            if seen.get(&o.client).is_none_or(|(_, pv)| version >= pv) {
                seen.insert(o.client, (o, *version));
            }
            match by_version.get(version) {
                Some((other, v)) if v != value => r.violation(
                    Violation::new(
                        ViolationKind::ConfigVersionConflict,
                        format!(
                            "key {key}: version {version} read as {v:?} by {} and as {value:?} by {}",
                            describe(other),
                            describe(o)
                        ),
                    )
                    .ops([other.id, o.id])
                    .clients([other.client, o.client]),
                ),
                Some(_) => {}
                None => {
                    by_version.insert(*version, (o, *value));
                }
            }
        }
        let Some(heal) = heal else { continue };
        let sets_done = sets.iter().map(|s| s.completed.unwrap_or(u64::MAX)).max().unwrap_or(0);
        // A set may be the last to take effect unless a set that surely
        // took effect began after it surely had. An ambiguous set (lost
        // reply) bounds nothing: it may never have happened, or late.
        let finals: BTreeSet<&str> = sets
            .iter()
            .filter(|s| {
                let done = s.completed.filter(|_| succeeded(s));
                !sets.iter().any(|t| succeeded(t) && done.is_some_and(|d| d < t.invoked))
            })
            .filter_map(|s| match &s.op {
                Op::ConfigSet { value, .. } => Some(value.as_str()),
                _ => None,
            })
            .collect();
        no_view_after_heal(
            &mut r,
            key,
            all_gets.iter().copied().filter(|o| o.invoked >= heal.max(sets_done)),
        );
        let mut last: BTreeMap<ClientId, (&Operation, Option<&str>)> = BTreeMap::new();
        for (o, value, _) in gets.iter().filter(|(o, _, _)| o.invoked >= heal.max(sets_done)) {
            last.insert(o.client, (o, *value));
        }
        for (o, value) in last.values() {
            if !finals.is_empty() && !value.is_some_and(|v| finals.contains(v)) {
                let expect = finals.iter().copied().collect::<Vec<_>>().join(" or ");
                r.violation(
                    Violation::new(
                        ViolationKind::ConfigNotConverged,
                        format!(
                            "key {key}: after the heal and the last set, {} still read {value:?}, expected {expect}",
                            describe(o)
                        ),
                    )
                    .ops([o.id])
                    .clients([o.client]),
                );
            }
        }
    }
    super::config_wait::check(ops, &mut r);
    super::conditional_set::check(h, ops, &mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn names(n: &[&str]) -> Value {
        Value::Names {
            names: n.iter().map(|s| s.to_string()).collect(),
        }
    }
    fn members() -> Op {
        Op::Members {
            group: "g".into(),
            newer_than: None,
        }
    }
    fn join_op(m: &str) -> Op {
        Op::Join {
            group: "g".into(),
            member: m.into(),
        }
    }
    fn get() -> Op {
        Op::ConfigGet {
            key: "k".into(),
            newer_than: None,
        }
    }
    fn ver(v: &str, version: i64) -> Value {
        Value::Versioned {
            value: Some(v.into()),
            version,
        }
    }

    #[test]
    fn membership_converges_or_fails() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, join_op("a"), Value::Unit);
        b.ok(0, 1, 2, join_op("b"), Value::Unit);
        b.fault(2, "partition-halves");
        b.ok(3, 4, 1, members(), names(&["a"]));
        b.fault(5, "heal");
        b.ok(10, 11, 1, members(), names(&["a", "b"]));
        b.ok(10, 11, 2, members(), names(&["b", "a"]));
        assert_eq!(
            check_membership(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        b.ok(12, 13, 2, members(), names(&["b"]));
        let r = check_membership(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["views-diverge", "member-missing"], "{r:#?}");
    }

    #[test]
    fn a_join_acknowledged_without_its_member_node_is_flagged() {
        let create = |m: &str| TxnRecord::Create {
            path: format!("g/{m}"),
            data: Default::default(),
            ephemeral_owner: 7,
            session: 7,
        };
        let mut b = Builder::new();
        b.commit(2, 1, create("a"));
        b.ok(1, 3, 1, join_op("a"), Value::Unit);
        // Created before the join and still there: fine too.
        b.ok(4, 5, 1, join_op("a"), Value::Unit);
        b.fault(6, "heal");
        assert_eq!(
            check_membership(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        // Acknowledged before the create committed.
        b.ok(0, 1, 2, join_op("b"), Value::Unit);
        b.commit(7, 2, create("b"));
        // Acknowledged after the node went with its session.
        b.commit(
            8,
            3,
            TxnRecord::CloseSession {
                session: 7,
                expired: true,
                deleted: vec!["g/a".into()],
            },
        );
        b.ok(9, 10, 1, join_op("a"), Value::Unit);
        let r = check_membership(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["joined-without-node", "joined-without-node"], "{r:#?}");
    }

    #[test]
    fn config_never_goes_back_and_converges() {
        let mut b = Builder::new();
        b.ok(
            0,
            1,
            1,
            Op::ConfigSet {
                key: "k".into(),
                value: "x".into(),
                expected_version: None,
            },
            Value::Unit,
        );
        b.ok(
            2,
            3,
            1,
            Op::ConfigSet {
                key: "k".into(),
                value: "y".into(),
                expected_version: None,
            },
            Value::Unit,
        );
        b.ok(4, 5, 2, get(), ver("x", 1));
        b.ok(6, 7, 2, get(), ver("y", 2));
        b.ok(6, 7, 3, get(), ver("y", 2));
        assert_eq!(
            check_config(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        b.ok(8, 9, 2, get(), ver("x", 1));
        let r = check_config(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["config-went-back", "config-not-converged"], "{r:#?}");
    }

    #[test]
    fn a_last_read_after_the_heal_without_a_view_is_flagged() {
        // Membership: a read before the heal may find no view yet; the
        // last one after it may not.
        let mut b = Builder::new();
        b.ok(0, 1, 1, join_op("a"), Value::Unit);
        b.fault(2, "partition-halves");
        b.fail(3, 4, 1, members());
        b.fault(5, "heal");
        b.fail(6, 7, 1, members());
        b.ok(10, 11, 1, members(), names(&["a"]));
        assert_eq!(
            check_membership(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        b.fail(12, 13, 1, members());
        let r = check_membership(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["no-view-after-heal"], "{r:#?}");
        // Configuration: the same, for reads after the last set.
        let set = Op::ConfigSet {
            key: "k".into(),
            value: "x".into(),
            expected_version: None,
        };
        let mut b = Builder::new();
        b.ok(0, 1, 1, set, Value::Unit);
        b.fail(2, 3, 2, get());
        b.ok(4, 5, 2, get(), ver("x", 1));
        assert_eq!(
            check_config(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        b.fail(6, 7, 3, get());
        let r = check_config(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["no-view-after-heal"], "{r:#?}");
    }

    #[test]
    fn a_set_with_a_lost_reply_does_not_hide_the_one_before() {
        let set = |v: &str| Op::ConfigSet {
            key: "k".into(),
            value: v.into(),
            expected_version: None,
        };
        let mut b = Builder::new();
        b.ok(0, 1, 1, set("x"), Value::Unit);
        // "y" may not have happened: "x" may be the final value.
        b.info(2, 3, 1, set("y"));
        b.ok(6, 7, 2, get(), ver("x", 1));
        assert_eq!(
            check_config(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        // ... but not once a set that surely happened followed.
        b.ok(8, 9, 1, set("z"), Value::Unit);
        b.ok(10, 11, 2, get(), ver("x", 1));
        let r = check_config(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["config-not-converged"], "{r:#?}");
    }
}

#[cfg(test)]
mod config_wait_tests;

#[cfg(test)]
mod member_act_tests;
