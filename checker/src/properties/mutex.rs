//! Mutual exclusion: no two clients definitely hold a lock at once. A hold
//! runs from the Acquire's completion to the client's next Release's
//! invocation. An unknown release still ends the hold no earlier than its
//! invocation; a session expiry ends it at an uncertain time, so the hold is
//! only definite up to the session's last sign of life, and a hold ends no
//! later than the commit of its session's CloseSession (the server deleted
//! the holder's ephemeral lock node then, whenever the client noticed; a
//! holder acting after that is fencing's business). Shared holds
//! (`Acquire { shared: true }`) may overlap each other, never an exclusive
//! one. Also measures the herd effect: watch notifications (NodeDeleted /
//! NodeChildrenChanged) delivered between a release and the next acquire.
//!
//! And the other half of a lock without a grace (meta `hold_grace` =
//! `none`, as zkdst's lock, read/write lock and revocable lock record it):
//! a hold lasts until its session ends or its node is deleted, whatever
//! the connection does. A `HoldLost` report (the guard said "lost") at a
//! time when the session's CloseSession had not committed, its client had
//! not been told Expired or Closed, and its lock node (the token's czxid)
//! was still there, is `lost-while-held`.
//!
//! An acquire waits on watches, not by polling ([`super::busy_wait`]), an
//! acquire that gave up waiting must have queued ([`super::gave_up`]),
//! a holder stops writing once told its session ended
//! ([`super::held_after_end`]), a guard names the node its hold stands on ([`super::hold_node`]), and
//! reports its hold suspended exactly while disconnected
//! ([`super::hold_state`]) and revocation only once requested
//! ([`super::revoke_state`]).

use std::collections::BTreeMap;

use crate::history::{ClientId, Event, History, Op, OpId, Operation, Time};

use super::client_states::SessionStates;
use super::common::{describe, shows_session_alive, succeeded, with_operations};
use super::result::{ms, CheckResult, Violation};
use super::sessions::SessionIndex;
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "mutex";

#[derive(Debug, Clone)]
struct Hold {
    client: ClientId,
    acquire: OpId,
    release: Option<OpId>,
    start: Time,
    end: Time,
    shared: bool,
    why_end: String,
}

fn holds(ops: &[Operation], sessions: &SessionIndex) -> BTreeMap<String, Vec<Hold>> {
    // Each client's releases of each lock, in the order of `ops`.
    let mut releases: BTreeMap<(ClientId, &str), Vec<&Operation>> = BTreeMap::new();
    for r in ops {
        if let Op::Release { lock } = &r.op {
            releases.entry((r.client, lock.as_str())).or_default().push(r);
        }
    }
    let mut out: BTreeMap<String, Vec<Hold>> = BTreeMap::new();
    for a in ops {
        let Op::Acquire { lock, shared } = &a.op else {
            continue;
        };
        let (true, Some(start)) = (succeeded(a), a.completed) else {
            continue;
        };
        let release = releases
            .get(&(a.client, lock.as_str()))
            .and_then(|rs| rs.iter().find(|r| r.invoked >= start))
            .copied();
        let mut end = release.map_or(Time::MAX, |r| r.invoked);
        let mut why_end = release.map_or_else(
            || "still held at the end".to_string(),
            |r| format!("release op {} invoked", r.id),
        );
        if let Some(tc) = sessions.closed_commit(a.session, a.invoked).filter(|tc| *tc < end) {
            end = tc.max(start);
            why_end = format!("its session's CloseSession committed at {}", ms(tc));
        }
        if let Some(te) = sessions.end_after(a.client, a.session, start).filter(|te| *te < end) {
            end = sessions.last_alive(a.client, a.session, start, te, shows_session_alive);
            why_end = format!("session ended (seen at {}); last sign of life", ms(te));
        }
        out.entry(lock.clone()).or_default().push(Hold {
            client: a.client,
            acquire: a.id,
            release: release.map(|r| r.id),
            start,
            end,
            shared: *shared,
            why_end,
        });
    }
    out
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], _p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let by_id: BTreeMap<OpId, &Operation> = ops.iter().map(|o| (o.id, o)).collect();
    // One index of sessions for the holds and the losses, one of what each
    // client saw for the checks of what a holder knew.
    let sessions = SessionIndex::new(h, ops);
    let states = SessionStates::of(h);
    let all = holds(ops, &sessions);
    for (lock, mut hs) in all {
        hs.sort_by_key(|x| x.start);
        for i in 0..hs.len() {
            for j in i + 1..hs.len() {
                let (a, b) = (&hs[i], &hs[j]);
                if b.start >= a.end {
                    continue;
                }
                if a.client == b.client || (a.shared && b.shared) || b.start >= b.end {
                    continue;
                }
                let (from, to) = (b.start, a.end.min(b.end));
                let kind = if a.shared || b.shared {
                    ViolationKind::RwlockOverlap
                } else {
                    ViolationKind::MutexOverlap
                };
                let d = |x: &Hold| {
                    let op = by_id.get(&x.acquire).map(|o| describe(o)).unwrap_or_default();
                    format!(
                        "client {} ({}) held it from {} to {} ({})",
                        x.client,
                        op,
                        ms(x.start),
                        ms(x.end),
                        x.why_end
                    )
                };
                r.violation(
                    Violation::new(
                        kind,
                        format!(
                            "lock {lock} had two holders from {} to {}: {}; {}",
                            ms(from),
                            ms(to),
                            d(a),
                            d(b)
                        ),
                    )
                    .ops([a.acquire, b.acquire].into_iter().chain(a.release).chain(b.release))
                    .clients([a.client, b.client])
                    .times([from, to]),
                );
            }
        }
    }
    herd(h, &ops, &mut r);
    if h.meta.get("hold_grace").is_some_and(|g| g == "none") {
        losses_while_held(h, ops, &sessions, &mut r);
    }
    super::gave_up::check_unqueued(h, ops, &mut r);
    let waits = ops.iter().filter(|o| matches!(o.op, Op::Acquire { .. }));
    super::busy_wait::check_into(h, ops, waits, super::busy_wait::acquire_dir, &mut r);
    super::held_after_end::check_into(ops, &states, &mut r);
    super::hold_node::check_into(h, ops, &mut r);
    super::hold_polls::check_into(h, ops, &mut r);
    super::hold_state::check_into(ops, &states, &mut r);
    super::revoke_state::check_into(h, ops, &mut r);
    r
}

/// `HoldLost` reports no session end or node deletion explains.
fn losses_while_held(h: &History, ops: &[Operation], sessions: &SessionIndex, r: &mut CheckResult) {
    let nodes = super::common::node_ends(h);
    for o in ops {
        let (Op::HoldLost { lock, token }, Some(session)) = (&o.op, o.session) else {
            continue;
        };
        let t = o.invoked;
        let explained = sessions.over_by(o.client, Some(session), t) || nodes.get(token).is_some_and(|&gone| gone <= t);
        if explained {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::LostWhileHeld,
                format!(
                    "lock {lock}: the recipe told client {} at {} that its hold (token {token}) was lost, yet its \
                     session {session:#x} had not ended and its lock node was still there: {}",
                    o.client,
                    ms(t),
                    describe(o)
                ),
            )
            .ops([o.id])
            .clients([o.client])
            .times([t]),
        );
    }
}

/// Notifications per release: NodeDeleted / NodeChildrenChanged watch
/// events delivered between a release's invocation and the next acquire's
/// completion on the same lock (for path-named locks, only events under it).
fn herd(h: &History, ops: &[Operation], r: &mut CheckResult) {
    // Completions of successful acquires per lock, and the relevant watch
    // events, each sorted by time once (not scanned per release).
    let mut acquired: BTreeMap<&str, Vec<Time>> = BTreeMap::new();
    for a in ops {
        if let (Op::Acquire { lock, .. }, true, Some(t)) = (&a.op, succeeded(a), a.completed) {
            acquired.entry(lock.as_str()).or_default().push(t);
        }
    }
    for v in acquired.values_mut() {
        v.sort_unstable();
    }
    let mut events: Vec<(Time, Option<&str>)> = h
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Watch { time, event, path, .. } => {
                let kind = event.to_ascii_lowercase();
                let relevant = kind.contains("nodedeleted")
                    || kind.contains("nodechildrenchanged")
                    || kind == "deleted"
                    || kind == "children_changed";
                relevant.then_some((*time, path.as_deref()))
            }
            _ => None,
        })
        .collect();
    events.sort_by_key(|e| e.0);
    let (mut releases, mut notified) = (0usize, 0usize);
    for rel in ops {
        let Op::Release { lock } = &rel.op else {
            continue;
        };
        if !succeeded(rel) {
            continue;
        }
        let next = acquired
            .get(lock.as_str())
            .and_then(|ts| ts.get(ts.partition_point(|t| *t < rel.invoked)));
        let Some(&until) = next else { continue };
        releases += 1;
        let window = &events[events.partition_point(|e| e.0 < rel.invoked)..events.partition_point(|e| e.0 <= until)];
        notified += window
            .iter()
            .filter(|(_, path)| !lock.starts_with('/') || path.is_none_or(|p| p.starts_with(lock.as_str())))
            .count();
    }
    if releases > 0 {
        r.figure("releases_measured", releases as f64);
        r.figure("notifications_per_release", notified as f64 / releases as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{SessionState, TxnRecord, Value};
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn acq(shared: bool) -> Op {
        Op::Acquire {
            lock: "/lock".into(),
            shared,
        }
    }
    fn rel() -> Op {
        Op::Release { lock: "/lock".into() }
    }
    fn tok(t: i64) -> Value {
        Value::Token { token: t }
    }

    #[test]
    fn sequential_holders_pass_and_herd_is_measured() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acq(false), tok(1));
        b.ok(20, 22, 1, rel(), Value::Unit);
        b.ok(5, 25, 2, acq(false), tok(2));
        b.watch(21, 2, "NodeDeleted", "/lock/n-1");
        b.watch(21, 3, "NodeDeleted", "/lock/n-1");
        b.watch(21, 4, "NodeChildrenChanged", "/lock");
        b.watch(21, 4, "NodeDataChanged", "/lock");
        b.watch(21, 4, "NodeDeleted", "/other");
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["notifications_per_release"], 3.0);
    }

    #[test]
    fn a_waiter_polling_the_lock_directory_is_busy_wait() {
        let history = |deletes: u64| {
            let mut b = Builder::new();
            b.commit(
                0,
                1,
                TxnRecord::Create {
                    path: "/lock/n-1".into(),
                    data: Default::default(),
                    ephemeral_owner: 0,
                    session: 0,
                },
            );
            let a = b.invoke(10, 2, acq(false));
            // A predecessor deleted `deletes` times while the waiter
            // listed the lock directory 12 times.
            for z in 0..deletes {
                b.commit(
                    11 + z,
                    2 + z as i64,
                    TxnRecord::Delete {
                        path: "/lock/n-1".into(),
                    },
                );
            }
            for t in 0..12 {
                let children = Value::Children {
                    children: Default::default(),
                    stat: Default::default(),
                };
                let list = Op::GetChildren {
                    path: "/lock".into(),
                    watch: false,
                };
                b.ok(20 + t, 20 + t, 2, list, children);
            }
            b.complete(a, 40, crate::history::Outcome::Ok { value: tok(2) });
            b.build()
        };
        // Each listing follows a deletion it could have been woken by...
        assert_eq!(check(&history(4), &Params::default()).verdict, Verdict::Pass);
        // ...or nothing could have woken it.
        assert_eq!(check(&history(0), &Params::default()).kinds(), vec!["busy-wait"]);
    }

    #[test]
    fn two_holders_fail_with_times() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acq(false), tok(1));
        b.ok(5, 15, 2, acq(false), tok(2));
        b.ok(30, 31, 1, rel(), Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["mutex-overlap"]);
        let v = &r.violations[0];
        assert!(v.explanation.contains("from 15 ms to 30 ms"), "{}", v.explanation);
        assert_eq!(v.clients, vec![1, 2]);
    }

    #[test]
    fn expiry_makes_the_end_uncertain_no_false_alarm() {
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acq(false));
        b.complete(a, 10, crate::history::Outcome::Ok { value: tok(1) });
        b.fault(12, "partition-halves");
        b.session(40, 1, 7, SessionState::Expired);
        b.ok(30, 35, 2, acq(false), tok(2));
        b.info(50, 55, 1, rel());
        // The expired holder still writes to the resource: the resource's
        // reply is no sign that its session was alive (fencing's business).
        let w = b.invoke_s(
            36,
            1,
            Some(7),
            Op::FencedWrite {
                resource: "db".into(),
                token: 1,
            },
        );
        b.complete(w, 37, crate::history::Outcome::Ok { value: Value::Unit });
        let r = check(&b.clone_build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        // But a ZooKeeper reply to the holder's session after client 2
        // acquired (38 ms) proves it was still alive then: an overlap.
        let z = b.invoke_s(
            36,
            1,
            Some(7),
            Op::Exists {
                path: "/x".into(),
                watch: false,
            },
        );
        b.complete(
            z,
            38,
            crate::history::Outcome::Ok {
                value: Value::Stat { stat: None },
            },
        );
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["mutex-overlap"], "{r:#?}");
    }

    #[test]
    fn a_hold_ends_at_its_sessions_close_commit() {
        use crate::history::TxnRecord;
        // Client 1 holds; paused past its timeout, the server expires its
        // session (deleting the lock node); client 2 then acquires; client 1
        // invokes its Release only on resume. Legal: the old hold ended at
        // the CloseSession commit.
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acq(false));
        b.complete(a, 10, crate::history::Outcome::Ok { value: tok(1) });
        b.commit(
            20,
            0x1_0000_0005,
            TxnRecord::CloseSession {
                session: 7,
                expired: true,
                deleted: vec!["/lock/n-1".into()],
            },
        );
        b.ok(15, 30, 2, acq(false), tok(2));
        b.ok(40, 41, 2, rel(), Value::Unit);
        b.info(50, 55, 1, rel());
        // An acquire that "completes" after its session was already closed
        // (paused between the read and the return) held nothing.
        let c = b.invoke_s(12, 3, Some(9), acq(false));
        b.commit(
            33,
            0x1_0000_0006,
            TxnRecord::CloseSession {
                session: 9,
                expired: true,
                deleted: vec!["/lock/n-2".into()],
            },
        );
        b.complete(c, 35, crate::history::Outcome::Ok { value: tok(3) });
        b.ok(34, 36, 2, acq(false), tok(4));
        b.info(37, 60, 3, rel());
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    }

    #[test]
    fn another_sessions_close_does_not_end_a_hold() {
        use crate::history::TxnRecord;
        let mut b = Builder::new();
        let a = b.invoke_s(0, 1, Some(7), acq(false));
        b.complete(a, 10, crate::history::Outcome::Ok { value: tok(1) });
        b.commit(
            20,
            0x1_0000_0005,
            TxnRecord::CloseSession {
                session: 8,
                expired: true,
                deleted: vec![],
            },
        );
        b.ok(15, 30, 2, acq(false), tok(2));
        b.ok(50, 55, 1, rel(), Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["mutex-overlap"]);
    }

    #[test]
    fn shared_holders_may_overlap_but_not_with_a_writer() {
        let mut b = Builder::new();
        b.ok(0, 10, 1, acq(true), tok(1));
        b.ok(0, 11, 2, acq(true), tok(2));
        let r = check(&b.clone_build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass);
        b.ok(0, 12, 3, acq(false), tok(3));
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["rwlock-overlap", "rwlock-overlap"]);
    }

    /// Client 1 (session 0xa) holds `/l` with token 7 (its node
    /// `/l/lock-0000000001`, czxid 7) from 2 ms, is Disconnected at 10 ms,
    /// and the recipe reports the hold lost at `lost_at`.
    fn lost_hold(lost_at: u64) -> Builder {
        let mut b = Builder::new();
        b.session(0, 1, 0xa, crate::history::SessionState::SyncConnected);
        b.commit(
            1,
            7,
            TxnRecord::Create {
                path: "/l/lock-0000000001".into(),
                data: Default::default(),
                ephemeral_owner: 0xa,
                session: 0xa,
            },
        );
        let id = b.invoke_s(
            0,
            1,
            Some(0xa),
            Op::Acquire {
                lock: "/l".into(),
                shared: false,
            },
        );
        b.complete(
            id,
            2,
            crate::history::Outcome::Ok {
                value: crate::history::Value::Token { token: 7 },
            },
        );
        b.session(10, 1, 0xa, crate::history::SessionState::Disconnected);
        let id = b.invoke_s(
            lost_at,
            1,
            Some(0xa),
            Op::HoldLost {
                lock: "/l".into(),
                token: 7,
            },
        );
        b.complete(
            id,
            lost_at,
            crate::history::Outcome::Ok {
                value: crate::history::Value::Unit,
            },
        );
        b
    }

    fn no_grace(b: Builder) -> History {
        let mut h = b.build();
        h.meta.insert("hold_grace".into(), "none".into());
        h
    }

    #[test]
    fn a_hold_given_up_while_its_session_and_node_live_fails() {
        let r = check(&no_grace(lost_hold(12)), &Params::default());
        assert_eq!(r.kinds(), vec!["lost-while-held"], "{r:#?}");
        // A recipe with a grace is not held to it.
        assert_eq!(check(&lost_hold(12).build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn a_hold_lost_with_its_session_or_node_passes() {
        // The session's end committed first.
        let mut b = lost_hold(30);
        b.commit(
            20,
            9,
            TxnRecord::CloseSession {
                session: 0xa,
                expired: true,
                deleted: vec!["/l/lock-0000000001".into()],
            },
        );
        assert_eq!(check(&no_grace(b), &Params::default()).verdict, Verdict::Pass);
        // The client was told Expired first (before the close committed).
        let mut b = lost_hold(30);
        b.session(25, 1, 0xa, crate::history::SessionState::Expired);
        assert_eq!(check(&no_grace(b), &Params::default()).verdict, Verdict::Pass);
        // Someone deleted the lock node first.
        let mut b = lost_hold(30);
        b.commit(
            20,
            9,
            TxnRecord::Delete {
                path: "/l/lock-0000000001".into(),
            },
        );
        assert_eq!(check(&no_grace(b), &Params::default()).verdict, Verdict::Pass);
    }
}
