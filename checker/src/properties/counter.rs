//! Counters: every value read (by `CounterRead`, or returned by
//! `Increment`) lies between the increments that definitely happened before
//! it and those that may have happened by then. A double increment (a CAS
//! retried after its first attempt applied) reads above the upper bound.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Value};

use super::common::{describe, ok_value, with_operations};
use super::result::{CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "counter";

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(_h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
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
