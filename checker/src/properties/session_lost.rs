//! Truthful session loss, the promise every recipe makes about its errors:
//! a recipe call that fails with "session lost" tells its caller that the
//! session is gone — its ephemeral nodes (locks, leases, leadership,
//! membership) deleted, nothing left to clean up — so the caller starts
//! over with a new session. That is only true if the session did end: its
//! CloseSession committed, or its client was told Expired or Closed, no
//! later than the call returned. A recipe that reports SessionLost on a live
//! session (a barrier waiter woken by the barrier's removal taking the wrong
//! branch, an error mapped too eagerly) makes its caller abandon work that
//! still stands, or leave nodes behind it believes gone.
//!
//! Judged on recipe operations only (raw ZooKeeper calls report ZooKeeper's
//! own errors). Runs on every seed, beside `progress`.

use crate::history::{History, Operation};

use super::common::{describe, error_text, with_operations};
use super::progress::is_recipe_op;
use super::result::{ms, CheckResult, Violation};
use super::sessions::SessionIndex;
use super::{Params, ViolationKind};

pub const NAME: &str = "session-lost";

/// How a recorded error says "session lost": the start of the recipes'
/// `RecipeError::SessionLost` message (a scenarios test pins the two
/// together).
pub const ERROR_PREFIX: &str = "session lost";

fn claims_session_lost(o: &Operation) -> bool {
    error_text(o).is_some_and(|e| e.starts_with(ERROR_PREFIX))
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// As [`check`], over the history's already-paired operations.
pub fn check_ops(h: &History, ops: &[Operation], _p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let ix = SessionIndex::new(h, ops);
    let mut claims = 0u64;
    for o in ops.iter().filter(|o| is_recipe_op(&o.op) && claims_session_lost(o)) {
        let Some(t) = o.completed else { continue };
        claims += 1;
        // Ended before or during the call: a commit or an end event at or
        // before the reply.
        if !ix.over_by(o.client, o.session, t) {
            r.violation(
                Violation::new(
                    ViolationKind::FalseSessionLost,
                    format!(
                        "{} returned 'session lost' at {}, but its session{} had not ended: no CloseSession committed and its client was told neither Expired nor Closed",
                        describe(o),
                        ms(t),
                        o.session.map(|s| format!(" {s:#x}")).unwrap_or_default(),
                    ),
                )
                .ops([o.id])
                .clients([o.client])
                .times([t]),
            );
        }
    }
    r.figure("session_lost_replies", claims as f64);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Op, Outcome, SessionState, TxnRecord};
    use crate::properties::testkit::Builder;

    fn wait() -> Op {
        Op::BarrierWait { barrier: "/b".into() }
    }

    fn lost() -> Outcome {
        Outcome::Info {
            error: "session lost (expired or closed)".into(),
        }
    }

    /// The leader's expiry of session 0x10 committed at `t`.
    fn expired_at(b: &mut Builder, t: u64) {
        let txn = TxnRecord::CloseSession {
            session: 0x10,
            expired: true,
            deleted: vec![],
        };
        b.commit(t, 7, txn);
    }

    fn kinds(h: &History) -> Vec<ViolationKind> {
        check(h, &Params::default()).violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn session_lost_on_a_live_session_is_flagged() {
        let mut b = Builder::new();
        b.session(1, 0, 0x10, SessionState::SyncConnected);
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.complete(id, 20, lost());
        let h = b.build();
        assert_eq!(kinds(&h), vec![ViolationKind::FalseSessionLost]);
        // The session ending only after the reply does not excuse it.
        let mut b = Builder::new();
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.complete(id, 20, lost());
        b.session(30, 0, 0x10, SessionState::Expired);
        expired_at(&mut b, 25);
        assert_eq!(kinds(&b.build()), vec![ViolationKind::FalseSessionLost]);
    }

    #[test]
    fn another_sessions_end_does_not_excuse_it() {
        let mut b = Builder::new();
        b.session(5, 0, 0x11, SessionState::Expired);
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.complete(id, 20, lost());
        assert_eq!(kinds(&b.build()), vec![ViolationKind::FalseSessionLost]);
    }

    #[test]
    fn a_session_that_ended_is_truthfully_lost() {
        // Told Expired during the call.
        let mut b = Builder::new();
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.session(15, 0, 0x10, SessionState::Expired);
        b.complete(id, 20, lost());
        assert!(kinds(&b.build()).is_empty());
        // Closed before the call was made (a call on a dead handle).
        let mut b = Builder::new();
        b.session(5, 0, 0x10, SessionState::Closed);
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.complete(id, 20, lost());
        assert!(kinds(&b.build()).is_empty());
        // Expired by the leader, the reply arriving at the commit's instant,
        // before the client heard of it.
        let mut b = Builder::new();
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        expired_at(&mut b, 20);
        b.complete(id, 20, lost());
        b.session(30, 0, 0x10, SessionState::Expired);
        assert!(kinds(&b.build()).is_empty());
    }

    #[test]
    fn other_errors_and_raw_calls_are_not_judged() {
        let mut b = Builder::new();
        let id = b.invoke_s(10, 0, Some(0x10), wait());
        b.complete(
            id,
            20,
            Outcome::Info {
                error: "zookeeper: connection loss".into(),
            },
        );
        let id = b.invoke_s(
            10,
            1,
            Some(0x20),
            Op::GetData {
                path: "/a".into(),
                watch: false,
            },
        );
        b.complete(id, 20, lost());
        let r = check(&b.build(), &Params::default());
        assert!(r.violations.is_empty());
        assert_eq!(r.figures.get("session_lost_replies"), Some(&0.0));
    }
}
