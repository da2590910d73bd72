//! One-shot watches, judged against the commit stream (ZooKeeper
//! Programmer's Guide, "ZooKeeper Watches"; `DataTree`'s triggers):
//!
//! - a successful watched read leaves a watch on its path, on the server
//!   that answered: `getData` and `exists` a data watch (`exists` also on a
//!   missing node), `getChildren` a child watch;
//! - the first committed change after the read's reply zxid fires it (a
//!   create, delete or setData of the path for a data watch; a create or
//!   delete of a child, or the path's delete, for a child watch), once;
//! - on the connection that set it, the client sees the event before any
//!   reply with a zxid at or past that change (**watch-missed** if not);
//! - no event comes without a watch pending on its path, and a change of
//!   that path after the watch was set (**watch-spurious**).
//!
//! After a reconnect the client re-registers with SetWatches the watches
//! its application still holds (a dropped handle is not re-registered:
//! the simulated client and zookeeper-client both prune them), with the
//! last zxid it saw; the server fires at once for what changed since, and
//! holds the rest. The history records what was sent (`SetWatches`): a
//! re-registered data or child watch is judged again from that zxid, one
//! not sent is gone. Between the disconnection and SetWatches, and for an
//! `exists` watch on a missing node (lost if the node is created and
//! deleted while disconnected: documented), a watch is judged for
//! spuriousness only; so is every watch of a history without SetWatches
//! events past a disconnection.
//!
//! This needs the events as the client read them off its connection, in
//! order with the replies: history meta [`WATCH_EVENTS`] = `"wire"` (the
//! simulator's own client records so). A library's watchers record events
//! as they are delivered, after the fact, so its histories are not judged.

use std::collections::BTreeMap;

use crate::history::{Event, History, Op, OpId, Operation, Outcome, SessionId, Time, TxnRecord, Value, Zxid};
use crate::properties::{CheckResult, Params, Violation, ViolationKind};

use super::replay::{collect_commits, CommitInfo};

/// The registry name of this checker.
pub const NAME: &str = "watches";

/// History meta: how watch events were recorded. `"wire"`: as the client
/// read each notification off its connection, in order with the replies.
pub const WATCH_EVENTS: &str = "watch_events";
pub const WATCH_EVENTS_WIRE: &str = "wire";

/// The server's two watch tables a one-shot watch lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Data,
    Child,
}

/// What a node event fires: the watch classes its type belongs to.
fn classes_of(event: &str) -> &'static [Class] {
    match event {
        "NodeCreated" | "NodeDataChanged" => &[Class::Data],
        "NodeChildrenChanged" => &[Class::Child],
        "NodeDeleted" => &[Class::Data, Class::Child],
        _ => &[],
    }
}

/// What each committed change fires, per (path, class): zxid and the
/// first time any server applied it, in zxid order.
type Triggers = BTreeMap<(String, Class), Vec<(Zxid, Time)>>;

fn triggers(commits: &BTreeMap<Zxid, CommitInfo>) -> Triggers {
    fn parent(path: &str) -> &str {
        super::tree::parent_of(path).unwrap_or("/")
    }
    fn add(t: &mut Triggers, txn: &TxnRecord, at: (Zxid, Time)) {
        let mut fire = |path: &str, class| t.entry((path.to_string(), class)).or_default().push(at);
        match txn {
            TxnRecord::Create { path, .. } => {
                fire(path, Class::Data);
                fire(parent(path), Class::Child);
            }
            TxnRecord::Delete { path } => {
                fire(path, Class::Data);
                fire(path, Class::Child);
                fire(parent(path), Class::Child);
            }
            TxnRecord::SetData { path, .. } => fire(path, Class::Data),
            TxnRecord::CloseSession { deleted, .. } => {
                for path in deleted {
                    add(t, &TxnRecord::Delete { path: path.clone() }, at);
                }
            }
            TxnRecord::Multi { txns } => {
                for txn in txns {
                    add(t, txn, at);
                }
            }
            TxnRecord::CreateSession { .. } | TxnRecord::Check { .. } | TxnRecord::Error { .. } => {}
        }
    }
    let mut t = Triggers::new();
    for (zxid, c) in commits {
        add(&mut t, &c.txn, (*zxid, c.first_time));
    }
    t
}

/// A watch the server holds for a session.
#[derive(Debug, Clone)]
struct Pending {
    read: OpId,
    client: crate::history::ClientId,
    zxid: Zxid,
    /// Its session has been disconnected since it was set (or since it
    /// was re-registered): judged for spuriousness only (module doc).
    disconnected: bool,
    /// The change that fires it: the first after `zxid`.
    fired_by: Option<(Zxid, Time)>,
}

fn first_after(t: &Triggers, key: &(String, Class), zxid: Zxid) -> Option<(Zxid, Time)> {
    let v = t.get(key)?;
    v.get(v.partition_point(|(z, _)| *z <= zxid)).copied()
}

/// The watch a successful read leaves, if any.
fn watch_set_by(o: &Operation) -> Option<(&str, Class)> {
    let Some(Outcome::Ok { value }) = &o.outcome else {
        return None;
    };
    match (&o.op, value) {
        (Op::GetData { path, watch: true }, Value::Data { .. })
        | (Op::Exists { path, watch: true }, Value::Stat { .. }) => Some((path, Class::Data)),
        (Op::GetChildren { path, watch: true }, Value::Children { .. }) => Some((path, Class::Child)),
        _ => None,
    }
}

/// Checks one-shot watch delivery (see the module doc; a pass with a note
/// for histories recorded otherwise or without Commit events) and each
/// client's session states (`states`).
pub fn check_ops(h: &History, ops: &[Operation], _params: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    super::states::transitions(h, &mut r);
    // Divergent commits are zk-consistency's and replicas' to report.
    let commits = collect_commits(h, &mut CheckResult::new(NAME));
    one_shot(h, ops, &commits, &mut r);
    r
}

fn one_shot(h: &History, ops: &[Operation], commits: &BTreeMap<Zxid, CommitInfo>, r: &mut CheckResult) {
    if h.meta.get(WATCH_EVENTS).map(String::as_str) != Some(WATCH_EVENTS_WIRE) {
        r.note("watch delivery not judged: the history does not record watch events as the client read them off its connection (meta watch_events = \"wire\")");
        return;
    }
    if commits.is_empty() {
        r.note("watch delivery not judged: no Commit events to say which change fires a watch");
        return;
    }
    let triggers = triggers(commits);
    let by_id: BTreeMap<OpId, &Operation> = ops.iter().map(|o| (o.id, o)).collect();
    let mut pending: BTreeMap<SessionId, BTreeMap<(String, Class), Pending>> = BTreeMap::new();
    let (mut set, mut fired) = (0usize, 0usize);
    for e in &h.events {
        match e {
            Event::Session { session, state, .. } => {
                if state.is_end() {
                    pending.remove(session);
                } else if *state == crate::history::SessionState::Disconnected {
                    for p in pending.entry(*session).or_default().values_mut() {
                        p.disconnected = true;
                    }
                }
            }
            Event::SetWatches {
                session,
                relative_zxid,
                data,
                exist,
                child,
                ..
            } => {
                // The server holds what the client re-registered, and fires
                // at once for what changed since `relative_zxid`: from here
                // a watch on a node that existed (data) or on children is
                // judged again; an `exists` watch on a missing node stays
                // judged for spuriousness only (created and deleted while
                // disconnected, it is lost: documented).
                let watches = pending.entry(*session).or_default();
                watches.retain(|(path, class), _| match class {
                    Class::Data => data.contains(path) || exist.contains(path),
                    Class::Child => child.contains(path),
                });
                for ((path, class), p) in watches.iter_mut() {
                    if *class == Class::Child || data.contains(path) {
                        p.disconnected = false;
                        p.zxid = *relative_zxid;
                        p.fired_by = first_after(&triggers, &(path.clone(), *class), *relative_zxid);
                    }
                }
            }
            Event::Complete {
                id,
                time,
                zxid: Some(z),
                outcome: Outcome::Ok { .. },
                ..
            } => {
                let Some(o) = by_id.get(id) else { continue };
                let Some(session) = o.session else { continue };
                let watches = pending.entry(session).or_default();
                let missed: Vec<(String, Class)> = watches
                    .iter()
                    .filter(|(_, p)| !p.disconnected)
                    .filter(|(_, p)| p.fired_by.is_some_and(|(f, _)| f <= *z))
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in missed {
                    let Some(p) = watches.remove(&key) else { continue };
                    let (f, ft) = p.fired_by.unwrap_or_default();
                    r.violation(
                        Violation::new(
                            ViolationKind::WatchMissed,
                            format!(
                                "client {}'s {:?} watch on {} (set by op {} at zxid {:#x}) should have fired on the change at zxid {f:#x}; the client got op {}'s reply at zxid {z:#x} without the event",
                                p.client, key.1, key.0, p.read, p.zxid, o.id
                            ),
                        )
                        .ops([p.read, o.id])
                        .clients([p.client])
                        .times([ft, *time]),
                    );
                }
                if let Some((path, class)) = watch_set_by(o) {
                    let key = (path.to_string(), class);
                    let replace = watches.get(&key).is_none_or(|p| p.disconnected);
                    if replace {
                        set += 1;
                        let fired_by = first_after(&triggers, &key, *z);
                        watches.insert(
                            key,
                            Pending {
                                read: o.id,
                                client: o.client,
                                zxid: *z,
                                disconnected: false,
                                fired_by,
                            },
                        );
                    }
                }
            }
            Event::Watch {
                time,
                client,
                session,
                event,
                path: Some(path),
            } => {
                let classes = classes_of(event);
                if classes.is_empty() {
                    continue;
                }
                fired += 1;
                let watches = pending.entry(*session).or_default();
                let matched: Vec<Pending> = classes
                    .iter()
                    .filter_map(|c| watches.remove(&(path.clone(), *c)).map(|p| (c, p)))
                    .filter(|(c, p)| {
                        // Some change of the path since the watch was set,
                        // applied by the time the event came.
                        first_after(&triggers, &(path.clone(), **c), p.zxid).is_some_and(|(_, t)| t <= *time)
                    })
                    .map(|(_, p)| p)
                    .collect();
                if matched.is_empty() {
                    r.violation(
                        Violation::new(
                            ViolationKind::WatchSpurious,
                            format!(
                                "client {client} got {event} for {path} with no watch on it that a change since had fired (a read that set one and returned, not fired yet, and a committed change of {path} after its reply)"
                            ),
                        )
                        .clients([*client])
                        .times([*time]),
                    );
                }
            }
            _ => {}
        }
    }
    r.figure("watches_set", set as f64);
    r.figure("watch_events", fired as f64);
}
