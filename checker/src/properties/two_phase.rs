//! Two-phase commit: all sites decide alike, and a transaction commits only
//! if every site voted commit (a site whose "no" vote may have been sent, or
//! that never voted yes, vetoes it). The coordinator's own decision is
//! recorded as the `Decide` of the non-voting site [`COORDINATOR`]: it must
//! agree with every site's.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{History, Op, Operation, Value};

use super::common::{describe, ok_value, with_operations};
use super::result::{CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "two-phase-commit";

/// The site name under which the coordinator's decision is recorded; it
/// takes part in the agreement, not in the vote.
pub const COORDINATOR: &str = "coordinator";

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(_h: &History, ops: &[Operation], _p: &Params) -> CheckResult {
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
                .find(|(o, _, c)| !*c && matches!(o.outcome, Some(crate::history::Outcome::Ok { .. })))
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
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

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
