//! Liveness, reported apart from safety: after the last fault healed (see
//! [`healed_at`] for the convention), no acquire, dequeue, campaign,
//! barrier or group-join operation stays pending longer than
//! `liveness_bound_ms`.
//!
//! Waiting is excused when it is legitimate: an acquire or campaign while
//! another client holds the lock / leads; a semaphore acquire while as many
//! other clients as there are permits hold a lease; a dequeue while every
//! acknowledged item was already delivered (the queue may be empty); a
//! barrier wait on a barrier nobody removed. An empty queue excuses only
//! a take that may wait for an item without limit: where the history's
//! meta [`DEQUEUE_WAIT_MS`] says every take waits at most that long (the
//! queue workloads' `take_for` / `try_take`), a take still pending past
//! the bound is stuck, whatever the queue held (a take that livelocks on
//! an item another consumer took).

use std::collections::BTreeSet;

use crate::history::{History, Op, Operation, Time};

use super::common::{describe, session_end_after, succeeded, with_operations};
use super::result::{ms, CheckResult, Violation};
use super::semaphore::permits;
use super::ViolationKind;
use super::{end_of_history, healed_at, Params, NS_PER_MS};

pub const NAME: &str = "liveness";

/// History meta: the longest a dequeue of this history waits for an item,
/// in ms (absent: a dequeue may wait for ever).
pub const DEQUEUE_WAIT_MS: &str = "dequeue_wait_ms";

/// The history's [`DEQUEUE_WAIT_MS`], if it records one.
fn dequeue_wait_ms(h: &History) -> Option<u64> {
    h.meta.get(DEQUEUE_WAIT_MS)?.trim().parse().ok()
}

fn waits(op: &Op) -> bool {
    matches!(
        op,
        Op::Acquire { .. }
            | Op::Acquired { .. }
            | Op::Dequeue { .. }
            | Op::Campaign { .. }
            | Op::BarrierWait { .. }
            | Op::BarrierEnter { .. }
            | Op::BarrierLeave { .. }
            | Op::Join { .. }
    )
}

/// How many clients other than `o`'s hold `o`'s lock, leadership or a lease
/// of its semaphore at `at` (acquired, not yet given back, session alive).
fn held_by_others(h: &History, ops: &[Operation], o: &Operation, at: Time) -> usize {
    let same_target = |x: &Op| match (&o.op, x) {
        (Op::Acquire { lock, .. }, Op::Acquire { lock: l, .. }) => lock == l,
        (Op::Campaign { election }, Op::Campaign { election: e }) => election == e,
        (Op::Acquired { semaphore }, Op::Acquired { semaphore: s }) => semaphore == s,
        _ => false,
    };
    let gives_up = |x: &Op| match (&o.op, x) {
        (Op::Acquire { lock, .. }, Op::Release { lock: l }) => lock == l,
        (Op::Campaign { election }, Op::Resign { election: e }) => election == e,
        (Op::Acquired { semaphore }, Op::Returned { semaphore: s }) => semaphore == s,
        _ => false,
    };
    let holders: BTreeSet<_> = ops
        .iter()
        .filter(|a| {
            a.client != o.client
                && same_target(&a.op)
                && succeeded(a)
                && a.completed.is_some_and(|t| t <= at)
                && !ops.iter().any(|r| {
                    r.client == a.client && gives_up(&r.op) && r.invoked >= a.completed.unwrap_or(0) && r.invoked <= at
                })
                && session_end_after(h, a.client, a.session, a.completed.unwrap_or(0)).is_none_or(|e| e > at)
        })
        .map(|a| a.client)
        .collect();
    holders.len()
}

fn excused(h: &History, ops: &[Operation], p: &Params, o: &Operation, at: Time) -> bool {
    match &o.op {
        Op::Acquire { .. } | Op::Campaign { .. } => held_by_others(h, ops, o, at) > 0,
        // Unknown permits: any other holder excuses the wait.
        Op::Acquired { .. } => held_by_others(h, ops, o, at) >= permits(h, p).unwrap_or(1) as usize,
        // A take that waits less than the bound is not waiting for items.
        Op::Dequeue { .. } if dequeue_wait_ms(h).is_some_and(|w| w < p.liveness_bound_ms) => false,
        Op::Dequeue { queue } => {
            let acked = ops
                .iter()
                .filter(|e| matches!(&e.op, Op::Enqueue { queue: q, .. } if q == queue) && succeeded(e))
                .count();
            let delivered = ops
                .iter()
                .filter(|d| {
                    matches!(&d.op, Op::Dequeue { queue: q } if q == queue) && d.id != o.id && d.may_have_happened()
                })
                .count();
            delivered >= acked
        }
        Op::BarrierWait { barrier } => {
            let set = ops
                .iter()
                .any(|s| matches!(&s.op, Op::BarrierSet { barrier: b } if b == barrier));
            set && !ops
                .iter()
                .any(|x| matches!(&x.op, Op::BarrierRemove { barrier: b } if b == barrier) && x.invoked <= at)
        }
        _ => false,
    }
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let Some(heal) = healed_at(h, p) else {
        return CheckResult::unknown(
            NAME,
            "a fault was never healed: liveness after the heal cannot be judged",
        );
    };
    let mut r = CheckResult::new(NAME);
    let bound = p.liveness_bound_ms.saturating_mul(NS_PER_MS);
    let end = end_of_history(h);
    let mut too_short = 0;
    let mut longest: Time = 0;
    for o in ops.iter().filter(|o| waits(&o.op)) {
        let since = o.invoked.max(heal);
        let deadline = since.saturating_add(bound);
        if let Some(done) = o.completed {
            longest = longest.max(done.saturating_sub(since));
        }
        let late = match o.completed {
            Some(done) => done > deadline,
            None if end >= deadline => true,
            None => {
                too_short += 1;
                false
            }
        };
        if !late || excused(h, ops, p, o, deadline) {
            continue;
        }
        let waited = o.completed.unwrap_or(end).saturating_sub(since);
        let state = if o.completed.is_some() {
            "completed only"
        } else {
            "still pending"
        };
        r.violation(
            Violation::new(
                ViolationKind::Stuck,
                format!("{} was {state} {} after the faults healed at {} (bound {} ms): the recipe hangs with nothing left to wait for", describe(o), ms(waited), ms(heal), p.liveness_bound_ms),
            )
            .ops([o.id])
            .clients([o.client])
            .times([heal, deadline]),
        );
    }
    if too_short > 0 {
        r.undecided(format!(
            "{too_short} operation(s) still pending, but the history ends less than the bound after they began waiting"
        ));
    }
    r.figure("healed_at_ms", heal as f64 / NS_PER_MS as f64);
    r.figure("longest_wait_after_heal_ms", longest as f64 / NS_PER_MS as f64);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Value;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn acq() -> Op {
        Op::Acquire {
            lock: "l".into(),
            shared: false,
        }
    }

    fn p() -> Params {
        Params {
            liveness_bound_ms: 100,
            ..Params::default()
        }
    }

    #[test]
    fn waiting_behind_a_live_holder_passes() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, acq(), Value::Token { token: 1 });
        b.fault(2, "partition-halves");
        b.invoke(3, 2, acq());
        b.fault(10, "heal");
        b.note_at(500);
        assert_eq!(check(&b.build(), &p()).verdict, Verdict::Pass);
    }

    #[test]
    fn orphan_lock_hang_fails_and_short_history_is_unknown() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, acq(), Value::Token { token: 1 });
        b.ok(2, 3, 1, Op::Release { lock: "l".into() }, Value::Unit);
        b.fault(4, "partition-halves");
        b.invoke(5, 2, acq());
        b.fault(10, "heal");
        b.note_at(50);
        assert_eq!(check(&b.clone_build(), &p()).verdict, Verdict::Unknown);
        b.note_at(500);
        let r = check(&b.build(), &p());
        assert_eq!(r.kinds(), vec!["stuck"]);
        assert!(
            r.violations[0].explanation.contains("healed at 10 ms"),
            "{}",
            r.violations[0].explanation
        );
    }

    #[test]
    fn a_semaphore_acquire_waits_only_while_every_permit_is_held() {
        let sem = || Op::Acquired { semaphore: "s".into() };
        let mut b = Builder::new();
        b.h.meta.insert("permits".into(), "2".into());
        b.ok(0, 1, 1, sem(), Value::Token { token: 1 });
        b.fault(4, "partition-halves");
        b.invoke(5, 3, sem());
        b.fault(10, "heal");
        b.note_at(500);
        // One of two permits held: a permit stays idle while client 3 waits.
        let r = check(&b.clone_build(), &p());
        assert_eq!(r.kinds(), vec!["stuck"], "{r:#?}");
        // Both held: waiting is legitimate.
        b.ok(2, 3, 2, sem(), Value::Token { token: 2 });
        assert_eq!(check(&b.build(), &p()).verdict, Verdict::Pass);
    }

    #[test]
    fn a_join_that_never_completes_after_the_heal_is_stuck() {
        let join = Op::Join {
            group: "g".into(),
            member: "a".into(),
        };
        let mut b = Builder::new();
        b.fault(4, "partition-halves");
        let pending = b.invoke(5, 2, join.clone());
        b.fault(10, "heal");
        b.ok(20, 30, 3, join, Value::Unit);
        b.note_at(500);
        let r = check(&b.build(), &p());
        assert_eq!(r.kinds(), vec!["stuck"], "{r:#?}");
        assert_eq!(r.violations[0].ops, vec![pending], "{r:#?}");
    }

    #[test]
    fn an_empty_queue_excuses_only_a_take_that_may_wait_for_ever() {
        let q = || Op::Dequeue { queue: "q".into() };
        let mut b = Builder::new();
        let item = || "a".to_string();
        let enq = Op::Enqueue {
            queue: "q".into(),
            item: item(),
            priority: 0,
        };
        b.ok(0, 1, 1, enq, Value::Unit);
        let taken = Value::Item {
            item: Some(item()),
            priority: None,
        };
        b.ok(2, 3, 2, q(), taken);
        b.fault(4, "partition-halves");
        b.invoke(5, 3, q());
        b.fault(10, "heal");
        b.note_at(500);
        // Every item delivered: the take may be waiting on an empty queue.
        assert_eq!(check(&b.clone_build(), &p()).verdict, Verdict::Pass);
        // Takes that may wait longer than the bound are still excused...
        b.h.meta.insert(DEQUEUE_WAIT_MS.into(), "5000".into());
        assert_eq!(check(&b.clone_build(), &p()).verdict, Verdict::Pass);
        // ...but takes of this history wait 50 ms at most: this one is stuck.
        b.h.meta.insert(DEQUEUE_WAIT_MS.into(), "50".into());
        assert_eq!(check(&b.build(), &p()).kinds(), vec!["stuck"]);
    }

    #[test]
    fn unhealed_fault_is_unknown() {
        let mut b = Builder::new();
        b.fault(4, "partition-halves");
        b.invoke(5, 2, acq());
        assert_eq!(check(&b.build(), &p()).verdict, Verdict::Unknown);
    }
}
