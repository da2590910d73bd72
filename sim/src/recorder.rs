//! Records the history of a run (`zkdst-history`): client operations,
//! commits (once per zxid, from the first server to apply it), faults,
//! session and watch events, the servers' record of every wire connection, and what every server applied, checked
//! against the first applier's sequence (`replicas::Ledger`: disagreements
//! as they happen, each server's final position in `history()`). Shared by
//! every node of one simulation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use madsim::task::NodeId;
use zkdst_history::{ClientId, ConnEvent, Data, Event, FaultEvent, FaultStep, History, Op, OpId, Outcome, TxnRecord};
use zkdst_recipes::zk::{SessionId, SessionState, Zxid};

use crate::clock::SimClock;
use crate::proto::LoggedTxn;
use crate::replicas::{txn_digest, Finding, Ledger, TreeChange};
use crate::tree::{Txn, TxnResult};
use crate::zab::ServerId;

#[derive(Debug, Default)]
struct State {
    history: History,
    next_op: OpId,
    last_commit: Zxid,
    /// Pending recipe-level ops, so their completions trace at info.
    recipe_ops: BTreeSet<OpId>,
    /// Every server's applied sequence against the canonical one.
    replicas: Ledger,
    /// Which application client each client node is, for the servers'
    /// record of the connections those nodes open.
    client_nodes: BTreeMap<NodeId, ClientId>,
}

/// A read-only view of a run's history from outside the simulation: what
/// a run that hung (a task spinning, never yielding) had recorded when it
/// was given up.
#[derive(Debug, Clone)]
pub struct HistoryTap(Arc<Mutex<State>>);

impl HistoryTap {
    /// A copy of the history so far, or `None` if the simulation hung while
    /// recording (holding the history's lock).
    pub fn snapshot(&self) -> Option<History> {
        match self.0.try_lock() {
            Ok(s) => Some(s.history.clone()),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner().history.clone()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

/// A handle to the run's history. Create it inside the simulation: its
/// clock is virtual time since creation.
#[derive(Debug, Clone)]
pub struct Recorder {
    inner: Arc<Mutex<State>>,
    clock: SimClock,
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            inner: Arc::new(Mutex::new(State::default())),
            clock: SimClock::start(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    pub fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    pub fn set_meta(&self, key: &str, value: impl Into<String>) {
        self.lock().history.meta.insert(key.to_string(), value.into());
    }

    /// A meta value recorded so far.
    pub fn meta(&self, key: &str) -> Option<String> {
        self.lock().history.meta.get(key).cloned()
    }

    pub fn invoke(&self, client: ClientId, session: Option<SessionId>, op: Op) -> OpId {
        let time = self.now_ns();
        let mut s = self.lock();
        s.next_op += 1;
        let id = s.next_op;
        trace_invoke(id, session, &op);
        if !op.is_zookeeper_call() {
            s.recipe_ops.insert(id);
        }
        s.history.events.push(Event::Invoke {
            id,
            time,
            client,
            session,
            op,
            background: crate::runtime::in_background(),
        });
        id
    }

    /// Sets the session of an op invoked before its session was known (a
    /// recipe op on a handle still connecting). Recent ops are near the end.
    pub fn set_invoke_session(&self, id: OpId, session: SessionId) {
        let mut s = self.lock();
        let found = s.history.events.iter_mut().rev().find_map(|e| match e {
            Event::Invoke { id: i, session: s, .. } if *i == id => Some(s),
            _ => None,
        });
        if let Some(s) = found {
            *s = Some(session);
        }
    }

    pub fn complete(&self, id: OpId, client: ClientId, outcome: Outcome, zxid: Option<Zxid>) {
        let time = self.now_ns();
        let mut s = self.lock();
        let recipe = s.recipe_ops.remove(&id);
        trace_complete(id, recipe, &outcome, zxid);
        s.history.events.push(Event::Complete {
            id,
            time,
            client,
            outcome,
            zxid,
        });
    }

    /// A server's applied tree changed: a txn applied (checked against the
    /// canonical sequence, and recorded as a commit by the first server to
    /// apply it) or a snapshot loaded (checked against the canonical tree).
    pub fn tree_change(&self, server: ServerId, change: &TreeChange) {
        match change {
            TreeChange::Applied {
                zxid,
                logged,
                result,
                tree,
            } => {
                let found = self.lock().replicas.applied(server, *zxid, txn_digest(logged), *tree);
                self.replica_finding(found);
                self.commit(server, *zxid, logged, result);
            }
            TreeChange::Loaded { zxid, tree } => {
                let found = self.lock().replicas.loaded(server, *zxid, *tree);
                self.replica_finding(found);
            }
        }
    }

    fn replica_finding(&self, found: Option<Finding>) {
        let Some(f) = found else { return };
        let time = self.now_ns();
        tracing::error!(target: "zkdst::history", "replica zk{} {} at {:#x} {}", f.server, f.check.name(), f.zxid, f.detail);
        self.lock().history.events.push(replica_event(time, f));
    }

    /// A server applied `zxid`; recorded once, by the first to apply it.
    pub fn commit(&self, server: ServerId, zxid: Zxid, logged: &LoggedTxn, result: &TxnResult) {
        let time = self.now_ns();
        let mut s = self.lock();
        if zxid <= s.last_commit {
            return;
        }
        s.last_commit = zxid;
        let txn = commit_record(logged, result);
        tracing::debug!(target: "zkdst::history", "commit {zxid:#x} {txn:?}");
        s.history.events.push(Event::Commit {
            time,
            server,
            zxid,
            txn,
            session: Some(logged.session),
            xid: Some(logged.xid),
        });
    }

    pub fn fault(&self, kind: impl Into<FaultStep>, targets: Vec<String>, detail: impl Into<String>) {
        let time = self.now_ns();
        let (kind, detail) = (kind.into(), detail.into());
        tracing::info!(target: "zkdst::history", "fault {kind} {} {detail}", targets.join(","));
        self.lock()
            .history
            .events
            .push(Event::Fault(FaultEvent::new(time, kind, targets, detail)));
    }

    pub fn session_event(&self, client: ClientId, session: SessionId, state: SessionState, server: Option<ServerId>) {
        let time = self.now_ns();
        tracing::info!(target: "zkdst::history", "session {session:#x} {state}{}", server.map(|s| format!(" on zk{s}")).unwrap_or_default());
        self.lock().history.events.push(Event::Session {
            time,
            client,
            session,
            state,
            server,
        });
    }

    pub fn watch_event(&self, client: ClientId, session: SessionId, event: &str, path: Option<String>) {
        let time = self.now_ns();
        tracing::debug!(target: "zkdst::history", "watch {event} {}", path.as_deref().unwrap_or(""));
        self.lock().history.events.push(Event::Watch {
            time,
            client,
            session,
            event: event.to_string(),
            path,
        });
    }

    /// The one-shot watches a client re-registered on a new connection.
    pub fn set_watches(
        &self,
        client: ClientId,
        session: SessionId,
        relative_zxid: Zxid,
        [data, exist, child]: [Vec<String>; 3],
    ) {
        let time = self.now_ns();
        tracing::debug!(target: "zkdst::history", "set-watches since {relative_zxid:#x}: data {data:?} exist {exist:?} child {child:?}");
        self.lock().history.events.push(Event::SetWatches {
            time,
            client,
            session,
            relative_zxid,
            data,
            exist,
            child,
        });
    }

    /// Names node `node` as application client `client`.
    pub fn name_client_node(&self, node: NodeId, client: ClientId) {
        self.lock().client_nodes.insert(node, client);
    }

    /// What server `server` saw on its connection `conn`, opened from node
    /// `from` (see [`zkdst_history::ConnEvent`]).
    pub fn conn_event(&self, server: ServerId, conn: u64, from: NodeId, event: ConnEvent) {
        let time = self.now_ns();
        tracing::trace!(target: "zkdst::history", "connection {conn}: {event:?}");
        let mut s = self.lock();
        let client = s.client_nodes.get(&from).copied();
        s.history.events.push(Event::Conn {
            time,
            server,
            conn,
            client,
            event,
        });
    }

    /// A lose-reply fault dropped the reply to request `xid` on its way
    /// into client node `node`.
    pub fn reply_lost(&self, node: NodeId, xid: i32) {
        let time = self.now_ns();
        tracing::info!(target: "zkdst::history", "reply to xid {xid} lost (lose-reply)");
        let mut s = self.lock();
        let client = s.client_nodes.get(&node).copied();
        s.history.events.push(Event::ReplyLost { time, client, xid });
    }

    pub fn note(&self, client: Option<ClientId>, text: impl Into<String>) {
        let time = self.now_ns();
        let text = text.into();
        tracing::info!(target: "zkdst::history", "note {text}");
        self.lock().history.events.push(Event::Note { time, client, text });
    }

    /// A copy of the history so far, ending with every server's position
    /// on the canonical sequence (stamped with the last event's time).
    pub fn history(&self) -> History {
        let s = self.lock();
        with_finals(s.history.clone(), &s)
    }

    /// A view of this history for the thread that runs the simulation: it
    /// outlives a simulation that hangs.
    pub fn tap(&self) -> HistoryTap {
        HistoryTap(self.inner.clone())
    }

    /// The history, as [`Recorder::history`] gives it, moved out instead
    /// of copied: the recorder starts over empty. For the end of a run
    /// (a copy of a long history is a sizeable share of a seed's time).
    pub fn take_history(&self) -> History {
        let mut s = self.lock();
        let h = std::mem::take(&mut s.history);
        with_finals(h, &s)
    }

    /// Number of events so far.
    pub fn len(&self) -> usize {
        self.lock().history.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `h` with every server's final position appended.
fn with_finals(mut h: History, s: &State) -> History {
    let time = h.events.last().map(Event::time).unwrap_or(0);
    h.events
        .extend(s.replicas.finals().into_iter().map(|f| replica_event(time, f)));
    h
}

fn replica_event(time: u64, f: Finding) -> Event {
    Event::Replica {
        time,
        server: f.server,
        check: f.check,
        zxid: f.zxid,
        chain: f.chain,
        expected: f.expected,
        missing: f.missing,
        applied: f.applied,
        detail: f.detail,
    }
}

/// Recipe-level ops at info, ZooKeeper calls at debug: `replay --trace`
/// reads as the story of the run at info and as the full client-level trace
/// at debug. Nothing is formatted unless a subscriber wants the event.
fn trace_invoke(id: OpId, session: Option<SessionId>, op: &Op) {
    let recipe = !op.is_zookeeper_call();
    if recipe && tracing::enabled!(target: "zkdst::history", tracing::Level::INFO) {
        tracing::info!(target: "zkdst::history", "op {id} invoke {}{}", op.describe(), in_session(session));
    } else if tracing::enabled!(target: "zkdst::history", tracing::Level::DEBUG) {
        tracing::debug!(target: "zkdst::history", "op {id} invoke {}{}", op.describe(), in_session(session));
    }
}

fn in_session(session: Option<SessionId>) -> String {
    session
        .filter(|s| *s != 0)
        .map(|s| format!(" (session {s:#x})"))
        .unwrap_or_default()
}

fn trace_complete(id: OpId, recipe: bool, outcome: &Outcome, zxid: Option<Zxid>) {
    // Formatted only when traced: this runs for every reply.
    let zxid = || zxid.map(|z| format!(" (zxid {z:#x})")).unwrap_or_default();
    if recipe && tracing::enabled!(target: "zkdst::history", tracing::Level::INFO) {
        tracing::info!(target: "zkdst::history", "op {id} {}{}", outcome.describe(), zxid());
    } else if tracing::enabled!(target: "zkdst::history", tracing::Level::DEBUG) {
        tracing::debug!(target: "zkdst::history", "op {id} {}{}", outcome.describe(), zxid());
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

/// A committed transaction as the history records it: what it did, per
/// the apply result (a session close lists the ephemerals it deleted; an
/// expiry is a close the leader issued, with xid 0; a reaper deletion that
/// found the node changed did nothing).
pub fn commit_record(logged: &LoggedTxn, result: &TxnResult) -> TxnRecord {
    match (&logged.txn, result) {
        (Txn::CloseSession { session }, TxnResult::CloseSession { deleted }) => TxnRecord::CloseSession {
            session: *session,
            expired: logged.xid == 0,
            deleted: deleted.clone(),
        },
        (_, TxnResult::Error(e)) => TxnRecord::Error {
            code: e.name().to_string(),
        },
        (txn, _) => txn_record(txn, logged.session),
    }
}

/// A transaction as the history records it.
pub fn txn_record(txn: &Txn, session: SessionId) -> TxnRecord {
    match txn {
        Txn::CreateSession { session, timeout_ms } => TxnRecord::CreateSession {
            session: *session,
            timeout_ms: *timeout_ms as i64,
        },
        Txn::CloseSession { session } => TxnRecord::CloseSession {
            session: *session,
            expired: false,
            deleted: Vec::new(),
        },
        Txn::Create {
            path,
            data,
            ephemeral_owner,
            ..
        } => TxnRecord::Create {
            path: path.clone(),
            data: Data(data.clone()),
            ephemeral_owner: *ephemeral_owner,
            session,
        },
        Txn::Delete { path } | Txn::DeleteContainer { path } => TxnRecord::Delete { path: path.clone() },
        Txn::SetData { path, data, version } => TxnRecord::SetData {
            path: path.clone(),
            data: Data(data.clone()),
            version: *version,
        },
        Txn::Check { path, .. } => TxnRecord::Check { path: path.clone() },
        Txn::Multi(txns) => TxnRecord::Multi {
            txns: txns.iter().map(|t| txn_record(t, session)).collect(),
        },
        Txn::Error(e) => TxnRecord::Error {
            code: e.name().to_string(),
        },
        Txn::MultiError { error, .. } => TxnRecord::Error {
            code: error.name().to_string(),
        },
    }
}
