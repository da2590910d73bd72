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
//!
//! And on every recipe call, against its retries of one request: a call
//! that sends the same request again, one backoff delay (meta
//! [`RETRY_BACKOFF_MS`]) after it failed with ConnectionLoss (or
//! SessionMoved), is retrying it, and a run of such requests longer than
//! the budget kept going past it. Only the call's own requests count (not
//! its background tasks', which the simulator marks), a run never spans
//! two calls, and a request sent after another wait (a lock waiter
//! re-listing after a reconnect) starts a new run: a wait may outlast any
//! number of retry loops, each within its budget. Deletes are not judged: a recipe
//! deletes its own node for as long as its session lives (`delete_own`),
//! so as not to leave the node behind.

use crate::history::{ClientId, History, Op, Operation, Outcome, Time};

use super::common::{by_client, describe, short_op};
use super::needless_ambiguity::RETRY_MAX_ATTEMPTS;
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// History meta: the retry policy's backoff, `INITIAL..MAX` in ms (each
/// delay doubles the one before, up to MAX). Absent: a call's retry runs
/// are not judged.
pub const RETRY_BACKOFF_MS: &str = "retry_backoff_ms";

/// How late after its delay a retry may be sent: madsim's timers fire at
/// their instant, so only a poll's worth (a reconnect lands whole
/// milliseconds later).
const SLACK: Time = 100_000;

/// Adds a `retry-budget-exceeded` violation to `r` for each enqueue that
/// lost the replies of more multis than the history's retry budget, and
/// for each run of one call's retries longer than it. `ops`: every
/// operation.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let Some(budget) = h
        .meta
        .get(RETRY_MAX_ATTEMPTS)
        .and_then(|v| v.trim().parse::<usize>().ok())
    else {
        return;
    };
    // A policy of 0 attempts still makes one.
    let budget = budget.max(1);
    enqueues_into(ops, budget, r);
    if let Some(delays) = h.meta.get(RETRY_BACKOFF_MS).and_then(|v| backoff(v)) {
        retry_runs_into(ops, budget, &delays, r);
    }
}

/// The delays of a backoff `INITIAL..MAX` (ms), in ns: INITIAL doubled up
/// to MAX.
fn backoff(v: &str) -> Option<Vec<Time>> {
    let (a, b) = v.trim().split_once("..")?;
    let ns = |v: &str| v.trim().parse::<Time>().ok()?.checked_mul(1_000_000);
    let (mut d, max) = (ns(a)?, ns(b)?);
    let mut out = Vec::new();
    while d > 0 && d < max && out.len() < 64 {
        out.push(d);
        d = d.saturating_mul(2);
    }
    out.push(max);
    Some(out)
}

/// True if `next` was sent one backoff delay after `prev` failed.
fn after_backoff(prev: &Operation, next: &Operation, delays: &[Time]) -> bool {
    let Some(failed) = prev.completed else {
        return false;
    };
    let gap = next.invoked.saturating_sub(failed);
    delays.iter().any(|&d| gap >= d && gap <= d + SLACK)
}

/// True if a retry policy retries this failure: ConnectionLoss (the reply
/// lost) or SessionMoved (`retry::retryable`).
fn retryable(o: &Operation) -> bool {
    match &o.outcome {
        Some(Outcome::Info { .. }) => true,
        Some(Outcome::Fail { error }) => error.contains("SessionMoved"),
        _ => false,
    }
}

/// Each recipe call's runs of one request sent again after a retryable
/// failure, against the budget.
fn retry_runs_into(ops: &[Operation], budget: usize, delays: &[Time], r: &mut CheckResult) {
    let calls = by_client(ops.iter().filter(|o| !o.op.is_zookeeper_call()));
    let sent = by_client(
        ops.iter()
            .filter(|o| o.op.is_zookeeper_call() && !o.background && !matches!(o.op, Op::Delete { .. })),
    );
    let mut runs = 0u64;
    for (client, requests) in &sent {
        let calls = calls.get(client).map(Vec::as_slice).unwrap_or_default();
        let mut i = 0;
        while i < requests.len() {
            // A request outside any call (the workload's own) is no retry.
            let Some(call) = call_of(calls, requests[i]) else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            while j < requests.len()
                && retryable(requests[j - 1])
                && requests[j].op == requests[i].op
                && after_backoff(requests[j - 1], requests[j], delays)
                && call_of(calls, requests[j]).is_some_and(|c| c.id == call.id)
            {
                j += 1;
            }
            let run = &requests[i..j];
            if run.len() > 1 {
                runs += 1;
            }
            if run.len() > budget {
                r.violation(over_budget(*client, call, run, budget));
            }
            i = j;
        }
    }
    r.figure("retry_runs_judged", runs as f64);
}

/// The recipe call of `client` a request of its was sent during: the last
/// one invoked at or before it, if still running then.
fn call_of<'a>(calls: &[&'a Operation], request: &Operation) -> Option<&'a Operation> {
    let k = calls.partition_point(|c| c.invoked <= request.invoked);
    let c = *calls.get(k.checked_sub(1)?)?;
    (c.completed.unwrap_or(u64::MAX) >= request.invoked).then_some(c)
}

fn over_budget(client: ClientId, call: &Operation, run: &[&Operation], budget: usize) -> Violation {
    let last = run[run.len() - 1];
    Violation::new(
        ViolationKind::RetryBudgetExceeded,
        format!(
            "{} sent {} {} times in a row, each one backoff delay after the one before failed with ConnectionLoss or SessionMoved, though its retry policy allows {budget} attempt{} (the last at {})",
            describe(call),
            short_op(&run[0].op),
            run.len(),
            if budget == 1 { "" } else { "s" },
            ms(last.invoked),
        ),
    )
    .ops(std::iter::once(call.id).chain(run.iter().map(|o| o.id)))
    .clients([client])
    .times(Some(last.invoked))
}

/// Each enqueue's lost multis, against the budget.
fn enqueues_into(ops: &[Operation], budget: usize, r: &mut CheckResult) {
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
    use crate::history::{CreateMode, Data, OpId, Outcome, Value};
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
            // The marker read that resolves each lost reply.
            b.ok(
                13 + i * 2,
                13 + i * 2,
                0,
                Op::Exists {
                    path: "/q/enq/m".into(),
                    watch: false,
                },
                Value::Unit,
            );
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

    fn list() -> Op {
        Op::GetChildren {
            path: "/l".into(),
            watch: false,
        }
    }

    fn acquire() -> Op {
        Op::Acquire {
            lock: "/l".into(),
            shared: false,
        }
    }

    /// Under a budget of 2 and a backoff of 10 ms doubling to 40, client
    /// 0's acquire (0–1000 ms) lists `/l` after `lost` lost listings, each
    /// sent `gap(k)` ms after the one before failed; `shape` adds to the
    /// history.
    fn runs_after(
        lost: u64,
        gap: impl Fn(u64) -> u64,
        shape: impl FnOnce(&mut Builder, &[OpId]),
    ) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        let call = b.invoke(0, 0, acquire());
        let mut t = 10;
        let mut ids = Vec::new();
        for k in 0..lost {
            ids.push(b.info(t, t + 1, 0, list()));
            t += 1 + gap(k);
        }
        b.ok(t, t + 1, 0, list(), Value::Unit);
        shape(&mut b, &ids);
        b.complete(call, 1000, Outcome::Ok { value: Value::Unit });
        let mut h = b.build();
        h.meta.insert(RETRY_MAX_ATTEMPTS.into(), "2".into());
        h.meta.insert(RETRY_BACKOFF_MS.into(), "10..40".into());
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    /// As [`runs_after`], each retry after the policy's delay.
    fn runs(lost: u64, shape: impl FnOnce(&mut Builder, &[OpId])) -> Vec<ViolationKind> {
        runs_after(lost, |k| 10 << k.min(2), shape)
    }

    #[test]
    fn a_call_sending_one_request_past_its_budget_fails() {
        assert_eq!(runs(2, |_, _| {}), vec![ViolationKind::RetryBudgetExceeded]);
        // The budget's attempts in all: one lost, then the answer.
        assert!(runs(1, |_, _| {}).is_empty());
    }

    #[test]
    fn a_retry_that_never_backs_off_further_is_still_a_retry() {
        // Every retry at the first delay (an attempt counter stuck at 0).
        assert_eq!(
            runs_after(3, |_| 10, |_, _| {}),
            vec![ViolationKind::RetryBudgetExceeded]
        );
    }

    #[test]
    fn a_request_sent_after_another_wait_starts_a_new_run() {
        // A waiter re-listing after a reconnect, 37 ms after the loss.
        let woken = runs_after(2, |k| if k == 0 { 37 } else { 20 }, |_, _| {});
        assert!(woken.is_empty(), "{woken:?}");
    }

    #[test]
    fn a_run_is_one_calls_own_requests_in_a_row() {
        // Another request in between: a new try, not a retry.
        let between = runs(2, |b, _| {
            b.ok(14, 15, 0, Op::Sync { path: "/l".into() }, Value::Unit);
        });
        assert!(between.is_empty(), "{between:?}");
        // A background task's listings are not the call's.
        let background = runs(2, |b, ids| b.background(ids[1]));
        assert!(background.is_empty(), "{background:?}");
    }

    #[test]
    fn a_run_never_spans_two_calls() {
        // The second call's first listing one backoff after the first's last.
        let mut b = Builder::new();
        let first = b.invoke(10, 0, acquire());
        b.info(12, 13, 0, list());
        b.info(23, 24, 0, list());
        b.complete(
            first,
            24,
            Outcome::Fail {
                error: "ConnectionLoss".into(),
            },
        );
        let second = b.invoke(30, 0, acquire());
        b.info(34, 35, 0, list());
        b.ok(45, 46, 0, list(), Value::Unit);
        b.complete(second, 50, Outcome::Ok { value: Value::Unit });
        let mut h = b.build();
        h.meta.insert(RETRY_MAX_ATTEMPTS.into(), "2".into());
        h.meta.insert(RETRY_BACKOFF_MS.into(), "10..40".into());
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }
}
