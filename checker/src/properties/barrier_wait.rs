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
