//! Barriers.
//!
//! `barrier` (single barrier): with `BarrierSet`/`BarrierRemove` ops, a
//! `BarrierWait` invoked after the barrier was set must not return before a
//! removal was invoked; without them, a `BarrierWait` must not return before
//! N clients invoked `BarrierEnter` (N = `barrier_size`, else the number of
//! distinct clients that entered). Once the barrier is down, a wait keeps
//! its word ([`super::barrier_wait`]).
//!
//! `double-barrier`: a client's enters up to its next leave belong to one
//! round (an enter retried after a lost session rejoins the same round),
//! and its k-th round is round k. Nobody passes enter before N clients
//! entered the round; nobody leaves before N entered; nobody passes leave
//! before all who entered the round left. A participant whose session was
//! closed (the CloseSession commit deleted its node) has dropped out, as the
//! recipe documents, until it enters again. A participant that passed
//! enter names its node (`DoubleBarrier::node`, recorded as the enter's
//! `str` value): a node its session created in the barrier's directory
//! before enter returned (`unknown-participant-node` otherwise). Enter and
//! leave wait on watches, not by polling ([`super::busy_wait`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{ClientId, History, Op, Operation, Time, Value};

use super::common::{creates, describe, ok_value, session_closed_commit, succeeded, with_operations, Created};
use super::result::{ms, CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "barrier";
pub const DOUBLE: &str = "double-barrier";

fn name_of(op: &Op) -> Option<&str> {
    match op {
        Op::BarrierEnter { barrier }
        | Op::BarrierLeave { barrier }
        | Op::BarrierWait { barrier }
        | Op::BarrierSet { barrier }
        | Op::BarrierRemove { barrier } => Some(barrier),
        _ => None,
    }
}

fn clients_invoked_before<'a>(xs: impl Iterator<Item = &'a &'a Operation>, t: Time) -> BTreeSet<ClientId> {
    xs.filter(|o| o.invoked < t).map(|o| o.client).collect()
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut by_name: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for o in ops {
        if let Some(n) = name_of(&o.op) {
            by_name.entry(n).or_default().push(o);
        }
    }
    for (name, os) in by_name {
        let of = |f: fn(&Op) -> bool| {
            os.iter()
                .filter(move |o| f(&o.op))
                .copied()
                .collect::<Vec<&Operation>>()
        };
        let sets = of(|o| matches!(o, Op::BarrierSet { .. }));
        let removes = of(|o| matches!(o, Op::BarrierRemove { .. }));
        let enters = of(|o| matches!(o, Op::BarrierEnter { .. }));
        let all_waits = of(|o| matches!(o, Op::BarrierWait { .. }));
        if !sets.is_empty() {
            super::barrier_wait::check_into(h, name, &sets, &removes, &all_waits, &mut r);
        }
        let waits: Vec<&Operation> = all_waits.into_iter().filter(|w| succeeded(w)).collect();
        for w in waits {
            let Some(passed) = w.completed else { continue };
            if !sets.is_empty() {
                let set = sets
                    .iter()
                    .filter(|s| succeeded(s) && s.completed.is_some_and(|t| t < w.invoked))
                    .max_by_key(|s| s.completed);
                let Some(set) = set else { continue };
                if !removes
                    .iter()
                    .any(|x| x.invoked > set.invoked && x.invoked < passed && x.may_have_happened())
                {
                    r.violation(
                        Violation::new(ViolationKind::PassedBeforeRemoval, format!("barrier {name}: {} returned at {} although the barrier set by {} had not been removed yet", describe(w), ms(passed), describe(set)))
                            .ops([w.id, set.id])
                            .clients([w.client])
                            .times([passed]),
                    );
                }
            } else if !enters.is_empty() {
                let n = p
                    .barrier_size
                    .unwrap_or_else(|| enters.iter().map(|e| e.client).collect::<BTreeSet<_>>().len());
                let entered = clients_invoked_before(enters.iter(), passed);
                if entered.len() < n {
                    r.violation(
                        Violation::new(
                            ViolationKind::PassedBeforeNEntered,
                            format!(
                                "barrier {name}: {} returned at {} when only {} of {n} clients had entered",
                                describe(w),
                                ms(passed),
                                entered.len()
                            ),
                        )
                        .ops([w.id])
                        .clients([w.client])
                        .times([passed]),
                    );
                }
            }
        }
    }
    r
}

/// Round k of a double barrier: every client's k-th enter and k-th leave.
#[derive(Default)]
struct Round<'a> {
    enters: Vec<&'a Operation>,
    leaves: Vec<&'a Operation>,
}

pub fn check_double(h: &History, p: &Params) -> CheckResult {
    with_operations(h, DOUBLE, p, check_double_ops)
}

/// [`check_double`] over the history's operations, already paired.
pub fn check_double_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(DOUBLE);
    let mut rounds: BTreeMap<&str, Vec<Round>> = BTreeMap::new();
    // Per (barrier, client): the round index and whether the last op was a leave.
    let mut at: BTreeMap<(&str, ClientId), (usize, bool)> = BTreeMap::new();
    for o in ops {
        let (name, enter) = match &o.op {
            Op::BarrierEnter { barrier } => (barrier.as_str(), true),
            Op::BarrierLeave { barrier } => (barrier.as_str(), false),
            _ => continue,
        };
        let (k, after_leave) = at.entry((name, o.client)).or_insert((0, false));
        if enter && *after_leave {
            *k += 1;
        }
        *after_leave = !enter;
        let rs = rounds.entry(name).or_default();
        while rs.len() <= *k {
            rs.push(Round::default());
        }
        if enter {
            rs[*k].enters.push(o);
        } else {
            rs[*k].leaves.push(o);
        }
    }
    check_nodes(h, ops, &mut r);
    let waits = ops
        .iter()
        .filter(|o| matches!(o.op, Op::BarrierEnter { .. } | Op::BarrierLeave { .. }));
    super::busy_wait::check_into(h, ops, waits, |o| name_of(&o.op), &mut r);
    for (name, rs) in &rounds {
        for (k, round) in rs.iter().enumerate() {
            let who: BTreeSet<ClientId> = round.enters.iter().map(|e| e.client).collect();
            let n = p.barrier_size.unwrap_or(who.len());
            for e in round.enters.iter().filter(|e| succeeded(e)) {
                let Some(t) = e.completed else { continue };
                let entered = clients_invoked_before(round.enters.iter(), t);
                if entered.len() < n {
                    r.violation(
                        Violation::new(ViolationKind::EnteredEarly, format!("double barrier {name}, round {}: {} passed enter at {} when only {} of {n} clients had entered", k + 1, describe(e), ms(t), entered.len()))
                            .ops([e.id])
                            .clients([e.client])
                            .times([t]),
                    );
                }
            }
            for l in &round.leaves {
                let entered = clients_invoked_before(round.enters.iter(), l.invoked);
                if entered.len() < n {
                    r.violation(
                        Violation::new(ViolationKind::LeftBeforeAllEntered, format!("double barrier {name}, round {}: {} started leaving at {} when only {} of {n} clients had entered", k + 1, describe(l), ms(l.invoked), entered.len()))
                            .ops([l.id])
                            .clients([l.client])
                            .times([l.invoked]),
                    );
                }
                let Some(t) = l.completed.filter(|_| succeeded(l)) else {
                    continue;
                };
                let left = clients_invoked_before(round.leaves.iter(), t);
                let waiting: Vec<String> = who
                    .difference(&left)
                    .filter(|c| !dropped_out(h, &round.enters, **c, t))
                    .map(|c| c.to_string())
                    .collect();
                if !waiting.is_empty() {
                    r.violation(
                        Violation::new(ViolationKind::LeftEarly, format!("double barrier {name}, round {}: {} passed leave at {} while client(s) {} had not left", k + 1, describe(l), ms(t), waiting.join(", ")))
                            .ops([l.id])
                            .clients([l.client])
                            .times([t]),
                    );
                }
            }
        }
    }
    r
}

/// Every enter that returned its node's name (`str`) names a node its
/// session created under the barrier before the enter returned.
fn check_nodes(h: &History, ops: &[Operation], r: &mut CheckResult) {
    // By the node's own name, the last component of its path.
    let mut by_name: BTreeMap<&str, Vec<Created>> = BTreeMap::new();
    for c in creates(h) {
        by_name
            .entry(c.path.rsplit('/').next().unwrap_or(""))
            .or_default()
            .push(c);
    }
    for o in ops {
        let (Op::BarrierEnter { barrier }, Some(Value::Str { value: node })) = (&o.op, ok_value(o)) else {
            continue;
        };
        let Some(t) = o.completed else { continue };
        let named = by_name.get(node.as_str()).map(Vec::as_slice).unwrap_or_default();
        if !node.is_empty() && named.iter().any(|c| c.is_under(barrier) && c.made_by(o)) {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::UnknownParticipantNode,
                format!(
                    "double barrier {barrier}: {} passed enter naming its node {node:?}, which its session never created under the barrier",
                    describe(o)
                ),
            )
            .ops([o.id])
            .clients([o.client])
            .times([t]),
        );
    }
}

/// True if, at `t`, `client`'s latest enter of the round (invoked before
/// `t`) was in a session whose CloseSession had committed: its node went
/// with the session, and it has not entered again since.
fn dropped_out(h: &History, enters: &[&Operation], client: ClientId, t: Time) -> bool {
    let Some(last) = enters
        .iter()
        .filter(|e| e.client == client && e.invoked < t)
        .max_by_key(|e| e.invoked)
    else {
        return false;
    };
    session_closed_commit(h, last.session, last.invoked).is_some_and(|tc| tc < t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Value;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn op(f: fn(String) -> Op) -> Op {
        f("b".into())
    }

    #[test]
    fn single_barrier_removal() {
        let mut b = Builder::new();
        b.ok(0, 1, 0, op(|barrier| Op::BarrierSet { barrier }), Value::Unit);
        b.ok(2, 10, 1, op(|barrier| Op::BarrierWait { barrier }), Value::Unit);
        b.ok(8, 9, 0, op(|barrier| Op::BarrierRemove { barrier }), Value::Unit);
        assert_eq!(check(&b.clone_build(), &Params::default()).verdict, Verdict::Pass);
        b.ok(3, 5, 2, op(|barrier| Op::BarrierWait { barrier }), Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["passed-before-removal"]);
    }

    #[test]
    fn single_barrier_n_entered() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, op(|barrier| Op::BarrierEnter { barrier }), Value::Unit);
        b.ok(2, 3, 2, op(|barrier| Op::BarrierEnter { barrier }), Value::Unit);
        b.ok(1, 4, 1, op(|barrier| Op::BarrierWait { barrier }), Value::Unit);
        let h = b.build();
        assert_eq!(check(&h, &Params::default()).verdict, Verdict::Pass);
        assert_eq!(
            check(
                &h,
                &Params {
                    barrier_size: Some(3),
                    ..Params::default()
                }
            )
            .kinds(),
            vec!["passed-before-n-entered"]
        );
    }

    #[test]
    fn double_barrier_rounds() {
        let enter = || op(|barrier| Op::BarrierEnter { barrier });
        let leave = || op(|barrier| Op::BarrierLeave { barrier });
        let mut b = Builder::new();
        b.ok(0, 5, 1, enter(), Value::Unit);
        b.ok(4, 6, 2, enter(), Value::Unit);
        b.ok(10, 20, 1, leave(), Value::Unit);
        b.ok(15, 21, 2, leave(), Value::Unit);
        assert_eq!(check_double(&b.build(), &Params::default()).verdict, Verdict::Pass);

        let mut b = Builder::new();
        b.ok(0, 2, 1, enter(), Value::Unit); // passes before client 2 entered
        b.ok(4, 6, 2, enter(), Value::Unit);
        b.ok(10, 12, 1, leave(), Value::Unit); // passes before client 2 left
        b.ok(15, 21, 2, leave(), Value::Unit);
        let r = check_double(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["entered-early", "left-early"], "{r:#?}");
    }

    /// Client 3's session expires during round 1 (its node goes with it):
    /// the others may pass leave; it rejoins the same round with a new
    /// session (a second enter before any leave) and round 2 lines up.
    #[test]
    fn a_participant_whose_session_closed_dropped_out() {
        use crate::history::{Outcome, TxnRecord};
        let enter = || op(|barrier| Op::BarrierEnter { barrier });
        let leave = || op(|barrier| Op::BarrierLeave { barrier });
        let build = |rejoin_before_leaves: bool| {
            let mut b = Builder::new();
            for c in 1..=3u32 {
                let e = b.invoke_s(0, c, Some(i64::from(c) * 10), enter());
                if c < 3 {
                    b.complete(e, 5, Outcome::Ok { value: Value::Unit });
                } else {
                    b.complete(
                        e,
                        60,
                        Outcome::Info {
                            error: "session lost".into(),
                        },
                    );
                }
            }
            b.commit(
                20,
                0x1_0000_0009,
                TxnRecord::CloseSession {
                    session: 30,
                    expired: true,
                    deleted: vec!["/b/p-3".into()],
                },
            );
            let rejoin_at = if rejoin_before_leaves { 25 } else { 70 };
            let r = b.invoke_s(rejoin_at, 3, Some(31), enter());
            b.complete(r, rejoin_at + 2, Outcome::Ok { value: Value::Unit });
            b.ok(10, 30, 1, leave(), Value::Unit);
            b.ok(12, 31, 2, leave(), Value::Unit);
            b.ok(80, 81, 3, leave(), Value::Unit);
            // Round 2: everyone, in order.
            for c in 1..=3u32 {
                b.ok(100, 110, c, enter(), Value::Unit);
            }
            for c in 1..=3u32 {
                b.ok(120, 130, c, leave(), Value::Unit);
            }
            b.build()
        };
        let r = check_double(&build(false), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        // Back in (a new node) before the others passed leave: they left early.
        let r = check_double(&build(true), &Params::default());
        assert_eq!(r.kinds(), vec!["left-early", "left-early"], "{r:#?}");
    }

    /// Without a CloseSession commit, a silent participant still holds the
    /// others in the barrier.
    #[test]
    fn a_participant_without_a_closed_session_is_still_in() {
        use crate::history::Outcome;
        let enter = || op(|barrier| Op::BarrierEnter { barrier });
        let leave = || op(|barrier| Op::BarrierLeave { barrier });
        let mut b = Builder::new();
        b.ok(0, 5, 1, enter(), Value::Unit);
        let e = b.invoke_s(1, 2, Some(20), enter());
        b.complete(
            e,
            60,
            Outcome::Info {
                error: "ConnectionLoss".into(),
            },
        );
        b.ok(10, 30, 1, leave(), Value::Unit);
        let r = check_double(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["left-early"], "{r:#?}");
    }

    /// `node()` after enter names the participant's own node: one its
    /// session created under the barrier (any round directory) before the
    /// enter returned. Not another session's, not one created later, not
    /// an empty or made-up name.
    #[test]
    fn a_participant_names_its_own_node() {
        use crate::history::{Outcome, TxnRecord};
        let create = |b: &mut Builder, t: u64, path: &str, owner: i64| {
            b.commit(
                t,
                t as i64,
                TxnRecord::Create {
                    path: path.into(),
                    data: Default::default(),
                    ephemeral_owner: owner,
                    session: owner,
                },
            )
        };
        let named = |b: &mut Builder, session: i64, node: &str| {
            let e = b.invoke_s(0, 1, Some(session), Op::BarrierEnter { barrier: "/b".into() });
            b.complete(
                e,
                5,
                Outcome::Ok {
                    value: Value::Str { value: node.into() },
                },
            );
        };
        let kinds = |b: &Builder| {
            let p = Params {
                barrier_size: Some(1),
                ..Params::default()
            };
            let r = check_double(&b.clone_build(), &p);
            r.kinds().into_iter().map(str::to_string).collect::<Vec<_>>()
        };
        let mut b = Builder::new();
        create(&mut b, 2, "/b/round-1/g1-p-0000000003", 7);
        named(&mut b, 7, "g1-p-0000000003");
        assert!(kinds(&b).is_empty(), "{:?}", kinds(&b));
        for (session, node, t) in [
            (7, "", 2),
            (7, "xyzzy", 2),
            (8, "g1-p-0000000003", 2),
            (7, "g1-p-0000000004", 9),
        ] {
            let mut b = Builder::new();
            create(&mut b, t, "/b/round-1/g1-p-0000000004", 7);
            create(&mut b, 2, "/b/round-1/g1-p-0000000003", 7);
            named(&mut b, session, node);
            assert_eq!(kinds(&b), vec!["unknown-participant-node"], "{session} {node:?} {t}");
        }
        // Outside the barrier's directory.
        let mut b = Builder::new();
        create(&mut b, 2, "/bb/g1-p-0000000003", 7);
        named(&mut b, 7, "g1-p-0000000003");
        assert_eq!(kinds(&b), vec!["unknown-participant-node"]);
    }
}

#[cfg(test)]
mod wait_tests;
