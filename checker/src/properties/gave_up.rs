//! A timed acquire that gave up had queued. An acquire, lease or campaign
//! recorded as [`GAVE_UP`] promises it waited its turn and the time limit
//! ran out: so, when its session was connected throughout (a create cannot
//! be sent while connecting, and the limit may rightly cut that wait), it
//! must have created a node in the lock's, semaphore's or election's
//! directory within its span. One that gave up without ever queueing is
//! `gave-up-unqueued`: the application was told "busy" about a lock it
//! never asked for.
//!
//! Judged only where the history records the recipe's calls: a workload
//! over a client library's own lock (whose calls are not recorded) says so
//! with the meta [`RECIPE_CALLS`] = `unrecorded`.

use crate::history::{History, Op, Operation, Outcome};

use super::common::{by_client, connected_throughout, describe};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// The error text of an acquire that gave up waiting (the workload's word).
pub const GAVE_UP: &str = "gave up waiting (cancelled)";

/// History meta key: `unrecorded` when the recipe's own ZooKeeper calls are
/// not in the history.
pub const RECIPE_CALLS: &str = "recipe_calls";

/// The history does not record the recipe's ZooKeeper calls as operations
/// (a client library's own recipe, an external workload's record): checks
/// that judge a recipe operation by its calls stand aside.
pub fn calls_unrecorded(h: &History) -> bool {
    h.meta.get(RECIPE_CALLS).is_some_and(|v| v == "unrecorded")
}

/// The directory a waiting op queues in.
fn queue_dir(op: &Op) -> Option<&str> {
    match op {
        Op::Acquire { lock, .. } => Some(lock),
        Op::Acquired { semaphore } => Some(semaphore),
        Op::Campaign { election } => Some(election),
        _ => None,
    }
}

/// Adds a `gave-up-unqueued` violation to `r` for each such op in `ops`.
pub fn check_unqueued(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if calls_unrecorded(h) {
        return;
    }
    let creates = by_client(ops.iter().filter(|x| matches!(x.op, Op::Create { .. })));
    let mut unqueued = 0;
    for o in ops {
        let Some(dir) = queue_dir(&o.op) else { continue };
        let (Some(done), Some(Outcome::Fail { error })) = (o.completed, &o.outcome) else {
            continue;
        };
        if error != GAVE_UP || !connected_throughout(h, o) {
            continue;
        }
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let queued = creates.get(&o.client).into_iter().flatten().any(|c| {
            matches!(&c.op, Op::Create { path, .. } if path.starts_with(&prefix))
                && c.invoked >= o.invoked
                && c.invoked <= done
        });
        if queued {
            continue;
        }
        unqueued += 1;
        r.violation(
            Violation::new(
                ViolationKind::GaveUpUnqueued,
                format!(
                    "{} gave up waiting without creating a node under {dir}, its session connected throughout",
                    describe(o)
                ),
            )
            .ops([o.id])
            .clients([o.client])
            .times([o.invoked, done]),
        );
    }
    r.figure("gave_up_unqueued", unqueued as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CreateMode, SessionState, Stat, Value};
    use crate::properties::testkit::Builder;

    fn acq() -> Op {
        Op::Acquire {
            lock: "/locks/l".into(),
            shared: false,
        }
    }

    fn create(path: &str) -> Op {
        Op::Create {
            path: path.into(),
            data: Default::default(),
            mode: CreateMode::EphemeralSequential,
        }
    }

    fn created(path: &str) -> Value {
        Value::Created {
            path: path.into(),
            stat: Stat::default(),
        }
    }

    /// Client 1 connected (session 7) at 0; its acquire from 10 to 50 gave
    /// up, after `queue` (if any) ran inside it.
    fn gave_up(queue: impl FnOnce(&mut Builder)) -> Builder {
        let mut b = Builder::new();
        b.session(0, 1, 7, SessionState::SyncConnected);
        let id = b.invoke_s(10, 1, Some(7), acq());
        queue(&mut b);
        b.complete(id, 50, Outcome::Fail { error: GAVE_UP.into() });
        b
    }

    fn kinds(b: &Builder) -> Vec<String> {
        let h = b.clone_build();
        let ops = h.operations().unwrap();
        let mut r = CheckResult::new("t");
        check_unqueued(&h, &ops, &mut r);
        r.kinds().into_iter().map(String::from).collect()
    }

    #[test]
    fn a_give_up_without_a_create_fails() {
        assert_eq!(kinds(&gave_up(|_| {})), vec!["gave-up-unqueued"]);
        // A create elsewhere, or by another client, does not count.
        let elsewhere = gave_up(|b| {
            b.ok(
                11,
                12,
                1,
                create("/locks/other/x-lock-"),
                created("/locks/other/x-lock-0000000001"),
            );
            b.ok(
                11,
                12,
                2,
                create("/locks/l/y-lock-"),
                created("/locks/l/y-lock-0000000002"),
            );
        });
        assert_eq!(kinds(&elsewhere), vec!["gave-up-unqueued"]);
    }

    #[test]
    fn a_give_up_that_queued_or_was_not_connected_passes() {
        let queued = gave_up(|b| {
            b.ok(
                11,
                12,
                1,
                create("/locks/l/x-lock-"),
                created("/locks/l/x-lock-0000000001"),
            );
        });
        assert!(kinds(&queued).is_empty());
        // An unknown create (its reply lost) was still sent.
        let sent = gave_up(|b| {
            b.info(11, 12, 1, create("/locks/l/x-lock-"));
        });
        assert!(kinds(&sent).is_empty());
        // Disconnected within the span: the limit may cut the reconnect.
        let cut = gave_up(|b| b.session(20, 1, 7, SessionState::Disconnected));
        assert!(kinds(&cut).is_empty());
        // A client library's lock, whose calls the history lacks.
        let mut library = gave_up(|_| {});
        library.h.meta.insert(RECIPE_CALLS.into(), "unrecorded".into());
        assert!(kinds(&library).is_empty());
        // Any other failure is not a give-up.
        let mut b = Builder::new();
        b.session(0, 1, 7, SessionState::SyncConnected);
        let id = b.invoke_s(10, 1, Some(7), acq());
        b.complete(
            id,
            50,
            Outcome::Fail {
                error: "session lost".into(),
            },
        );
        assert!(kinds(&b).is_empty());
    }
}
