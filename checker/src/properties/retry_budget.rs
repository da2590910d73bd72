//! The retry budget: a recipe retries a request whose reply was lost at
//! most as often as its retry policy allows (`RetryPolicy::max_attempts`,
//! the first attempt included). The application sets that bound on how
//! long a call may take; the queue's enqueue promises it for its multi
//! (a lost reply resolved through the marker still counts an attempt). An
//! enqueue that sent more multis whose reply was lost than the budget
//! kept trying past it. No other check sees it: every extra attempt is
//! resolved correctly.
//!
//! Judged where the history records the budget (meta
//! [`RETRY_MAX_ATTEMPTS`]), on enqueues, against the multis their client
//! sent during the call (a producer's only multis: the background deletes
//! of its markers are plain deletes).

use crate::history::{History, Op, Operation};

use super::common::{by_client, describe};
use super::needless_ambiguity::RETRY_MAX_ATTEMPTS;
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// Adds a `retry-budget-exceeded` violation to `r` for each enqueue that
/// lost the replies of more multis than the history's retry budget.
/// `ops`: every operation.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let Some(budget) = h
        .meta
        .get(RETRY_MAX_ATTEMPTS)
        .and_then(|v| v.trim().parse::<usize>().ok())
    else {
        return;
    };
    let multis = by_client(ops.iter().filter(|o| matches!(o.op, Op::Multi { .. })));
    let mut judged = 0u64;
    for o in ops.iter().filter(|o| matches!(o.op, Op::Enqueue { .. })) {
        judged += 1;
        let end = o.completed.unwrap_or(u64::MAX);
        let lost: Vec<&Operation> = multis
            .get(&o.client)
            .into_iter()
            .flatten()
            .copied()
            .filter(|m| m.invoked >= o.invoked && m.invoked <= end && m.is_indeterminate())
            .collect();
        if lost.len() <= budget {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::RetryBudgetExceeded,
                format!(
                    "{} sent {} multis whose reply was lost, though its retry policy allows {budget} attempt{} (the last lost at {})",
                    describe(o),
                    lost.len(),
                    if budget == 1 { "" } else { "s" },
                    lost.last().map_or_else(|| "?".into(), |m| ms(m.invoked)),
                ),
            )
            .ops(std::iter::once(o.id).chain(lost.iter().map(|m| m.id)))
            .clients([o.client])
            .times(o.completed),
        );
    }
    r.figure("enqueues_budget_judged", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CreateMode, Data, Outcome, Value};
    use crate::properties::testkit::Builder;

    fn multi() -> Op {
        Op::Multi {
            ops: vec![Op::Create {
                path: "/q/items/i-".into(),
                data: Data::default(),
                mode: CreateMode::PersistentSequential,
            }],
        }
    }

    /// An enqueue on client 0 whose first `lost` multis lost their reply
    /// and whose last one applied, under a budget of 2.
    fn judged(lost: u64) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        let e = b.invoke_s(
            10,
            0,
            Some(0x10),
            Op::Enqueue {
                queue: "/q".into(),
                item: "a".into(),
                priority: 0,
            },
        );
        for i in 0..lost {
            b.info(12 + i * 2, 13 + i * 2, 0, multi());
        }
        b.ok(50, 51, 0, multi(), Value::Multi { results: vec![] });
        // Another client's lost multis are not this enqueue's.
        b.info(12, 13, 1, multi());
        b.info(14, 15, 1, multi());
        b.info(16, 17, 1, multi());
        b.complete(e, 60, Outcome::Ok { value: Value::Unit });
        let mut h = b.build();
        h.meta.insert(RETRY_MAX_ATTEMPTS.into(), "2".into());
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn an_enqueue_losing_more_replies_than_its_budget_fails() {
        assert_eq!(judged(3), vec![ViolationKind::RetryBudgetExceeded]);
    }

    #[test]
    fn an_enqueue_within_its_budget_passes() {
        assert!(judged(0).is_empty());
        assert!(judged(2).is_empty());
    }
}
