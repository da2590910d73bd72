//! Semaphores: at no instant are more than `params.permits` leases
//! definitely held. A lease is held from its `Acquired` completion to the
//! `Returned` invocation, or to the first sign its session ended: the
//! commit of its CloseSession (the ephemeral lease node went with it), or,
//! when the client only later noticed an expiry, its session's last sign
//! of life before that. An acquire that gave up waiting must have queued
//! ([`super::gave_up`]), a lease names the node it stands on
//! ([`super::hold_node`]), and an acquire waits on watches, not by polling
//! ([`super::busy_wait`]).

use std::collections::BTreeMap;

use crate::history::{ClientId, History, Op, Operation, Outcome, Time, Value};

use super::common::with_operations;
use super::result::{CheckResult, Violation};
use super::sessions::SessionIndex;
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "semaphore";

/// Ok, and not an error reply.
fn succeeded(o: &Operation) -> bool {
    matches!(&o.outcome, Some(Outcome::Ok { value }) if !matches!(value, Value::Error { .. }))
}

/// The semaphore's permits: `params.permits`, else the history's meta
/// `permits`.
pub(super) fn permits(h: &History, p: &Params) -> Option<u32> {
    p.permits
        .or_else(|| h.meta.get("permits").and_then(|s| s.trim().parse().ok()))
}

/// History meta: the fewest leases a client's semaphore said it allows
/// (`max_leases()`). Leases beyond it break the semaphore's word to an
/// application that sized its work by it, even within the permits it was
/// built with.
pub const REPORTED_MAX_LEASES: &str = "semaphore_max_leases";

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// As [`check`], over the history's already-paired operations.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let Some(permits) = permits(h, p) else {
        r.undecided("the number of permits is unknown (params.permits, or the history's meta \"permits\")");
        return r;
    };
    let reported: Option<u32> = h.meta.get(REPORTED_MAX_LEASES).and_then(|v| v.trim().parse().ok());
    let bound = reported.map_or(permits, |n| n.min(permits));
    let sessions = SessionIndex::new(h, ops);
    // Each client's returns of each semaphore, in the order of `ops`.
    let mut returns: BTreeMap<(ClientId, &str), Vec<&Operation>> = BTreeMap::new();
    for x in ops {
        if let Op::Returned { semaphore } = &x.op {
            returns.entry((x.client, semaphore.as_str())).or_default().push(x);
        }
    }
    let mut edges: Vec<(Time, i32, u64)> = Vec::new();
    for a in ops {
        let Op::Acquired { semaphore } = &a.op else { continue };
        let (true, Some(start)) = (succeeded(a), a.completed) else {
            continue;
        };
        let ret = returns
            .get(&(a.client, semaphore.as_str()))
            .and_then(|rs| rs.iter().find(|x| x.invoked >= start));
        let mut end = ret.map_or(Time::MAX, |x| x.invoked);
        // The server ended the session (its ephemeral lease node went with
        // it) at the commit of its CloseSession, whenever the client noticed.
        // A close before the acquire returned (a holder paused between its
        // read and its return) leaves it holding nothing, as in `mutex`.
        if let Some(tc) = sessions.closed_commit(a.session, a.invoked) {
            end = end.min(tc.max(start));
        }
        let seen_end = a.session.and_then(|_| sessions.end_after(a.client, a.session, start));
        if let Some(te) = seen_end.filter(|te| *te < end) {
            // The server may have expired the session well before the
            // client noticed: the hold is definite only up to the
            // session's last sign of life.
            end = sessions.last_alive(a.client, a.session, start, te, succeeded);
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
        if d > 0 && held > bound as i64 {
            let said = match reported {
                Some(n) if n < permits => format!(", though the semaphore said max_leases() = {n}"),
                _ => String::new(),
            };
            r.violation(
                Violation::new(
                    ViolationKind::TooManyLeases,
                    format!(
                        "{held} leases definitely held at {} ms with {permits} permits{said} (op {id})",
                        t / 1_000_000
                    ),
                )
                .ops([id])
                .times([t]),
            );
        }
    }
    r.figure("max_concurrent_leases", worst as f64);
    super::gave_up::check_unqueued(h, ops, &mut r);
    super::hold_node::check_into(h, ops, &mut r);
    super::hold_polls::check_into(h, ops, &mut r);
    let waits = ops.iter().filter(|o| matches!(o.op, Op::Acquired { .. }));
    super::busy_wait::check_into(h, ops, waits, super::busy_wait::acquire_dir, &mut r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Event, Outcome, SessionState};
    use crate::properties::testkit::{Builder, MS};
    use crate::properties::Verdict;

    fn acquired() -> Op {
        Op::Acquired { semaphore: "/s".into() }
    }
    fn returned() -> Op {
        Op::Returned { semaphore: "/s".into() }
    }
    fn permits(n: u32) -> Params {
        Params {
            permits: Some(n),
            ..Params::default()
        }
    }

    #[test]
    fn overlapping_leases_beyond_the_permits_are_a_violation() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acquired(), Value::Unit);
        b.ok(5, 20, 2, acquired(), Value::Unit);
        b.ok(30, 31, 1, returned(), Value::Unit);
        b.ok(40, 41, 2, returned(), Value::Unit);
        let h = b.build();
        let r = check(&h, &permits(2));
        assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
        assert_eq!(r.figures["max_concurrent_leases"], 2.0);
        let r = check(&h, &permits(1));
        assert_eq!(r.verdict, Verdict::Violation);
        assert_eq!(r.violations[0].kind, "too-many-leases");
        assert_eq!(r.violations[0].times, vec![20 * MS]);
    }

    #[test]
    fn leases_beyond_what_the_semaphore_said_it_allows_are_a_violation() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acquired(), Value::Unit);
        b.ok(5, 20, 2, acquired(), Value::Unit);
        b.ok(30, 31, 1, returned(), Value::Unit);
        b.ok(40, 41, 2, returned(), Value::Unit);
        let mut h = b.build();
        h.meta.insert(REPORTED_MAX_LEASES.into(), "2".into());
        assert_eq!(check(&h, &permits(2)).verdict, Verdict::Pass);
        // max_leases() said 1: two leases at once break its word.
        h.meta.insert(REPORTED_MAX_LEASES.into(), "1".into());
        let r = check(&h, &permits(2));
        assert_eq!(r.verdict, Verdict::Violation);
        assert!(r.violations[0].explanation.contains("max_leases() = 1"), "{r:?}");
        // Saying more than it was built with allows nothing more.
        h.meta.insert(REPORTED_MAX_LEASES.into(), "3".into());
        assert_eq!(check(&h, &permits(1)).verdict, Verdict::Violation);
    }

    #[test]
    fn a_returned_lease_is_free_again_and_a_failed_acquire_holds_nothing() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acquired(), Value::Unit);
        b.ok(15, 16, 1, returned(), Value::Unit);
        b.ok(20, 30, 2, acquired(), Value::Unit);
        b.info(25, 35, 3, acquired());
        assert_eq!(check(&b.build(), &permits(1)).verdict, Verdict::Pass);
    }

    #[test]
    fn an_expired_session_holds_only_until_its_last_sign_of_life() {
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acquired());
        b.complete(a, 10, Outcome::Ok { value: Value::Unit });
        b.session(12, 1, 7, SessionState::SyncConnected);
        b.session(100, 1, 7, SessionState::Expired);
        b.ok(50, 60, 2, acquired(), Value::Unit);
        let h = b.build();
        assert_eq!(check(&h, &permits(1)).verdict, Verdict::Pass);
        // A sign of life after the second lease began (a reconnect of the
        // same session at 70 ms): both leases were definitely held then.
        let mut late = h.clone();
        late.events.push(Event::Session {
            time: 70 * MS,
            client: 1,
            session: 7,
            state: SessionState::SyncConnected,
            server: None,
        });
        late.events.sort_by_key(Event::time);
        let r = check(&late, &permits(1));
        assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
        assert_eq!(r.violations[0].kind, "too-many-leases");
    }

    /// Seen through zookeeper-client (`zkdst-wire replay
    /// scenarios/semaphore.toml --seed 186`): a holder paused from before
    /// its acquire returned until after its session expired "acquires" at
    /// the resume; its lease node went with the session, so it held nothing.
    #[test]
    fn an_acquire_returning_after_its_session_closed_holds_nothing() {
        use crate::history::TxnRecord;
        let close = |session: i64| TxnRecord::CloseSession {
            session,
            expired: true,
            deleted: vec![],
        };
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acquired());
        b.commit(20, 0x1_0000_0005, close(7));
        b.complete(a, 30, Outcome::Ok { value: Value::Unit });
        b.ok(25, 26, 2, acquired(), Value::Unit);
        b.ok(40, 41, 1, returned(), Value::Unit);
        b.ok(50, 51, 2, returned(), Value::Unit);
        let h = b.build();
        let r = check(&h, &permits(1));
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        // Closed only after the acquire returned: held until the close.
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acquired());
        b.complete(a, 10, Outcome::Ok { value: Value::Unit });
        b.commit(35, 0x1_0000_0005, close(7));
        b.ok(25, 30, 2, acquired(), Value::Unit);
        b.ok(50, 51, 2, returned(), Value::Unit);
        let r = check(&b.build(), &permits(1));
        assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
        assert_eq!(r.violations[0].kind, "too-many-leases");
        assert_eq!(r.violations[0].times, vec![30 * MS]);
    }

    #[test]
    fn unknown_permits_are_undecided_unless_the_history_names_them() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acquired(), Value::Unit);
        b.ok(5, 20, 2, acquired(), Value::Unit);
        let mut h = b.build();
        assert_eq!(check(&h, &Params::default()).verdict, Verdict::Unknown);
        h.meta.insert("permits".into(), "1".into());
        assert_eq!(check(&h, &Params::default()).verdict, Verdict::Violation);
    }
}
