//! Counters. What a counter promises:
//! - **exactly once**: an increment that returned a value was applied
//!   once; one that failed (`fail`: any error but "ambiguous") was not
//!   applied; one whose outcome is unknown (`info`) may have been. So every
//!   value read (by `CounterRead`, or returned by `Increment`) lies between
//!   the increments that definitely happened before it and those that may
//!   have happened by then. A double increment (a CAS retried after its
//!   first attempt applied) reads above the upper bound; an increment
//!   reported failed that was in fact applied, too.
//! - **progress**: once the faults healed, increments succeed — at least
//!   one of those invoked after the heal returns a value. A counter whose
//!   every increment fails (a conflict it cannot resolve, an overflow it
//!   invents) while its reads succeed keeps every safety promise and is
//!   still broken; the `progress` checker, which counts reads, cannot see
//!   it.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Outcome, Value};

use super::common::{describe, ok_value, with_operations};
use super::result::{CheckResult, Violation};
use super::ViolationKind;
use super::{healed_at, Params};

pub const NAME: &str = "counter";

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    progress(h, ops, p, &mut r);
    let mut incs: BTreeMap<&str, Vec<(&Operation, i64)>> = BTreeMap::new();
    let mut reads: Vec<(&str, &Operation, i64)> = Vec::new();
    for o in ops {
        let v = match ok_value(o) {
            Some(Value::Int { value }) => Some(*value),
            _ => None,
        };
        match &o.op {
            Op::Increment { counter, delta } => {
                if o.may_have_happened() && !matches!(ok_value(o), Some(Value::Error { .. })) {
                    incs.entry(counter).or_default().push((o, *delta));
                }
                if let Some(v) = v {
                    reads.push((counter, o, v));
                }
            }
            Op::CounterRead { counter } => {
                if let Some(v) = v {
                    reads.push((counter, o, v));
                }
            }
            _ => {}
        }
    }
    for (counter, rd, value) in reads {
        let Some(done) = rd.completed else { continue };
        let (mut lo, mut hi) = (p.counter_initial, p.counter_initial);
        let (mut definite, mut possible) = (0, 0);
        for (i, d) in incs.get(counter).map(Vec::as_slice).unwrap_or(&[]) {
            let acked = matches!(i.outcome, Some(crate::history::Outcome::Ok { .. }));
            let before = acked && (i.completed.is_some_and(|t| t < rd.invoked) || i.id == rd.id);
            if before {
                lo += d;
                hi += d;
                definite += 1;
            } else if i.invoked < done {
                lo += d.min(&0);
                hi += d.max(&0);
                possible += 1;
            }
        }
        if value < lo || value > hi {
            let side = if value > hi { "above" } else { "below" };
            r.violation(
                Violation::new(
                    ViolationKind::CounterOutOfBounds,
                    format!("counter {counter}: {} saw {value}, {side} the possible range [{lo}, {hi}] ({definite} increment(s) acknowledged before it, {possible} concurrent or unknown)", describe(rd)),
                )
                .ops([rd.id])
                .clients([rd.client])
                .times([done]),
            );
        }
    }
    r
}

/// Increments invoked after the heal: at least one must return a value.
fn progress(h: &History, ops: &[Operation], p: &Params, r: &mut CheckResult) {
    let Some(heal) = healed_at(h, p) else { return };
    let after: Vec<&Operation> = ops
        .iter()
        .filter(|o| matches!(o.op, Op::Increment { .. }) && o.invoked >= heal)
        .collect();
    let ok = after
        .iter()
        .filter(|o| matches!(ok_value(o), Some(Value::Int { .. })))
        .count();
    r.figure("increments_after_heal", ok as f64);
    // Increments still pending when the history ends have no say.
    let decided: Vec<&&Operation> = after.iter().filter(|o| o.completed.is_some()).collect();
    if ok == 0 && !decided.is_empty() {
        let failed = decided
            .iter()
            .filter(|o| matches!(o.outcome, Some(Outcome::Fail { .. })))
            .count();
        let first = decided[0];
        r.violation(
            Violation::new(
                ViolationKind::NoProgress,
                format!(
                    "none of the {} increment(s) invoked after the faults healed returned a value ({failed} failed, {} unknown), e.g. {}",
                    decided.len(),
                    decided.len() - failed,
                    describe(first)
                ),
            )
            .ops(decided.iter().take(3).map(|o| o.id))
            .clients([first.client])
            .times([first.invoked]),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn inc() -> Op {
        Op::Increment {
            counter: "c".into(),
            delta: 1,
        }
    }
    fn read() -> Op {
        Op::CounterRead { counter: "c".into() }
    }

    #[test]
    fn ambiguous_increments_widen_the_range() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, inc(), Value::Int { value: 1 });
        b.info(2, 3, 1, inc());
        b.ok(10, 11, 2, read(), Value::Int { value: 2 });
        b.ok(12, 13, 2, read(), Value::Int { value: 1 });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    /// Reads succeed, increments never do: the counter is stuck.
    #[test]
    fn increments_that_never_succeed_after_the_heal_are_no_progress() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, inc(), Value::Int { value: 1 });
        b.fault(2, "partition-halves");
        b.fault(5, "heal");
        b.fail(6, 7, 1, inc());
        b.info(8, 9, 2, inc());
        b.ok(10, 11, 2, read(), Value::Int { value: 1 });
        let r = check(&b.clone_build(), &Params::default());
        assert_eq!(r.kinds(), vec!["no-progress"], "{r:#?}");
        assert!(
            r.violations[0].explanation.contains("none of the 2 increment(s)"),
            "{}",
            r.violations[0].explanation
        );
        // One increment after the heal that returns a value is progress.
        b.ok(12, 13, 1, inc(), Value::Int { value: 2 });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["increments_after_heal"], 1.0);
    }

    /// An increment reported failed (not ambiguous) must not have been
    /// applied: a read that counts it is out of bounds.
    #[test]
    fn a_failed_increment_that_was_applied_is_out_of_bounds() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, inc(), Value::Int { value: 1 });
        b.fail(2, 3, 1, inc());
        b.ok(10, 11, 2, read(), Value::Int { value: 2 });
        let r = check(&b.clone_build(), &Params::default());
        assert_eq!(r.kinds(), vec!["counter-out-of-bounds"], "{r:#?}");
        // Had it been reported ambiguous, 2 would be possible.
        let mut b = Builder::new();
        b.ok(0, 1, 1, inc(), Value::Int { value: 1 });
        b.info(2, 3, 1, inc());
        b.ok(10, 11, 2, read(), Value::Int { value: 2 });
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn double_increment_fails() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, inc(), Value::Int { value: 1 });
        b.ok(2, 3, 1, inc(), Value::Int { value: 3 });
        b.ok(10, 11, 2, read(), Value::Int { value: 3 });
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["counter-out-of-bounds", "counter-out-of-bounds"]);
        assert!(
            r.violations[0].explanation.contains("above the possible range [2, 2]"),
            "{}",
            r.violations[0].explanation
        );
    }
}
