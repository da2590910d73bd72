//! A single barrier's wait keeps its word once the barrier is down. Judged
//! only for a waiter whose session was connected throughout (the recipe's
//! reads and its quorum check can then always be answered):
//! - a wait ends by passing, or (a timed wait, recorded as [`GAVE_UP`]) by
//!   its time limit; any other error is `wait-failed`: the recipe leaked an
//!   error it should have handled (a "no node" that means the barrier is
//!   down);
//! - a timed wait gives up only while the barrier may still be up: one that
//!   gave up although a removal of the barrier had completed before the
//!   wait began, with no set begun since, is `missed-removal`. The workload
//!   gives timed waits at least twice the session timeout, longer than any
//!   stall a connected session sees.

use crate::history::{History, Operation};

use super::common::{connected_throughout, describe, error_text, succeeded};
use super::gave_up::GAVE_UP;
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Adds the violations of barrier `name`'s waits to `r`; `sets`, `removes`
/// and `waits` are its operations of each kind.
pub fn check_into(
    h: &History,
    name: &str,
    sets: &[&Operation],
    removes: &[&Operation],
    waits: &[&Operation],
    r: &mut CheckResult,
) {
    for w in waits {
        let Some(e) = error_text(w) else { continue };
        if !connected_throughout(h, w) {
            continue;
        }
        if e != GAVE_UP {
            r.violation(
                Violation::new(
                    ViolationKind::WaitFailed,
                    format!(
                        "barrier {name}: {} failed with '{e}', its session connected throughout",
                        describe(w)
                    ),
                )
                .ops([w.id])
                .clients([w.client]),
            );
            continue;
        }
        let removed = removes
            .iter()
            .filter(|x| succeeded(x) && x.completed.is_some_and(|t| t < w.invoked))
            .max_by_key(|x| x.completed);
        let Some(removed) = removed else { continue };
        let set_again = sets
            .iter()
            .any(|s| s.invoked > removed.invoked && s.invoked < w.completed.unwrap_or(u64::MAX));
        if !set_again {
            r.violation(
                Violation::new(
                    ViolationKind::MissedRemoval,
                    format!(
                        "barrier {name}: {} gave up waiting, though {} had removed the barrier before it began",
                        describe(w),
                        describe(removed)
                    ),
                )
                .ops([removed.id, w.id])
                .clients([w.client]),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::history::{Op, Outcome, SessionState, Value};
    use crate::properties::barrier::check;
    use crate::properties::testkit::Builder;
    use crate::properties::{Params, Verdict};

    use super::GAVE_UP;

    fn set() -> Op {
        Op::BarrierSet { barrier: "b".into() }
    }
    fn remove() -> Op {
        Op::BarrierRemove { barrier: "b".into() }
    }
    fn wait() -> Op {
        Op::BarrierWait { barrier: "b".into() }
    }
    /// Client 0 sets at 0-1 and removes at 10-11; client 1 is connected
    /// from 0 with session 7.
    fn base() -> Builder {
        let mut b = Builder::new();
        b.session(0, 1, 7, SessionState::SyncConnected);
        b.ok(0, 1, 0, set(), Value::Unit);
        b.ok(10, 11, 0, remove(), Value::Unit);
        b
    }
    fn waiting(b: &mut Builder, t0: u64, t1: u64, outcome: Outcome) {
        let id = b.invoke_s(t0, 1, Some(7), wait());
        b.complete(id, t1, outcome);
    }
    fn gave_up() -> Outcome {
        Outcome::Fail { error: GAVE_UP.into() }
    }
    fn kinds(b: Builder) -> Vec<String> {
        let r = check(&b.build(), &Params::default());
        r.kinds().into_iter().map(String::from).collect()
    }

    #[test]
    fn a_wait_that_fails_while_connected_is_flagged() {
        let mut b = base();
        waiting(
            &mut b,
            2,
            3,
            Outcome::Info {
                error: "zookeeper: NoNode (-101)".into(),
            },
        );
        assert_eq!(kinds(b), vec!["wait-failed"]);
        // Disconnected mid-wait: the error may be the connection's.
        let mut b = base();
        b.session(2, 1, 7, SessionState::Disconnected);
        waiting(
            &mut b,
            2,
            3,
            Outcome::Info {
                error: "session lost (expired or closed)".into(),
            },
        );
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn a_timed_wait_that_gives_up_after_the_removal_is_flagged() {
        // Gave up while the barrier was up: its word kept.
        let mut b = base();
        waiting(&mut b, 2, 9, gave_up());
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // Began after the removal completed, and gave up anyway.
        let mut b = base();
        waiting(&mut b, 12, 20, gave_up());
        assert_eq!(kinds(b), vec!["missed-removal"]);
        // Set again before it ended: it may have waited on that.
        let mut b = base();
        b.ok(13, 14, 0, set(), Value::Unit);
        waiting(&mut b, 12, 20, gave_up());
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }
}
