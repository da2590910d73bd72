//! Two-phase commit promises:
//! 1. **agreement**: all sites decide alike. The coordinator's own decision
//!    is recorded as the `Decide` of the non-voting site [`COORDINATOR`]: it
//!    must agree with every site's;
//! 2. **validity**: a transaction commits only if every site voted commit (a
//!    site whose "no" vote may have been sent, or that never voted yes,
//!    vetoes it);
//! 3. **non-triviality**: a transaction whose coordinator started deciding
//!    after the faults healed, on which every site (meta `tx_sites`) voted
//!    commit, each vote acknowledged by [`MARGIN_MS`] before the coordinator's
//!    join timeout (meta `tx_join_timeout_ms`) ran out, and no site voted
//!    abort, commits. Aborting everything satisfies 1 and 2; this is what
//!    rules it out. Without the meta it is not judged (a note says so);
//! 4. **timeliness**: the coordinator waits for a site that has not joined
//!    no longer than its join timeout. A transaction whose coordinator
//!    started after the heal, with a site that did not even start to join
//!    (its `Vote`, which records the join, invoked) by then, is decided by
//!    [`LATE_SLACK_MS`] past the timeout: it may not hang on until the sites
//!    give up waiting themselves. The timeout is counted from the first
//!    site's start, which comes just after the coordinator's.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{History, Op, Operation, Outcome, Time, Value};

use super::common::{describe, ok_value, with_operations};
use super::params::{healed_at, NS_PER_MS};
use super::result::{ms, CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "two-phase-commit";

/// The site name under which the coordinator's decision is recorded; it
/// takes part in the agreement, not in the vote.
pub const COORDINATOR: &str = "coordinator";

/// How long before the join timeout ran out a commit vote must have been
/// acknowledged for non-triviality to hold the coordinator to it: its tally
/// reads the votes, then the clock, so a vote landing just before the
/// deadline may legitimately be missed.
pub const MARGIN_MS: u64 = 500;

/// How long past the join timeout a coordinator may take to decide once a
/// site has failed to join: its begin (inside the recorded `Decide`), the
/// wake-up at the deadline, and a tally's reads, all after the heal.
pub const LATE_SLACK_MS: u64 = 1000;

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut votes: BTreeMap<&str, Vec<(&Operation, &str, bool)>> = BTreeMap::new();
    let mut decisions: BTreeMap<&str, Vec<(&Operation, bool)>> = BTreeMap::new();
    let mut sites: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for o in ops {
        match &o.op {
            Op::Vote { txn, site, commit } => {
                sites.entry(txn).or_default().insert(site);
                if o.may_have_happened() {
                    votes.entry(txn).or_default().push((o, site, *commit));
                }
            }
            Op::Decide { txn, site } => {
                if site != COORDINATOR {
                    sites.entry(txn).or_default().insert(site);
                }
                if let Some(Value::Bool { value }) = ok_value(o) {
                    decisions.entry(txn).or_default().push((o, *value));
                }
            }
            _ => {}
        }
    }
    for (txn, ds) in &decisions {
        let commit = ds.iter().find(|(_, c)| *c);
        if let (Some((oc, _)), Some((oa, _))) = (commit, ds.iter().find(|(_, c)| !*c)) {
            r.violation(
                Violation::new(
                    ViolationKind::SplitDecision,
                    format!(
                        "transaction {txn}: {} decided commit but {} decided abort",
                        describe(oc),
                        describe(oa)
                    ),
                )
                .ops([oc.id, oa.id])
                .clients([oc.client, oa.client]),
            );
        }
        let Some((oc, _)) = commit else { continue };
        let vs = votes.get(txn).map(Vec::as_slice).unwrap_or(&[]);
        for site in sites.get(txn).into_iter().flatten() {
            let mine: Vec<_> = vs.iter().filter(|(_, s, _)| s == site).collect();
            if let Some((no, _, _)) = mine
                .iter()
                .find(|(o, _, c)| !*c && matches!(o.outcome, Some(Outcome::Ok { .. })))
            {
                r.violation(
                    Violation::new(
                        ViolationKind::CommitDespiteNo,
                        format!(
                            "transaction {txn}: {} decided commit although site {site} voted abort ({})",
                            describe(oc),
                            describe(no)
                        ),
                    )
                    .ops([oc.id, no.id])
                    .clients([oc.client, no.client]),
                );
            } else if !mine.iter().any(|(_, _, c)| *c) {
                r.violation(
                    Violation::new(
                        ViolationKind::CommitWithoutYes,
                        format!(
                            "transaction {txn}: {} decided commit but site {site} never voted commit",
                            describe(oc)
                        ),
                    )
                    .ops([oc.id])
                    .clients([oc.client]),
                );
            }
        }
    }
    r.figure("transactions_decided", decisions.len() as f64);
    check_non_triviality(h, ops, p, &mut r);
    r
}

/// Promise 3: an abort needs a cause.
fn check_non_triviality(h: &History, ops: &[Operation], p: &Params, r: &mut CheckResult) {
    let sites = h.meta.get("tx_sites").map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
    });
    let join_ms = h
        .meta
        .get("tx_join_timeout_ms")
        .and_then(|t| t.trim().parse::<u64>().ok());
    let (Some(sites), Some(join_ms)) = (sites, join_ms) else {
        r.note("no tx_sites / tx_join_timeout_ms in the history's meta: aborts were not judged (non-triviality)");
        return;
    };
    let Some(heal) = healed_at(h, p) else { return };
    // Per transaction: when the coordinator first started deciding.
    let mut started: BTreeMap<&str, Time> = BTreeMap::new();
    for o in ops {
        if let Op::Decide { txn, site } = &o.op {
            if site == COORDINATOR {
                let t = started.entry(txn).or_insert(o.invoked);
                *t = (*t).min(o.invoked);
            }
        }
    }
    let mut judged = 0;
    for (txn, &t0) in &started {
        if t0 < heal {
            continue;
        }
        let by = t0 + join_ms.saturating_sub(MARGIN_MS) * NS_PER_MS;
        let of_txn = || {
            ops.iter()
                .filter(move |o| matches!(&o.op, Op::Vote { txn: t, .. } | Op::Decide { txn: t, .. } if t == txn))
        };
        let vetoed = of_txn().any(|o| matches!(o.op, Op::Vote { commit: false, .. }));
        let all_yes = sites.iter().all(|s| {
            of_txn().any(|o| {
                matches!(&o.op, Op::Vote { site, commit: true, .. } if site == s)
                    && matches!(o.outcome, Some(Outcome::Ok { .. }))
                    && o.completed.is_some_and(|c| c <= by)
            })
        });
        if vetoed || !all_yes {
            continue;
        }
        judged += 1;
        if let Some(a) = of_txn()
            .find(|o| matches!(ok_value(o), Some(Value::Bool { value: false })) && matches!(o.op, Op::Decide { .. }))
        {
            r.violation(
                Violation::new(
                    ViolationKind::AbortWithoutCause,
                    format!(
                        "transaction {txn}: {} decided abort, yet the coordinator started deciding at {} (after the heal at {}) and every site ({}) voted commit, acknowledged before {} ({} ms join timeout less {MARGIN_MS} ms)",
                        describe(a),
                        ms(t0),
                        ms(heal),
                        sites.join(", "),
                        ms(by),
                        join_ms
                    ),
                )
                .ops([a.id])
                .clients([a.client])
                .times([t0, by]),
            );
        }
    }
    r.figure("transactions_judged_for_commit", judged as f64);
    started.retain(|_, t0| *t0 >= heal);
    check_timeliness(ops, &sites, join_ms, &started, r);
}

/// Promise 4: a site that has not joined by the join timeout does not hold
/// the decision up. `started`: when the coordinator started deciding each
/// transaction, after the heal.
fn check_timeliness(
    ops: &[Operation],
    sites: &[&str],
    join_ms: u64,
    started: &BTreeMap<&str, Time>,
    r: &mut CheckResult,
) {
    let mut judged = 0;
    for (txn, &t0) in started {
        let votes = || {
            ops.iter()
                .filter(move |o| matches!(&o.op, Op::Vote { txn: t, .. } if t == txn))
        };
        // Sites start to join once the coordinator has begun and announced
        // the round, just before it starts deciding: the first site's start
        // bounds the decision's start from above (the recorded Decide also
        // spans the begin, which may wait out a reconnect).
        let Some(first) = votes().map(|o| o.invoked).min() else {
            continue;
        };
        let deadline = first + join_ms * NS_PER_MS;
        let joined_in_time =
            |s: &&str| votes().any(|o| matches!(&o.op, Op::Vote { site, .. } if site == s) && o.invoked <= deadline);
        let late: Vec<&str> = sites.iter().filter(|s| !joined_in_time(s)).copied().collect();
        if late.is_empty() {
            continue;
        }
        let decided = ops.iter().find(|o| {
            matches!(&o.op, Op::Decide { txn: t, site } if t == txn && site == COORDINATOR)
                && o.invoked == t0
                && ok_value(o).is_some()
        });
        let Some(d) = decided else {
            continue;
        };
        judged += 1;
        let by = deadline + LATE_SLACK_MS * NS_PER_MS;
        let Some(done) = d.completed.filter(|&c| c > by) else {
            continue;
        };
        // Its reply may come late (a server still recovering after the
        // heal): what counts is that the coordinator set out to record its
        // decision in time (its create of the decision node, as the
        // recorded ZooKeeper calls show).
        // Likewise a coordinator that was waiting on a server at the due
        // time, not on its own timer.
        let decision = format!("/{txn}/decision");
        let mine = || ops.iter().filter(|o| o.client == d.client && o.op.is_zookeeper_call());
        let sent = mine().any(|o| {
            (t0..=by).contains(&o.invoked) && matches!(&o.op, Op::Create { path, .. } if path.ends_with(&decision))
        });
        let in_flight = mine().any(|o| o.invoked <= by && o.completed.is_none_or(|c| c > by));
        if sent || in_flight {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::DecidedLate,
                format!(
                    "transaction {txn}: {} decided at {}, though site(s) {} had not even started to join by its {join_ms} ms join timeout (at the latest {}, counted from the first site's start): due by {} ({LATE_SLACK_MS} ms slack)",
                    describe(d),
                    ms(done),
                    late.join(", "),
                    ms(deadline),
                    ms(by)
                ),
            )
            .ops([d.id])
            .clients([d.client])
            .times([t0, deadline, done]),
        );
    }
    r.figure("transactions_judged_for_timeliness", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;
    use zkdst_model::CreateMode;

    fn vote(site: &str, commit: bool) -> Op {
        Op::Vote {
            txn: "t".into(),
            site: site.into(),
            commit,
        }
    }
    fn decide(site: &str) -> Op {
        Op::Decide {
            txn: "t".into(),
            site: site.into(),
        }
    }

    #[test]
    fn unanimous_commit_passes() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, vote("a", true), Value::Unit);
        b.ok(0, 1, 2, vote("b", true), Value::Unit);
        b.ok(2, 3, 1, decide("a"), Value::Bool { value: true });
        b.ok(2, 3, 2, decide("b"), Value::Bool { value: true });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn commit_despite_no_and_split_fail() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, vote("a", true), Value::Unit);
        b.ok(0, 1, 2, vote("b", false), Value::Unit);
        b.ok(2, 3, 1, decide("a"), Value::Bool { value: true });
        b.ok(2, 3, 2, decide("b"), Value::Bool { value: false });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["split-decision", "commit-despite-no"]);
    }

    /// Two sites, a 3 s join timeout; the coordinator starts deciding at 1000 ms.
    fn after_heal(vote_b_done: u64, b_commits: bool) -> Builder {
        let mut b = Builder::new();
        b.h.meta.insert("tx_sites".into(), "a,b".into());
        b.h.meta.insert("tx_join_timeout_ms".into(), "3000".into());
        b.fault(500, "heal");
        b.invoke(1000, 0, decide(COORDINATOR));
        b.ok(1100, 1200, 1, vote("a", true), Value::Unit);
        b.ok(1100, vote_b_done, 2, vote("b", b_commits), Value::Unit);
        b
    }

    #[test]
    fn an_abort_every_timely_commit_vote_rules_out_is_flagged() {
        let mut b = after_heal(1300, true);
        b.ok(1400, 1500, 1, decide("a"), Value::Bool { value: false });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["abort-without-cause"], "{r:#?}");
        assert_eq!(r.figures["transactions_judged_for_commit"], 1.0);
    }

    #[test]
    fn an_abort_with_a_cause_passes() {
        // A "no" vote.
        let mut b = after_heal(1300, false);
        b.ok(1400, 1500, 1, decide("a"), Value::Bool { value: false });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // A vote acknowledged too close to the join deadline (4000 ms).
        let mut b = after_heal(3700, true);
        b.ok(1400, 3800, 1, decide("a"), Value::Bool { value: false });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // A site that never voted.
        let mut b = Builder::new();
        b.h.meta.insert("tx_sites".into(), "a,b".into());
        b.h.meta.insert("tx_join_timeout_ms".into(), "3000".into());
        b.invoke(1000, 0, decide(COORDINATOR));
        b.ok(1100, 1200, 1, vote("a", true), Value::Unit);
        b.ok(1400, 4500, 1, decide("a"), Value::Bool { value: false });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // A transaction started before the heal.
        let mut b = after_heal(1300, true);
        b.fault(2000, "heal");
        b.ok(2100, 2200, 1, decide("a"), Value::Bool { value: false });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["transactions_judged_for_commit"], 0.0);
    }

    #[test]
    fn a_decision_held_up_past_the_join_timeout_is_flagged() {
        // Site b starts to join only at 4500 ms, after the 4000 ms deadline.
        let late = |done: u64| {
            let mut b = Builder::new();
            b.h.meta.insert("tx_sites".into(), "a,b".into());
            b.h.meta.insert("tx_join_timeout_ms".into(), "3000".into());
            b.fault(500, "heal");
            b.ok(1000, done, 0, decide(COORDINATOR), Value::Bool { value: false });
            b.ok(1100, 1200, 1, vote("a", true), Value::Unit);
            b.ok(4500, 4600, 2, vote("b", true), Value::Unit);
            b
        };
        // Aborted at the deadline: on time.
        let r = check(&late(4100).build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["transactions_judged_for_timeliness"], 1.0);
        // Held until the sites' own wait ran out.
        let r = check(&late(9000).build(), &Params::default());
        assert_eq!(r.kinds(), vec!["decided-late"], "{r:#?}");
        // Every site started to join in time: the coordinator waits for
        // their votes as long as they take.
        let mut b = late(8100);
        b.ok(3900, 8000, 2, vote("b", true), Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["transactions_judged_for_timeliness"], 0.0);
        // It sent its decision in time, and heard back late (a call in
        // flight at the due time, as well).
        let mut b = late(9000);
        b.ok(
            4200,
            8900,
            0,
            Op::Create {
                path: "/tx/t/decision".into(),
                data: "abort".into(),
                mode: CreateMode::Persistent,
            },
            Value::Unit,
        );
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        let mut b = late(9000);
        let read = Op::GetChildren {
            path: "/tx/t/votes".into(),
            watch: true,
        };
        b.ok(5000, 8900, 0, read.clone(), Value::Unit);
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // A call that returned before the due time excuses nothing.
        let mut b = late(9000);
        b.ok(4200, 4300, 0, read, Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["decided-late"], "{r:#?}");
        // Started before the heal: not judged.
        let mut b = late(9000);
        b.fault(1500, "heal");
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn without_the_meta_aborts_are_not_judged() {
        let mut b = after_heal(1300, true);
        b.h.meta.clear();
        b.ok(1400, 1500, 1, decide("a"), Value::Bool { value: false });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass);
        assert!(r.notes.iter().any(|n| n.contains("tx_sites")), "{r:#?}");
    }

    #[test]
    fn the_coordinator_agrees_without_voting() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, vote("a", true), Value::Unit);
        b.ok(2, 3, 0, decide(COORDINATOR), Value::Bool { value: true });
        b.ok(2, 4, 1, decide("a"), Value::Bool { value: true });
        // Not a site that never voted commit.
        assert_eq!(check(&b.clone_build(), &Params::default()).verdict, Verdict::Pass);
        // A site that learns otherwise splits the decision.
        b.ok(0, 1, 2, vote("b", true), Value::Unit);
        b.ok(2, 5, 2, decide("b"), Value::Bool { value: false });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["split-decision"], "{r:#?}");
    }
}
