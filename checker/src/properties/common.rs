//! Helpers shared by the property checkers: reading operations, outcomes
//! and tokens, describing ops for explanations, and session ends.

use std::collections::BTreeMap;

use crate::history::{
    ClientId, Event, History, Op, Operation, Outcome, SessionId, SessionState, Time, TxnRecord, Value, Zxid,
};

use zkdst_model::ErrorCode;

use super::result::{ms, CheckResult};
use super::Params;

/// The history's operations, or an `Unknown` result naming the defect.
pub fn operations(h: &History, checker: &str) -> Result<Vec<Operation>, CheckResult> {
    h.operations()
        .map_err(|e| CheckResult::unknown(checker, format!("malformed history: {e}")))
}

/// A checker over paired operations, as the registry holds them.
pub type OpsCheckFn = fn(&History, &[Operation], &Params) -> CheckResult;

/// Pairs `h`'s operations and runs `f` on them; a malformed history is
/// `checker`'s Unknown. (A run pairs once and calls every `*_ops` with the
/// same operations: pairing clones every op and outcome.)
pub fn with_operations(h: &History, checker: &str, p: &Params, f: OpsCheckFn) -> CheckResult {
    match operations(h, checker) {
        Ok(ops) => f(h, &ops, p),
        Err(r) => r,
    }
}

/// The value of an Ok outcome.
pub fn ok_value(o: &Operation) -> Option<&Value> {
    match &o.outcome {
        Some(Outcome::Ok { value }) => Some(value),
        _ => None,
    }
}

/// The error an op failed with (definitely or maybe), as recorded.
pub fn error_text(o: &Operation) -> Option<&str> {
    match &o.outcome {
        Some(Outcome::Info { error }) | Some(Outcome::Fail { error }) => Some(error),
        _ => None,
    }
}

/// The names a listing's answer shows: its children, or none when the
/// directory was gone (a NoNode reply). `None`: not a listing's answer.
pub fn listed(v: &Value) -> Option<&[String]> {
    match v {
        Value::Children { children, .. } | Value::ChildNames { children } => Some(children),
        Value::Error { code, .. } if code == ErrorCode::NoNode.name() => Some(&[]),
        _ => None,
    }
}

/// True when the op definitely succeeded: Ok, and not an error reply or a
/// `false` answer (e.g. a try-lock that did not get the lock).
pub fn succeeded(o: &Operation) -> bool {
    matches!(ok_value(o), Some(v) if !matches!(v, Value::Error { .. } | Value::Bool { value: false }))
}

/// The token an op returned (`Value::Token`, or `Value::Int`).
pub fn token(o: &Operation) -> Option<i64> {
    match ok_value(o)? {
        Value::Token { token } => Some(*token),
        Value::Int { value } => Some(*value),
        _ => None,
    }
}

/// "acquire lock=/l shared=false": the op's JSON fields, compactly.
pub fn short_op(op: &Op) -> String {
    op.describe()
}

/// "op 7 (client 2, acquire lock=/l, 10–12 ms)".
pub fn describe(o: &Operation) -> String {
    let done = o.completed.map(ms).unwrap_or_else(|| "pending".into());
    let session = o.session.map(|s| format!(", session {s:#x}")).unwrap_or_default();
    format!(
        "op {} (client {}{session}, {}, {}–{})",
        o.id,
        o.client,
        short_op(&o.op),
        ms(o.invoked),
        done
    )
}

/// The first time after `after` that the session of `o` (or, without a
/// session id, any session of its client) was observed ended.
pub fn session_end_after(h: &History, client: ClientId, session: Option<SessionId>, after: Time) -> Option<Time> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Session {
                time,
                client: c,
                session: s,
                state,
                ..
            } if *c == client && state.is_end() && *time > after && session.is_none_or(|x| x == *s) => Some(*time),
            _ => None,
        })
        .min()
}

/// A sign of life of its session: an Ok reply to an op that talks to
/// ZooKeeper. Replies from the protected resource (fenced writes, leader
/// actions) say nothing about the ZooKeeper session.
pub fn shows_session_alive(o: &Operation) -> bool {
    let talks_to_zk = !matches!(
        o.op,
        Op::FencedWrite { .. }
            | Op::LeaderAct { .. }
            | Op::MemberAct { .. }
            | Op::LeadershipLost { .. }
            | Op::HoldLost { .. }
            | Op::HoldNode { .. }
            | Op::HoldState { .. }
            | Op::RevokeState { .. }
    );
    talks_to_zk && matches!(o.outcome, Some(Outcome::Ok { .. }))
}

/// The last sign that a session was alive before `before`: an Ok reply to
/// one of its ops, or a connected event. At least `floor`. (Scans the
/// history: checkers asking per operation use `SessionIndex::last_alive`;
/// this scan is its test oracle.)
#[cfg(test)]
pub fn last_alive(
    h: &History,
    ops: &[Operation],
    client: ClientId,
    session: Option<SessionId>,
    floor: Time,
    before: Time,
) -> Time {
    let same = |c: ClientId, s: Option<SessionId>| c == client && (session.is_none() || s == session);
    let from_ops = ops
        .iter()
        .filter(|o| same(o.client, o.session) && shows_session_alive(o))
        .filter_map(|o| o.completed)
        .filter(|t| *t < before);
    let from_events = h.events.iter().filter_map(|e| match e {
        Event::Session {
            time,
            client: c,
            session: s,
            state,
            ..
        } if same(*c, Some(*s)) && state.is_connected() && *time < before => Some(*time),
        _ => None,
    });
    from_ops.chain(from_events).fold(floor, Time::max)
}

/// For accepted items (invoked, completed, token): every b for which some a
/// completed before b was invoked yet b carries a smaller token (`strict`:
/// smaller or equal). Returns index pairs (a, b), a being the witness with
/// the largest token.
pub fn stale_tokens(items: &[(Time, Time, i64)]) -> Vec<(usize, usize)> {
    stale_tokens_by(items, false)
}

pub fn stale_tokens_by(items: &[(Time, Time, i64)], strict: bool) -> Vec<(usize, usize)> {
    let mut by_done: Vec<usize> = (0..items.len()).collect();
    by_done.sort_by_key(|&i| items[i].1);
    let mut prefix: Vec<usize> = Vec::with_capacity(items.len());
    for &i in &by_done {
        let best = match prefix.last() {
            Some(&p) if items[p].2 >= items[i].2 => p,
            _ => i,
        };
        prefix.push(best);
    }
    let mut out = Vec::new();
    for (b, &(invoked, _, tok)) in items.iter().enumerate() {
        let n = by_done.partition_point(|&i| items[i].1 < invoked);
        if n > 0 {
            let a = prefix[n - 1];
            if items[a].2 > tok || (strict && items[a].2 == tok && a != b) {
                out.push((a, b));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_op_is_compact() {
        assert_eq!(
            short_op(&Op::Acquire {
                lock: "/l".into(),
                shared: false
            }),
            "acquire lock=/l shared=false"
        );
    }

    #[test]
    fn stale_tokens_finds_only_definite_reorders() {
        // (invoked, completed, token)
        let items = [(0, 10, 5), (20, 30, 3), (5, 25, 2)];
        assert_eq!(stale_tokens(&items), vec![(0, 1)]);
    }
}

/// The first commit, at or after `after`, of `session`'s CloseSession: the
/// server ended the session (closed or expired) and deleted its ephemerals.
pub fn session_closed_commit(h: &History, session: Option<SessionId>, after: Time) -> Option<Time> {
    let s = session?;
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Commit {
                time,
                txn: TxnRecord::CloseSession { session, .. },
                ..
            } if *session == s && *time >= after => Some(*time),
            _ => None,
        })
        .min()
}

/// A node creation the leader committed.
pub struct Created<'h> {
    pub time: Time,
    pub zxid: Zxid,
    pub path: &'h str,
    /// The creating session, for an ephemeral (0 for a persistent node).
    pub owner: SessionId,
}

impl Created<'_> {
    /// True if the node lies under `dir` (a descendant, not `dir` itself).
    pub fn is_under(&self, dir: &str) -> bool {
        self.path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
    }

    /// True if `o`'s session made it before `o` completed (`o` without a
    /// session: any session; still pending: any time).
    pub fn made_by(&self, o: &Operation) -> bool {
        o.session.is_none_or(|s| s == self.owner) && self.time <= o.completed.unwrap_or(Time::MAX)
    }
}

/// Every committed create of the history, in commit order.
pub fn creates(h: &History) -> impl Iterator<Item = Created<'_>> {
    h.events.iter().filter_map(|e| match e {
        Event::Commit {
            time,
            zxid,
            txn: TxnRecord::Create {
                path, ephemeral_owner, ..
            },
            ..
        } => Some(Created {
            time: *time,
            zxid: *zxid,
            path,
            owner: *ephemeral_owner,
        }),
        _ => None,
    })
}

/// True if the history carries the servers' commit log.
pub fn has_commit_log(h: &History) -> bool {
    h.events.iter().any(|e| matches!(e, Event::Commit { .. }))
}

/// When each node, by czxid, stopped existing: its Delete (alone or in a
/// multi) or its session's end committed; `Time::MAX` while it lives.
pub fn node_ends(h: &History) -> BTreeMap<i64, Time> {
    let mut czxid: BTreeMap<&str, i64> = BTreeMap::new();
    let mut gone: BTreeMap<i64, Time> = BTreeMap::new();
    for (time, zxid, txn) in h.committed_parts() {
        let ended: Vec<&str> = match txn {
            TxnRecord::Create { path, .. } => {
                czxid.insert(path, zxid);
                gone.entry(zxid).or_insert(Time::MAX);
                continue;
            }
            TxnRecord::Delete { path } => vec![path],
            TxnRecord::CloseSession { deleted, .. } => deleted.iter().map(String::as_str).collect(),
            _ => continue,
        };
        for p in ended {
            if let Some(z) = czxid.remove(p) {
                gone.entry(z).and_modify(|g| *g = (*g).min(time));
            }
        }
    }
    gone
}

/// Whether `o`'s client was connected (its last session event before the
/// invoke says so) with none after until `o` returned.
pub fn connected_throughout(h: &History, o: &Operation) -> bool {
    let done = o.completed.unwrap_or(Time::MAX);
    let mut connected = false;
    for e in &h.events {
        if let Event::Session {
            time, client, state, ..
        } = e
        {
            if *client != o.client || *time > done {
                continue;
            }
            if *time > o.invoked {
                return false;
            }
            connected = *state == SessionState::SyncConnected;
        }
    }
    connected && o.session.is_some()
}

/// `ops` grouped by client, each client's in the order given.
pub fn by_client<'a>(ops: impl IntoIterator<Item = &'a Operation>) -> BTreeMap<ClientId, Vec<&'a Operation>> {
    let mut out: BTreeMap<ClientId, Vec<&'a Operation>> = BTreeMap::new();
    for o in ops {
        out.entry(o.client).or_default().push(o);
    }
    out
}

/// The instants of each client's session events (connects, disconnects,
/// expiries): the wake-ups a watcher's re-read may follow.
pub fn session_event_times(h: &History) -> BTreeMap<ClientId, Vec<Time>> {
    let mut out: BTreeMap<ClientId, Vec<Time>> = BTreeMap::new();
    for e in &h.events {
        if let Event::Session { client, time, .. } = e {
            out.entry(*client).or_default().push(*time);
        }
    }
    out
}
