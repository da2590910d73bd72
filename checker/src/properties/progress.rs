//! Progress: once the faults healed, the workload gets work done — at
//! least `params.min_progress` operations (recipe-level ones, or any when
//! the history has none) complete successfully after the heal time (see
//! [`healed_at`](super::healed_at)). A recipe stuck forever after a
//! partition heals breaks this promise even when every safety checker
//! passes. A history with no operations at all is undecided.

use crate::history::{History, Op, Operation, Outcome, Value};

use super::common::with_operations;
use super::result::{CheckResult, Violation};
use super::ViolationKind;
use super::{healed_at, Params};

pub const NAME: &str = "progress";

/// True for ops a recipe workload records (not raw ZooKeeper calls).
pub fn is_recipe_op(op: &Op) -> bool {
    !op.is_zookeeper_call()
}

/// Ok, and not an error reply.
fn succeeded(o: &Operation) -> bool {
    matches!(&o.outcome, Some(Outcome::Ok { value }) if !matches!(value, Value::Error { .. }))
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// As [`check`], over the history's already-paired operations.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let min = p.min_progress;
    if ops.is_empty() {
        r.undecided("the history has no operations");
        return r;
    }
    let Some(heal) = healed_at(h, p) else {
        r.undecided("no heal time recorded");
        return r;
    };
    let recipe = ops.iter().any(|o| is_recipe_op(&o.op));
    let done = ops
        .iter()
        .filter(|o| (!recipe || is_recipe_op(&o.op)) && succeeded(o) && o.completed.is_some_and(|t| t >= heal))
        .count() as u64;
    r.figure("ops_after_heal", done as f64);
    if done < min {
        r.violation(Violation::new(
            ViolationKind::NoProgress,
            format!("only {done} operation(s) succeeded after the faults healed (at least {min} required)"),
        ));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn acquire() -> Op {
        Op::Acquire {
            lock: "/l".into(),
            shared: false,
        }
    }

    #[test]
    fn passes_when_enough_recipe_ops_succeed_after_the_heal() {
        let mut b = Builder::new();
        b.fault(10, "partition-halves");
        b.fault(100, "heal");
        b.ok(120, 130, 1, acquire(), Value::Unit);
        let h = b.build();
        let r = check(&h, &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
        let two = Params {
            min_progress: 2,
            ..Params::default()
        };
        assert_eq!(check(&h, &two).verdict, Verdict::Violation);
    }

    #[test]
    fn ops_before_the_heal_or_failed_do_not_count() {
        let mut b = Builder::new();
        b.fault(10, "partition-halves");
        b.ok(20, 30, 1, acquire(), Value::Unit);
        b.fault(100, "heal");
        b.fail(120, 130, 1, acquire());
        b.ok(
            140,
            150,
            1,
            acquire(),
            Value::Error {
                code: "ConnectionLoss".into(),
                results: vec![],
            },
        );
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Violation);
        assert_eq!(r.violations[0].kind, "no-progress");
    }

    #[test]
    fn zookeeper_calls_count_only_when_there_are_no_recipe_ops() {
        let get = Op::GetData {
            path: "/a".into(),
            watch: false,
        };
        let mut b = Builder::new();
        b.ok(1, 2, 1, get.clone(), Value::Unit);
        assert_eq!(check(&b.clone_build(), &Params::default()).verdict, Verdict::Pass);
        b.fail(3, 4, 2, acquire());
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Violation);
    }

    #[test]
    fn an_empty_history_is_undecided() {
        let r = check(&crate::history::History::new(), &Params::default());
        assert_eq!(r.verdict, Verdict::Unknown);
    }

    #[test]
    fn an_unhealed_fault_is_undecided() {
        let mut b = Builder::new();
        b.fault(10, "partition-halves");
        b.ok(20, 30, 1, acquire(), Value::Unit);
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Unknown);
    }
}
