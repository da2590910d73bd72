//! A wait for the next change of a watched value — a configuration's
//! version, a group view's zxid — (an op with `newer_than: Some(n)`, the
//! order of the value the client last saw) promises:
//! - returned: a value newer than `n` (`change-not-newer`);
//! - gave up (a definite `Fail`, the caller's timeout): the watcher held
//!   nothing newer while it waited. Its client's operation just before the
//!   wait being a plain read of the watcher's value above `n` shows that it
//!   did: a wait begun while the watcher already holds a newer value must
//!   return at once (`missed-change`). The workloads make such a read after
//!   a wait times out, then wait again briefly.

use crate::history::{Operation, Outcome};

use super::common::describe;
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// How one kind of watched value shows in the history.
pub struct Watched<'a> {
    /// What is watched, for messages ("key /config/key").
    pub subject: &'a str,
    /// What orders its values, for messages ("version", "zxid").
    pub order: &'static str,
    /// A wait's `newer_than` (`None`: not a wait).
    pub newer_than: fn(&Operation) -> Option<i64>,
    /// The order of the value a plain read (not a wait) returned.
    pub read: fn(&Operation) -> Option<i64>,
    /// The order of the value an op returned.
    pub returned: fn(&Operation) -> Option<i64>,
}

/// Adds `watched`'s violations among `ops` to `r`: one client's operations
/// on the value, in invocation order, with any that start a new watcher (a
/// join) among them, so that a read of an older watcher is no evidence.
pub fn judge(watched: &Watched, ops: &[&Operation], r: &mut CheckResult) {
    let Watched { subject, order, .. } = watched;
    for (i, w) in ops.iter().enumerate() {
        let Some(n) = (watched.newer_than)(w) else { continue };
        match (&w.outcome, (watched.returned)(w)) {
            (_, Some(got)) if got <= n => r.violation(
                Violation::new(
                    ViolationKind::ChangeNotNewer,
                    format!(
                        "{subject}: {} waited for a change after {order} {n}, and returned {order} {got}",
                        describe(w)
                    ),
                )
                .ops([w.id])
                .clients([w.client]),
            ),
            (Some(Outcome::Fail { .. }), _) => {
                let before = ops[..i]
                    .iter()
                    .rev()
                    .find(|o| o.completed.is_some_and(|c| c <= w.invoked));
                let Some((read, held)) = before.and_then(|o| (watched.read)(o).map(|v| (o, v))) else {
                    continue;
                };
                if held > n {
                    r.violation(
                        Violation::new(
                            ViolationKind::MissedChange,
                            format!(
                                "{subject}: {} gave up waiting for a change after {order} {n}, though its watcher already held {order} {held} ({})",
                                describe(w),
                                describe(read)
                            ),
                        )
                        .ops([read.id, w.id])
                        .clients([w.client]),
                    );
                }
            }
            _ => {}
        }
    }
}
