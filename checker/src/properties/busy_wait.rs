//! A waiting recipe call waits on watches, not by polling: each re-listing
//! of the directory it waits in follows something that could have woken
//! it — a change of that directory's children (a commit creating or
//! deleting one) or an event of its own session (a reconnect re-checks).
//! A call whose listings of one directory exceed twice those wake-ups,
//! plus a little slack, is `busy-wait`: a watch never set or never waited
//! on, a wait that returns at once. Only answered listings count: one that
//! failed (ConnectionLoss) never reached the tree, and its retries are the
//! retry policy's business, and neither does a listing sent as the client's
//! own sync of that directory answered: that is a lookup for
//! the client's own node (`find_own`, as after an ambiguous create or in a
//! background delete of an abandoned node), which a wait never makes.
//! Judged on the recipe's own calls as the history records them, with the
//! servers' commit log. The barrier's
//! enter and leave, every lock, read/write lock and revocable lock acquire,
//! and every semaphore acquire are judged so.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{ClientId, History, Op, Operation, Time, TxnRecord};
use crate::zk_consistency::tree::parent_of;

use super::common::{by_client, describe, has_commit_log, ok_value, session_event_times};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// How long after a reply a call the caller sends on reading it can be
/// invoked: the client records the reply as it reads it off the
/// connection, and its caller runs a few scheduler steps later, at the same
/// instant as far as the network goes (a round trip takes milliseconds).
const SENT_ON_REPLY_NS: Time = 10_000;

/// The directory a path lies in ("" for the root, which no wait lists).
fn parent(path: &str) -> &str {
    parent_of(path).unwrap_or("")
}

/// Commit times at which each directory's children changed.
fn child_changes(h: &History) -> BTreeMap<&str, Vec<Time>> {
    let mut out: BTreeMap<&str, Vec<Time>> = BTreeMap::new();
    for (t, _, txn) in h.committed_parts() {
        match txn {
            TxnRecord::Create { path, .. } | TxnRecord::Delete { path } => out.entry(parent(path)).or_default().push(t),
            TxnRecord::CloseSession { deleted, .. } => {
                deleted.iter().for_each(|p| out.entry(parent(p)).or_default().push(t))
            }
            _ => {}
        }
    }
    out
}

/// The directory a lock, read/write lock or semaphore acquire waits in:
/// the name it acquires, where that is a path.
pub fn acquire_dir(o: &Operation) -> Option<&str> {
    match &o.op {
        Op::Acquire { lock: dir, .. } | Op::Acquired { semaphore: dir } if dir.starts_with('/') => Some(dir),
        _ => None,
    }
}

/// Adds a `busy-wait` violation to `r` for each of `waits` (recipe calls
/// that wait in directories under `under(call)`) that listed one such
/// directory more often than its wake-ups explain. `ops`: every operation.
pub fn check_into<'a>(
    h: &History,
    ops: &[Operation],
    waits: impl Iterator<Item = &'a Operation>,
    under: fn(&Operation) -> Option<&str>,
    r: &mut CheckResult,
) {
    if !has_commit_log(h) {
        return;
    }
    let changes = child_changes(h);
    let session_times = session_event_times(h);
    // (client, directory, instant) of every answered sync: a listing sent
    // then is a lookup, not a wait's re-check.
    let synced: BTreeSet<(ClientId, &str, Time)> = ops
        .iter()
        .filter_map(|o| match (&o.op, o.completed) {
            (Op::Sync { path }, Some(t)) if ok_value(o).is_some() => Some((o.client, path.as_str(), t)),
            _ => None,
        })
        .collect();
    let after_sync = |o: &Operation, dir: &str| {
        let from = o.invoked.saturating_sub(SENT_ON_REPLY_NS);
        synced
            .range((o.client, dir, from)..=(o.client, dir, o.invoked))
            .next()
            .is_some()
    };
    let calls = by_client(ops.iter().filter(|o| match &o.op {
        Op::GetChildren { path, .. } => ok_value(o).is_some() && !after_sync(o, path),
        _ => false,
    }));
    let count = |times: Option<&Vec<Time>>, from: Time, to: Time| {
        times.map_or(0, |ts| ts.iter().filter(|t| (from..=to).contains(*t)).count())
    };
    for w in waits {
        let (Some(dir), Some(to)) = (under(w), w.completed) else {
            continue;
        };
        let Some(listings) = calls.get(&w.client) else { continue };
        let mut per_dir: BTreeMap<&str, usize> = BTreeMap::new();
        for l in listings
            .iter()
            .filter(|l| l.invoked >= w.invoked && l.completed.is_some_and(|t| t <= to))
        {
            let Op::GetChildren { path, .. } = &l.op else { continue };
            if path
                .strip_prefix(dir)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            {
                *per_dir.entry(path).or_default() += 1;
            }
        }
        let session_events = count(session_times.get(&w.client), w.invoked, to);
        for (path, n) in per_dir {
            let wakeups = count(changes.get(path), w.invoked, to) + session_events;
            if super::node_reads::polled(n, wakeups) {
                r.violation(
                    Violation::new(
                        ViolationKind::BusyWait,
                        format!(
                            "{} listed {path} {n} times, though only {wakeups} change(s) of its children and session event(s) could have woken it",
                            describe(w)
                        ),
                    )
                    .ops([w.id])
                    .clients([w.client]),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, Value};
    use crate::properties::testkit::Builder;

    fn leave() -> Op {
        Op::BarrierLeave { barrier: "/b".into() }
    }
    fn list() -> Op {
        Op::GetChildren {
            path: "/b/round-1".into(),
            watch: false,
        }
    }
    fn children() -> Value {
        Value::Children {
            children: Default::default(),
            stat: Default::default(),
        }
    }
    fn kinds(b: &Builder) -> Vec<String> {
        let h = b.clone_build();
        let ops = crate::properties::common::operations(&h, "t").unwrap();
        let mut r = CheckResult::new("t");
        let waits = ops.iter().filter(|o| matches!(o.op, Op::BarrierLeave { .. }));
        check_into(
            &h,
            &ops,
            waits,
            |o| match &o.op {
                Op::BarrierLeave { barrier } => Some(barrier),
                _ => None,
            },
            &mut r,
        );
        r.kinds().into_iter().map(String::from).collect()
    }

    #[test]
    fn listings_beyond_the_wakeups_are_flagged() {
        let mut b = Builder::new();
        b.commit(
            0,
            1,
            TxnRecord::Create {
                path: "/b/round-1/x".into(),
                data: Data::default(),
                ephemeral_owner: 0,
                session: 0,
            },
        );
        let id = b.invoke(10, 1, leave());
        // Three changes of the round's children: up to 2 * 3 + 4 listings.
        for (t, z) in [(20, 2), (30, 3), (40, 4)] {
            b.commit(
                t,
                z,
                TxnRecord::Delete {
                    path: "/b/round-1/x".into(),
                },
            );
        }
        for t in 0..10 {
            b.ok(11 + t, 11 + t, 1, list(), children());
        }
        b.complete(id, 100, crate::history::Outcome::Ok { value: Value::Unit });
        assert_eq!(kinds(&b), Vec::<String>::new());
        // One more listing with nothing to wake it: polling.
        let mut c = Builder::new();
        c.commit(
            0,
            1,
            TxnRecord::Create {
                path: "/elsewhere/x".into(),
                data: Data::default(),
                ephemeral_owner: 0,
                session: 0,
            },
        );
        let id = c.invoke(10, 1, leave());
        for t in 0..5 {
            c.ok(11 + t, 11 + t, 1, list(), children());
        }
        // Another client's listings are not this call's.
        for t in 0..50 {
            c.ok(11 + t, 11 + t, 2, list(), children());
        }
        c.complete(id, 100, crate::history::Outcome::Ok { value: Value::Unit });
        assert_eq!(kinds(&c), vec!["busy-wait"]);
    }

    /// A commit outside the barrier, then client 1's leave invoked at 10:
    /// nothing will wake it.
    fn quiet_leave() -> (Builder, crate::history::OpId) {
        let mut b = Builder::new();
        b.commit(
            0,
            1,
            TxnRecord::Create {
                path: "/elsewhere/x".into(),
                data: Data::default(),
                ephemeral_owner: 0,
                session: 0,
            },
        );
        let id = b.invoke(10, 1, leave());
        (b, id)
    }

    #[test]
    fn listings_lost_to_connection_loss_are_retries_not_polling() {
        let history = |answered: bool| {
            let (mut b, id) = quiet_leave();
            // Twenty listings, then one more, with nothing to wake the call.
            for t in 0..20 {
                if answered {
                    b.ok(11 + t, 11 + t, 1, list(), children());
                } else {
                    b.info(11 + t, 11 + t, 1, list());
                }
            }
            b.ok(40, 41, 1, list(), children());
            b.complete(id, 100, crate::history::Outcome::Ok { value: Value::Unit });
            b
        };
        // Retries that never reached a server are not polling...
        assert_eq!(kinds(&history(false)), Vec::<String>::new());
        // ...the same listings answered are.
        assert_eq!(kinds(&history(true)), vec!["busy-wait"]);
    }

    #[test]
    fn listings_sent_as_the_clients_own_sync_answered_are_lookups_not_polling() {
        // Twenty listings with nothing to wake the call, each sent as a
        // sync of the same directory answered (`gap` = 0: a find-own
        // lookup) or a tick after it (a wait's listing).
        let history = |gap: u64, sync_path: &str| {
            let (mut b, id) = quiet_leave();
            for i in 0..20 {
                let t = 11 + 3 * i;
                b.ok(t, t + 1, 1, Op::Sync { path: sync_path.into() }, Value::Unit);
                b.ok(t + 1 + gap, t + 2 + gap, 1, list(), children());
            }
            b.complete(id, 100, crate::history::Outcome::Ok { value: Value::Unit });
            b
        };
        assert_eq!(kinds(&history(0, "/b/round-1")), Vec::<String>::new());
        // The same listings sent a tick after the sync answered poll...
        assert_eq!(kinds(&history(1, "/b/round-1")), vec!["busy-wait"]);
        // ...as do listings sent as a sync of another directory answered.
        assert_eq!(kinds(&history(0, "/b")), vec!["busy-wait"]);
    }

    #[test]
    fn acquires_wait_in_the_directory_they_name() {
        let at = |op: Op| {
            let mut b = Builder::new();
            b.invoke(1, 1, op);
            let h = b.build();
            let ops = crate::properties::common::operations(&h, "t").unwrap();
            acquire_dir(&ops[0]).map(str::to_string)
        };
        let lock = |name: &str| Op::Acquire {
            lock: name.into(),
            shared: false,
        };
        assert_eq!(at(lock("/locks/l")), Some("/locks/l".to_string()));
        assert_eq!(at(Op::Acquired { semaphore: "/s".into() }), Some("/s".to_string()));
        // A name that is not a path names no directory.
        assert_eq!(at(lock("l")), None);
        assert_eq!(at(leave()), None);
    }
}
