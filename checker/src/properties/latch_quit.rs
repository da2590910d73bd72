//! A leader latch stays in the election until it is closed or its session
//! ends (Curator's `LeaderLatch`: `await()` fails only then). Whatever
//! else goes wrong — a create, a wait or a read that ran out of retries on
//! a live session — it tries again. So where the history says the
//! campaigns are a latch's (meta [`CAMPAIGNS_UNTIL_SESSION_ENDS`], set by
//! the leader-latch workload, which closes a latch only after it led), a
//! campaign that failed while its session lived is a latch that quit
//! (`latch-quit`): its application is left outside the election, told an
//! error it cannot act on.

use crate::history::{History, Op, Operation, Outcome};

use super::common::describe;
use super::result::{ms, CheckResult, Violation};
use super::sessions::SessionIndex;
use super::ViolationKind;

/// History meta: campaigns end only when they lead or their session ends.
pub const CAMPAIGNS_UNTIL_SESSION_ENDS: &str = "campaigns_until_session_ends";

/// Adds a `latch-quit` violation to `r` for each failed campaign whose
/// session was not over when it failed, where the meta says campaigns
/// last until their session ends.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if h.meta.get(CAMPAIGNS_UNTIL_SESSION_ENDS).map(|v| v.trim()) != Some("true") {
        return;
    }
    let failed: Vec<_> = ops
        .iter()
        .filter(|o| matches!(o.op, Op::Campaign { .. }))
        .filter_map(|o| match (&o.outcome, o.completed) {
            (Some(Outcome::Fail { error } | Outcome::Info { error }), Some(t)) => Some((o, error, t)),
            _ => None,
        })
        .collect();
    r.figure("failed_latch_campaigns_judged", failed.len() as f64);
    if failed.is_empty() {
        return; // the common case: no session index to build
    }
    let sessions = SessionIndex::new(h, ops);
    for (o, error, t) in failed {
        if sessions.over_by(o.client, o.session, t) {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::LatchQuit,
                format!(
                    "{} failed at {} with '{error}', though its session lived: a latch stays in the election until it is closed or its session ends",
                    describe(o),
                    ms(t),
                ),
            )
            .ops([o.id])
            .clients([o.client])
            .times(o.completed),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{SessionState, Value};
    use crate::properties::testkit::Builder;

    /// A latch campaign on client 0 that fails at 50 ms with `error`;
    /// `then` adds to the history; `meta`: whether it says latch.
    fn judged(meta: bool, then: impl FnOnce(&mut Builder)) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        b.session(0, 0, 0x10, SessionState::SyncConnected);
        let c = b.invoke_s(10, 0, Some(0x10), Op::Campaign { election: "/e".into() });
        then(&mut b);
        b.complete(
            c,
            50,
            Outcome::Fail {
                error: "zookeeper: ConnectionLoss (-4): the operation may or may not have been applied".into(),
            },
        );
        // A campaign that led is not judged.
        let w = b.invoke_s(60, 1, Some(0x11), Op::Campaign { election: "/e".into() });
        b.complete(
            w,
            70,
            Outcome::Ok {
                value: Value::Token { token: 3 },
            },
        );
        let mut h = b.build();
        if meta {
            h.meta.insert(CAMPAIGNS_UNTIL_SESSION_ENDS.into(), "true".into());
        }
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn a_latch_failing_on_a_live_session_fails() {
        assert_eq!(judged(true, |_| {}), vec![ViolationKind::LatchQuit]);
    }

    #[test]
    fn a_latch_failing_as_its_session_ends_or_an_election_failing_passes() {
        assert!(judged(true, |b| b.session(40, 0, 0x10, SessionState::Expired)).is_empty());
        assert!(judged(false, |_| {}).is_empty());
    }
}
