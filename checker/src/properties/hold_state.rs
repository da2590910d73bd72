//! A holder's guard follows its connection. A lock guard's
//! `is_suspended()` tells the application to pause work that needs the
//! lock: the promise (`suspended-misreported`) is that a hold not lost
//! reads suspended while its client is Disconnected and held while it is
//! connected, and that once the client knows its session ended the hold
//! reads lost (no report, which is made only of a hold not lost). An
//! at-least-once queue's claim makes the same promise to its processor. Each `HoldState` report is judged by its client's session
//! events on the guard's session: the last one at least [`SETTLE`] before
//! the report, with none since (the guard learns of a change a moment
//! after the client records it).

use crate::history::{Op, Operation, SessionState, Time};

use super::client_states::SessionStates;
use super::common::describe;
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// How long a session change may take to reach the guard: 1 ms.
pub const SETTLE: Time = 1_000_000;

/// The client's settled connection state at `o`: its last event on `o`'s
/// session, if that is at least [`SETTLE`] old and none came since.
fn settled(states: &SessionStates, o: &Operation) -> Option<(SessionState, Time)> {
    states
        .at(o.client, o.session?, o.invoked)
        .filter(|(_, since)| *since + SETTLE <= o.invoked)
}

/// Flags each `HoldState` report its client's connection contradicts.
pub fn check_into(ops: &[Operation], states: &SessionStates, r: &mut CheckResult) {
    if !ops.iter().any(|o| matches!(o.op, Op::HoldState { .. })) {
        return;
    }
    for o in ops {
        let Op::HoldState { lock, token, suspended } = &o.op else {
            continue;
        };
        let Some((state, since)) = settled(states, o) else {
            continue;
        };
        let wrong = match state {
            SessionState::SyncConnected => *suspended,
            SessionState::Disconnected => !*suspended,
            // A report is made only while the hold is not lost; once the
            // client knows its session ended, the guard must say lost.
            SessionState::Expired | SessionState::Closed => true,
            _ => false,
        };
        if !wrong {
            continue;
        }
        let said = if *suspended { "suspended" } else { "held" };
        r.violation(
            Violation::of_op_since(
                ViolationKind::SuspendedMisreported,
                format!(
                    "hold {lock}: client {}'s guard (token {token}) said {said} at {}, but its session had been {state:?} since {}: {}",
                    o.client,
                    ms(o.invoked),
                    ms(since),
                    describe(o)
                ),
                o,
                since,
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{History, Outcome, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    /// Client 1 on session 0xa: connected at 1 ms, `state` at 10 ms, and
    /// its guard says `suspended` at `at` ms.
    fn history(state: SessionState, at: u64, suspended: bool) -> History {
        let mut b = Builder::new();
        b.session(1, 1, 0xa, SessionState::SyncConnected);
        b.session(10, 1, 0xa, state);
        let id = b.invoke_s(
            at,
            1,
            Some(0xa),
            Op::HoldState {
                lock: "/l".into(),
                token: 7,
                suspended,
            },
        );
        b.complete(id, at, Outcome::Ok { value: Value::Unit });
        b.build()
    }

    fn kinds(h: &History) -> Vec<String> {
        kinds_found(h, |h, ops, r| check_into(ops, &SessionStates::of(h), r))
    }

    #[test]
    fn a_guard_following_its_connection_passes() {
        assert!(kinds(&history(SessionState::Disconnected, 20, true)).is_empty());
        assert!(kinds(&history(SessionState::SyncConnected, 20, false)).is_empty());
    }

    #[test]
    fn a_guard_contradicting_its_connection_fails() {
        assert_eq!(
            kinds(&history(SessionState::Disconnected, 20, false)),
            vec!["suspended-misreported"]
        );
        assert_eq!(
            kinds(&history(SessionState::SyncConnected, 20, true)),
            vec!["suspended-misreported"]
        );
    }

    #[test]
    fn a_change_still_settling_is_not_judged() {
        // Asked in the same instant the client recorded the change.
        assert!(kinds(&history(SessionState::Disconnected, 10, false)).is_empty());
        assert!(kinds(&history(SessionState::Expired, 10, false)).is_empty());
    }

    #[test]
    fn a_hold_not_lost_after_its_client_knew_the_session_ended_fails() {
        for state in [SessionState::Expired, SessionState::Closed] {
            for suspended in [false, true] {
                assert_eq!(
                    kinds(&history(state, 20, suspended)),
                    vec!["suspended-misreported"],
                    "{state:?}, suspended={suspended}"
                );
            }
        }
    }
}
