//! A group member keeps its session while the session serves it. It gives
//! a session up (closes it and opens another) only when something went
//! wrong on it: a call of that session failed (ConnectionLoss through the
//! retry budget, SessionExpired, an error reply other than NodeExists), or
//! the member was stopped: its application left (`Leave`) or was done
//! (the client's last operation). A member that closes a session on which
//! every call was answered, while nobody stopped it, is
//! `member-dropped-session`: a wait taken for a session loss, an error
//! invented where none came. Each such close costs the ensemble a session
//! and the member its place in the queue of those waiting for its id;
//! repeated, it is a storm of sessions.

use std::collections::BTreeMap;

use crate::history::{ClientId, Event, History, Op, Operation, Outcome, SessionId, Time, TxnRecord, Value};

use super::common::{describe, has_commit_log};
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// Whether `o` failed: no answer, or an error reply (NodeExists is how a
/// member learns its id is held, and is answered).
fn failed(o: &Operation) -> bool {
    match &o.outcome {
        None | Some(Outcome::Info { .. } | Outcome::Fail { .. }) => true,
        Some(Outcome::Ok {
            value: Value::Error { code, .. },
        }) => code != "NodeExists",
        Some(Outcome::Ok { .. }) => false,
    }
}

/// Adds a `member-dropped-session` violation to `r` for each session of a
/// member's client closed by the client with nothing failed on it and the
/// member not stopped.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    // The clients that run group members, and when each was last active.
    let mut members: BTreeMap<ClientId, Time> = BTreeMap::new();
    for o in ops {
        if matches!(o.op, Op::Join { .. }) {
            members.insert(o.client, 0);
        }
    }
    for o in ops {
        if let Some(last) = members.get_mut(&o.client) {
            if !o.background {
                *last = (*last).max(o.invoked);
            }
        }
    }
    // Each session's client and first appearance.
    let mut sessions: BTreeMap<SessionId, (ClientId, Time)> = BTreeMap::new();
    for e in &h.events {
        if let Event::Session {
            time, client, session, ..
        } = e
        {
            sessions.entry(*session).or_insert((*client, *time));
        }
    }
    let mut judged = 0u64;
    for (t, _, txn) in h.committed_parts() {
        let TxnRecord::CloseSession {
            session,
            expired: false,
            ..
        } = txn
        else {
            continue;
        };
        let Some(&(client, from)) = sessions.get(session) else {
            continue;
        };
        let Some(&last) = members.get(&client) else {
            continue;
        };
        if t >= last {
            // The application was done with its members.
            continue;
        }
        judged += 1;
        let mine = |o: &&Operation| o.client == client && (from..t).contains(&o.invoked);
        let stopped = ops.iter().filter(mine).any(|o| matches!(o.op, Op::Leave { .. }));
        let broke = ops
            .iter()
            .filter(mine)
            .any(|o| o.session == Some(*session) && failed(o));
        if stopped || broke {
            continue;
        }
        let calls: Vec<&Operation> = ops
            .iter()
            .filter(|o| o.session == Some(*session) && o.invoked < t)
            .collect();
        let last_call = calls.last().map(|o| describe(o)).unwrap_or_else(|| "none".into());
        r.violation(
            Violation::new(
                ViolationKind::MemberDroppedSession,
                format!(
                    "client {client} closed its session {session:#x} at {}, with its member still wanted and all {} of the session's calls answered (the last: {last_call})",
                    ms(t),
                    calls.len()
                ),
            )
            .ops(calls.last().map(|o| o.id))
            .clients([client]),
        );
    }
    r.figure("member_session_closes_judged", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, SessionState};
    use crate::properties::member_fixtures::{exists, held, join, NODE};
    use crate::properties::testkit::{kinds_found, Builder};

    fn judged(b: &Builder) -> Vec<String> {
        kinds_found(&b.clone_build(), check_into)
    }
    fn close(b: &mut Builder, t: u64, z: i64, session: SessionId) {
        b.commit(
            t,
            z,
            TxnRecord::CloseSession {
                session,
                expired: false,
                deleted: vec![],
            },
        );
    }
    /// Client 1's member joins at 10 on session 0x10, finds its id held
    /// (answered), and its session 0x10 is closed at 100; a later read of
    /// the group at 500 shows the application still at work.
    fn dropped() -> Builder {
        let mut b = Builder::new();
        b.commit(
            2,
            2,
            TxnRecord::Create {
                path: NODE.into(),
                data: Data::default(),
                ephemeral_owner: 0x20,
                session: 0x20,
            },
        );
        b.session(5, 1, 0x10, SessionState::SyncConnected);
        b.invoke(10, 1, join());
        let id = b.invoke_s(20, 1, Some(0x10), exists());
        b.complete(id, 21, Outcome::Ok { value: held() });
        close(&mut b, 100, 3, 0x10);
        b.ok(
            500,
            501,
            1,
            Op::Members {
                group: "/groups/g".into(),
                newer_than: None,
            },
            Value::Unit,
        );
        b
    }

    #[test]
    fn a_member_closing_a_session_that_served_it_is_flagged() {
        assert_eq!(judged(&dropped()), vec!["member-dropped-session"]);
    }

    #[test]
    fn a_failed_call_a_leave_or_the_end_of_the_work_excuses_a_close() {
        // A call of the session lost to ConnectionLoss.
        let mut b = dropped();
        let id = b.invoke_s(30, 1, Some(0x10), exists());
        b.complete(
            id,
            40,
            Outcome::Info {
                error: "ConnectionLoss".into(),
            },
        );
        assert_eq!(judged(&b), Vec::<String>::new());
        // The application left.
        let mut c = dropped();
        c.ok(
            50,
            51,
            1,
            Op::Leave {
                group: "/groups/g".into(),
                member: "m1".into(),
            },
            Value::Unit,
        );
        assert_eq!(judged(&c), Vec::<String>::new());
        // A close after the application's last operation.
        let mut d = Builder::new();
        d.session(5, 1, 0x10, SessionState::SyncConnected);
        d.invoke(10, 1, join());
        close(&mut d, 100, 3, 0x10);
        assert_eq!(judged(&d), Vec::<String>::new());
        // Another client's failure excuses nothing.
        let mut e = dropped();
        e.session(6, 2, 0x30, SessionState::SyncConnected);
        let id = e.invoke_s(30, 2, Some(0x30), exists());
        e.complete(
            id,
            40,
            Outcome::Info {
                error: "ConnectionLoss".into(),
            },
        );
        assert_eq!(judged(&e), vec!["member-dropped-session"]);
    }
}
