//! Run-level checks that live with the scenarios: `progress` (after the
//! heal, the workload completed at least `min_progress` operations) and
//! `semaphore` (never more definite lease holders than permits).

use zkdst_checker::history::{Event, History, Op, Operation, Outcome, Time, TxnRecord, Value};
use zkdst_checker::properties::{healed_at, CheckResult, Params, Violation};

use crate::stats::is_recipe_op;

/// Names of the checks defined here (usable in `check.checkers`).
pub const LOCAL: [&str; 2] = ["progress", "semaphore"];

fn succeeded(o: &Operation) -> bool {
    matches!(&o.outcome, Some(Outcome::Ok { value }) if !matches!(value, Value::Error { .. }))
}

/// After the heal, at least `min` operations (recipe-level ones, or any
/// when the run has none) completed successfully.
pub fn progress(h: &History, ops: &[Operation], p: &Params, min: u64) -> CheckResult {
    let mut r = CheckResult::new("progress");
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
            "no-progress",
            format!("only {done} operation(s) succeeded after the faults healed (at least {min} required)"),
        ));
    }
    r
}

fn session_end(h: &History, o: &Operation, after: Time) -> Option<Time> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Session {
                time,
                client,
                session,
                state,
                ..
            } if *client == o.client
                && Some(*session) == o.session
                && (state == "expired" || state == "closed")
                && *time > after =>
            {
                Some(*time)
            }
            _ => None,
        })
        .min()
}

fn session_closed_commit(h: &History, o: &Operation, after: Time) -> Option<Time> {
    let s = o.session?;
    h.events.iter().find_map(|e| match e {
        Event::Commit {
            time,
            txn: TxnRecord::CloseSession { session, .. },
            ..
        } if *session == s && *time >= after => Some(*time),
        _ => None,
    })
}

fn last_alive(h: &History, ops: &[Operation], a: &Operation, floor: Time, before: Time) -> Time {
    let from_ops = ops
        .iter()
        .filter(|o| o.client == a.client && o.session == a.session && succeeded(o))
        .filter_map(|o| o.completed)
        .filter(|t| *t < before);
    let from_events = h.events.iter().filter_map(|e| match e {
        Event::Session {
            time,
            client,
            session,
            state,
            ..
        } if *client == a.client && Some(*session) == a.session && state.starts_with("connected") && *time < before => {
            Some(*time)
        }
        _ => None,
    });
    from_ops.chain(from_events).fold(floor, Time::max)
}

/// At no instant more than `permits` leases are definitely held. A lease
/// is held from its `Acquired` completion to the `Returned` invocation, or
/// the first sign its session ended.
pub fn semaphore(h: &History, ops: &[Operation], permits: u32) -> CheckResult {
    let mut r = CheckResult::new("semaphore");
    let mut edges: Vec<(Time, i32, u64)> = Vec::new();
    for a in ops {
        let Op::Acquired { semaphore } = &a.op else { continue };
        let (true, Some(start)) = (succeeded(a), a.completed) else {
            continue;
        };
        let ret = ops
            .iter()
            .filter(|x| x.client == a.client && x.invoked >= start)
            .find(|x| matches!(&x.op, Op::Returned { semaphore: s } if s == semaphore));
        let mut end = ret.map_or(Time::MAX, |x| x.invoked);
        // The server ended the session (its ephemeral lease node went with
        // it) at the commit of its CloseSession, whenever the client noticed.
        if let Some(tc) = session_closed_commit(h, a, start) {
            end = end.min(tc.max(start));
        }
        if let Some(te) = session_end(h, a, start).filter(|te| *te < end) {
            // The server may have expired the session well before the
            // client noticed: the hold is definite only up to the
            // session's last sign of life.
            end = last_alive(h, ops, a, start, te);
        }
        if end > start {
            edges.push((start, 1, a.id));
            edges.push((end, -1, a.id));
        }
    }
    edges.sort_by_key(|(t, d, _)| (*t, *d));
    let mut held = 0i64;
    let mut worst = 0i64;
    for (t, d, id) in edges {
        held += d as i64;
        worst = worst.max(held);
        if d > 0 && held > permits as i64 {
            r.violation(
                Violation::new(
                    "too-many-leases",
                    format!(
                        "{held} leases definitely held at {} ms with {permits} permits (op {id})",
                        t / 1_000_000
                    ),
                )
                .ops([id])
                .times([t]),
            );
        }
    }
    r.figure("max_concurrent_leases", worst as f64);
    r
}
