//! The session facts a checker asks about once per operation — when a
//! session's CloseSession committed, when its end was observed, its last
//! sign of life — indexed once per history, so that a checker asking them
//! for every acquire does not scan the whole history each time (the
//! straightforward scans in `common` made the mutex and semaphore checks
//! quadratic: most of a fuzzed seed's time on long runs). Each query
//! answers exactly what the scan it replaces answers; tests compare them.

use std::collections::BTreeMap;

use crate::history::{ClientId, Event, History, Operation, SessionId, SessionState, Time, TxnRecord};

/// A session event of one client: time, session, state.
type SessionEvent = (Time, SessionId, SessionState);

/// Session facts of one history and its operations.
#[derive(Debug, Default)]
pub struct SessionIndex<'h> {
    /// Commit times of each session's CloseSession, ascending.
    closes: BTreeMap<SessionId, Vec<Time>>,
    /// Each client's session events, by time (stable).
    events: BTreeMap<ClientId, Vec<SessionEvent>>,
    /// Each client's completed operations, by completion time (stable).
    replies: BTreeMap<ClientId, Vec<(Time, &'h Operation)>>,
}

impl<'h> SessionIndex<'h> {
    pub fn new(h: &'h History, ops: &'h [Operation]) -> SessionIndex<'h> {
        let mut ix = SessionIndex::default();
        for e in &h.events {
            match e {
                Event::Commit {
                    time,
                    txn: TxnRecord::CloseSession { session, .. },
                    ..
                } => ix.closes.entry(*session).or_default().push(*time),
                Event::Session {
                    time,
                    client,
                    session,
                    state,
                    ..
                } => ix.events.entry(*client).or_default().push((*time, *session, *state)),
                _ => {}
            }
        }
        for o in ops {
            if let Some(t) = o.completed {
                ix.replies.entry(o.client).or_default().push((t, o));
            }
        }
        for v in ix.closes.values_mut() {
            v.sort_unstable();
        }
        for v in ix.events.values_mut() {
            v.sort_by_key(|e| e.0);
        }
        for v in ix.replies.values_mut() {
            v.sort_by_key(|r| r.0);
        }
        ix
    }

    /// The first commit at or after `after` of `session`'s CloseSession
    /// (`common::session_closed_commit`).
    pub fn closed_commit(&self, session: Option<SessionId>, after: Time) -> Option<Time> {
        let v = self.closes.get(&session?)?;
        v.get(v.partition_point(|t| *t < after)).copied()
    }

    /// The first time after `after` that an event of `client` whose state
    /// satisfies `ended` was observed for `session` (any of the client's
    /// sessions when `None`).
    pub fn end_after(&self, client: ClientId, session: Option<SessionId>, after: Time) -> Option<Time> {
        let v = self.events.get(&client)?;
        v[v.partition_point(|e| e.0 <= after)..]
            .iter()
            .find(|(_, s, state)| session.is_none_or(|x| x == *s) && state.is_end())
            .map(|e| e.0)
    }

    /// True if `client` was told, at or before `by`, that `session` (any
    /// of its sessions when `None`) ended.
    pub fn ended_by(&self, client: ClientId, session: Option<SessionId>, by: Time) -> bool {
        self.events.get(&client).is_some_and(|v| {
            v[..v.partition_point(|e| e.0 <= by)]
                .iter()
                .any(|(_, s, state)| session.is_none_or(|x| x == *s) && state.is_end())
        })
    }

    /// True if `session` was over by `t`: its CloseSession committed, or
    /// `client` was told it ended.
    pub fn over_by(&self, client: ClientId, session: Option<SessionId>, t: Time) -> bool {
        self.closed_commit(session, 0).is_some_and(|c| c <= t) || self.ended_by(client, session, t)
    }

    /// The last sign of life of `client`'s `session` (any when `None`)
    /// before `before`, at least `floor`: the latest completion of one of
    /// its operations that `alive` accepts, or a connected event.
    pub fn last_alive(
        &self,
        client: ClientId,
        session: Option<SessionId>,
        floor: Time,
        before: Time,
        alive: impl Fn(&Operation) -> bool,
    ) -> Time {
        let same = |s: Option<SessionId>| session.is_none() || s == session;
        let from_ops = self.replies.get(&client).and_then(|v| {
            v[..v.partition_point(|r| r.0 < before)]
                .iter()
                .rev()
                .find(|(_, o)| same(o.session) && alive(o))
                .map(|r| r.0)
        });
        let from_events = self.events.get(&client).and_then(|v| {
            v[..v.partition_point(|e| e.0 < before)]
                .iter()
                .rev()
                .find(|(_, s, state)| same(Some(*s)) && state.is_connected())
                .map(|e| e.0)
        });
        [from_ops, from_events].into_iter().flatten().fold(floor, Time::max)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::history::{Op, Outcome, Value};
    use crate::properties::common::{last_alive, session_closed_commit, session_end_after, shows_session_alive};
    use crate::properties::testkit::Builder;

    const STATES: [SessionState; 6] = SessionState::ALL;

    /// A history of 3 clients, 2 sessions each, from `steps`: (kind, time,
    /// client, session, pick).
    fn history(steps: &[(u8, u64, u32, u8, u8)]) -> History {
        let mut b = Builder::new();
        for &(kind, t, client, s, pick) in steps {
            let session = i64::from(client) * 16 + i64::from(s);
            match kind % 4 {
                0 => b.session(t, client, session, STATES[pick as usize % STATES.len()]),
                1 => b.commit(
                    t,
                    t as i64,
                    TxnRecord::CloseSession {
                        session,
                        expired: true,
                        deleted: vec![],
                    },
                ),
                2 => {
                    let id = b.invoke_s(
                        t,
                        client,
                        Some(session),
                        Op::GetData {
                            path: "/a".into(),
                            watch: false,
                        },
                    );
                    let outcome = match pick % 3 {
                        0 => Outcome::Ok { value: Value::Unit },
                        1 => Outcome::Info {
                            error: "ConnectionLoss".into(),
                        },
                        _ => Outcome::Fail { error: "NoNode".into() },
                    };
                    b.complete(id, t + u64::from(pick % 5), outcome);
                }
                _ => {
                    let op = Op::FencedWrite {
                        resource: "r".into(),
                        token: 1,
                    };
                    let id = b.invoke_s(t, client, Some(session), op);
                    b.complete(id, t + 1, Outcome::Ok { value: Value::Unit });
                }
            }
        }
        b.build()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        /// Every query answers what the whole-history scan answers.
        #[test]
        fn index_answers_what_the_scans_answer(
            steps in proptest::collection::vec((0u8..4, 0u64..60, 0u32..3, 0u8..2, 0u8..10), 0..40),
            queries in proptest::collection::vec((0u32..3, 0u8..3, 0u64..70, 0u64..70), 1..20),
        ) {
            let h = history(&steps);
            let ops = h.operations().expect("well formed");
            let ix = SessionIndex::new(&h, &ops);
            for (client, s, a, b) in queries {
                let session = (s < 2).then_some(i64::from(client) * 16 + i64::from(s));
                let (after, before) = (a * 1_000_000, b * 1_000_000);
                prop_assert_eq!(ix.closed_commit(session, after), session_closed_commit(&h, session, after));
                prop_assert_eq!(
                    ix.end_after(client, session, after),
                    session_end_after(&h, client, session, after)
                );
                prop_assert_eq!(
                    ix.last_alive(client, session, after, before, shows_session_alive),
                    last_alive(&h, &ops, client, session, after, before)
                );
            }
        }
    }
}
