//! A holder stops once it knows its hold is over. A lock (or lease) is held
//! by a session: when that session has ended the lock node is gone, and a
//! guard must say lost (`is_lost()`), whatever grace it has. The promise
//! (`held-after-session-end`), for each write a holder makes with its
//! token: its client had not been told (Expired or Closed) that the
//! session which acquired the token had ended, more than one scheduling
//! step before the write began.
//!
//! This judges the recipe, not the resource: a fenced resource rejects
//! such a write once a newer holder wrote, but an unfenced one (or one
//! nobody else wrote to yet) accepts it. A session ended without its
//! client being told (a partitioned or paused holder) is fencing's
//! business: the client could not have known.

use std::collections::BTreeMap;

use crate::history::{Op, Operation, SessionId, SessionState};

use super::client_states::{SessionStates, STEP};
use super::common::{describe, token};
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// Flags each holder write made after its client was told its hold's
/// session ended.
pub fn check_into(ops: &[Operation], states: &SessionStates, r: &mut CheckResult) {
    if !ops.iter().any(|o| matches!(o.op, Op::FencedWrite { .. })) {
        return;
    }
    // The session each granted token was acquired on.
    let held_by: BTreeMap<i64, SessionId> = ops
        .iter()
        .filter(|o| matches!(o.op, Op::Acquire { .. }))
        .filter_map(|o| Some((token(o)?, o.session?)))
        .collect();
    for o in ops {
        let Op::FencedWrite { resource, token } = &o.op else {
            continue;
        };
        let Some(session) = held_by.get(token).copied().or(o.session) else {
            continue;
        };
        let Some((state, since)) = states.at(o.client, session, o.invoked) else {
            continue;
        };
        if !matches!(state, SessionState::Expired | SessionState::Closed) || o.invoked <= since + STEP {
            continue;
        }
        r.violation(Violation::of_op_since(
            ViolationKind::HeldAfterSessionEnd,
            format!(
                "client {} wrote {resource} with token {token} at {}, but it had been told at {} that the \
                     session {session:#x} holding that token was {state:?}: {}",
                o.client,
                ms(o.invoked),
                ms(since),
                describe(o)
            ),
            o,
            since,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{History, Outcome, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    /// Client 1 acquires token 7 on session 0xa at 2 ms; the session is
    /// `state` at 10 ms; the client writes with token 7 at `at` ms.
    fn history(state: SessionState, at: u64) -> History {
        let mut b = Builder::new();
        b.session(1, 1, 0xa, SessionState::SyncConnected);
        let id = b.invoke_s(
            2,
            1,
            Some(0xa),
            Op::Acquire {
                lock: "/l".into(),
                shared: false,
            },
        );
        b.complete(
            id,
            3,
            Outcome::Ok {
                value: Value::Token { token: 7 },
            },
        );
        b.session(10, 1, 0xa, state);
        // The write is recorded under the client's new session, as a
        // workload that reconnected records it.
        let w = b.invoke_s(
            at,
            1,
            Some(0xb),
            Op::FencedWrite {
                resource: "/l".into(),
                token: 7,
            },
        );
        b.complete(w, at + 1, Outcome::Ok { value: Value::Unit });
        b.build()
    }

    fn kinds(h: &History) -> Vec<String> {
        kinds_found(h, |h, ops, r| check_into(ops, &SessionStates::of(h), r))
    }

    #[test]
    fn a_write_after_the_client_was_told_its_session_ended_fails() {
        assert_eq!(
            kinds(&history(SessionState::Expired, 20)),
            vec!["held-after-session-end"]
        );
        assert_eq!(
            kinds(&history(SessionState::Closed, 20)),
            vec!["held-after-session-end"]
        );
    }

    #[test]
    fn writes_while_alive_disconnected_or_as_the_news_arrives_pass() {
        assert!(kinds(&history(SessionState::Expired, 5)).is_empty());
        assert!(kinds(&history(SessionState::Disconnected, 20)).is_empty());
        assert!(kinds(&history(SessionState::SyncConnected, 20)).is_empty());
        // Within one scheduling step of the news: the guard hears it next.
        assert!(kinds(&history(SessionState::Expired, 11)).is_empty());
        assert_eq!(
            kinds(&history(SessionState::Expired, 12)),
            vec!["held-after-session-end"]
        );
    }
}
