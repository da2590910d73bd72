//! The server-side watch manager of one server (`DataTree.dataWatches` and
//! `childWatches`, each a 3.8 `WatchManager`).
//!
//! As in 3.8, each table keeps ONE mode per (path, session) and the later
//! registration wins (ZOOKEEPER-4466, fixed in 3.9): a standard watch set on
//! a path after a persistent one turns it back into a one-shot watch. 3.8's
//! `DataTree.addWatch` puts every persistent mode in BOTH tables, so a
//! PERSISTENT_RECURSIVE registration also overwrites the session's child
//! watch on that path — a one-shot child watch or a PERSISTENT watch set
//! before it never fires NodeChildrenChanged again (recursive mode never
//! does). Verified on 3.8.0 by the conformance suite. The client dispatches
//! each event to all of its local watchers that match.

use std::collections::{BTreeMap, BTreeSet};

use zkdst_recipes::zk::path::parent;
use zkdst_recipes::zk::{AddWatchMode, EventType, SessionId, Stat, WatchedEvent, Zxid};

use super::data_tree::DataTree;
use super::txn::Trigger;

/// A watch's mode in one table (`WatcherMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WatcherMode {
    /// One-shot.
    Standard,
    Persistent,
    PersistentRecursive,
}

/// The watch tables `removeWatches` names (3.8's `WatcherType`; the
/// persistent types are 3.9's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchKind {
    Children,
    Data,
    Any,
}

impl WatchKind {
    pub fn from_i32(v: i32) -> Option<WatchKind> {
        match v {
            1 => Some(WatchKind::Children),
            2 => Some(WatchKind::Data),
            3 => Some(WatchKind::Any),
            _ => None,
        }
    }
}

/// One `WatchManager`: path → session → mode, and the reverse index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct WatchTable {
    by_path: BTreeMap<String, BTreeMap<SessionId, WatcherMode>>,
    by_session: BTreeMap<SessionId, BTreeSet<String>>,
    recursive: usize,
}

impl WatchTable {
    fn add(&mut self, path: &str, session: SessionId, mode: WatcherMode) {
        let prev = self.by_path.entry(path.to_string()).or_default().insert(session, mode);
        if prev == Some(WatcherMode::PersistentRecursive) {
            self.recursive -= 1;
        }
        if mode == WatcherMode::PersistentRecursive {
            self.recursive += 1;
        }
        self.by_session.entry(session).or_default().insert(path.to_string());
    }

    fn remove(&mut self, path: &str, session: SessionId) {
        if let Some(watchers) = self.by_path.get_mut(path) {
            if watchers.remove(&session) == Some(WatcherMode::PersistentRecursive) {
                self.recursive -= 1;
            }
            if watchers.is_empty() {
                self.by_path.remove(path);
            }
        }
        if let Some(paths) = self.by_session.get_mut(&session) {
            paths.remove(path);
            if paths.is_empty() {
                self.by_session.remove(&session);
            }
        }
    }

    fn has(&self, path: &str, session: SessionId) -> bool {
        self.by_path.get(path).is_some_and(|w| w.contains_key(&session))
    }

    fn remove_session(&mut self, session: SessionId) {
        let paths = self.by_session.get(&session).cloned().unwrap_or_default();
        for path in paths {
            self.remove(&path, session);
        }
    }

    /// `WatchManager.triggerWatch`: the sessions whose watch fires for
    /// `event_type` on `path` — watches on the path itself, and recursive
    /// watches on it or any ancestor (never for NodeChildrenChanged).
    /// One-shot watches that fire are removed.
    fn trigger(&mut self, path: &str, event_type: EventType) -> BTreeSet<SessionId> {
        let mut fired = BTreeSet::new();
        let mut spent = Vec::new();
        let mut local = path;
        let mut at_parent = false;
        loop {
            if let Some(watchers) = self.by_path.get(local) {
                for (&session, &mode) in watchers {
                    match mode {
                        WatcherMode::PersistentRecursive => {
                            if event_type != EventType::NodeChildrenChanged {
                                fired.insert(session);
                            }
                        }
                        _ if at_parent => {}
                        WatcherMode::Persistent => {
                            fired.insert(session);
                        }
                        WatcherMode::Standard => {
                            fired.insert(session);
                            spent.push(session);
                        }
                    }
                }
            }
            if self.recursive == 0 || local == "/" {
                break;
            }
            local = parent(local);
            at_parent = true;
        }
        for session in spent {
            self.remove(path, session);
        }
        fired
    }

    fn len(&self) -> usize {
        self.by_path.values().map(BTreeMap::len).sum()
    }
}

/// The watches of every session connected to one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchManager {
    data: WatchTable,
    child: WatchTable,
}

impl WatchManager {
    pub fn new() -> WatchManager {
        WatchManager::default()
    }

    /// A one-shot data watch: set by `exists` (even on a missing node) and by
    /// `getData` when the node exists. Fires NodeCreated, NodeDeleted or
    /// NodeDataChanged.
    pub fn add_data_watch(&mut self, path: &str, session: SessionId) {
        self.data.add(path, session, WatcherMode::Standard);
    }

    /// A one-shot child watch (`getChildren`): fires NodeChildrenChanged, or
    /// NodeDeleted when the node itself goes.
    pub fn add_child_watch(&mut self, path: &str, session: SessionId) {
        self.child.add(path, session, WatcherMode::Standard);
    }

    /// `addWatch`: both modes go in both tables (3.8's `DataTree.addWatch`;
    /// 3.9 keeps PERSISTENT_RECURSIVE out of the child table).
    pub fn add_persistent(&mut self, path: &str, session: SessionId, mode: AddWatchMode) {
        let mode = match mode {
            AddWatchMode::Persistent => WatcherMode::Persistent,
            AddWatchMode::PersistentRecursive => WatcherMode::PersistentRecursive,
        };
        self.data.add(path, session, mode);
        self.child.add(path, session, mode);
    }

    /// `removeWatches` / `checkWatches` (3.8's `DataTree.removeWatch` and
    /// `containsWatcher`): the session's watch on `path` in the table the
    /// type names — 1 children, 2 data, 3 any — of any mode. Whether there
    /// was one; `remove` false only looks.
    pub fn remove_watch(&mut self, path: &str, session: SessionId, kind: WatchKind, remove: bool) -> bool {
        let mut found = false;
        if matches!(kind, WatchKind::Children | WatchKind::Any) && self.child.has(path, session) {
            found = true;
            if remove {
                self.child.remove(path, session);
            }
        }
        if matches!(kind, WatchKind::Data | WatchKind::Any) && self.data.has(path, session) {
            found = true;
            if remove {
                self.data.remove(path, session);
            }
        }
        found
    }

    /// Drops every watch of the session (its connection closed).
    pub fn remove_session(&mut self, session: SessionId) {
        self.data.remove_session(session);
        self.child.remove_session(session);
    }

    /// The events the triggers of one applied txn deliver, in trigger order;
    /// within one trigger, by session id. A session gets at most one event
    /// per trigger (a NodeDeleted for a path it watches both ways fires once).
    pub fn trigger(&mut self, triggers: &[Trigger]) -> Vec<(SessionId, WatchedEvent)> {
        let mut events = Vec::new();
        for t in triggers {
            let sessions: Vec<SessionId> = match t.event_type {
                EventType::NodeCreated | EventType::NodeDataChanged => {
                    self.data.trigger(&t.path, t.event_type).into_iter().collect()
                }
                EventType::NodeChildrenChanged => self.child.trigger(&t.path, t.event_type).into_iter().collect(),
                EventType::NodeDeleted => {
                    // Child watches fired by the delete are consumed, but a
                    // session already notified through a data watch is
                    // suppressed (`triggerWatch(..., processed)`).
                    let data = self.data.trigger(&t.path, t.event_type);
                    let child = self.child.trigger(&t.path, t.event_type);
                    let extra: Vec<SessionId> = child.difference(&data).copied().collect();
                    data.into_iter().chain(extra).collect()
                }
                _ => Vec::new(),
            };
            events.extend(
                sessions
                    .into_iter()
                    .map(|s| (s, WatchedEvent::node(t.event_type, t.path.clone()))),
            );
        }
        events
    }

    /// `exists` with a watch: the node's Stat, and a data watch set even if
    /// the node does not exist.
    pub fn exists_watch(&mut self, tree: &DataTree, path: &str, session: SessionId) -> Option<Stat> {
        self.add_data_watch(path, session);
        tree.stat(path)
    }

    /// `getData` with a watch: no watch is set when the node does not exist.
    pub fn get_data_watch(&mut self, tree: &DataTree, path: &str, session: SessionId) -> Option<(Vec<u8>, Stat)> {
        let found = tree.get_data(path)?;
        self.add_data_watch(path, session);
        Some(found)
    }

    /// `getChildren` with a watch: no watch is set when the node does not
    /// exist. Children are sorted; the server layer shuffles them.
    pub fn get_children_watch(
        &mut self,
        tree: &DataTree,
        path: &str,
        session: SessionId,
    ) -> Option<(Vec<String>, Stat)> {
        let found = tree.get_children(path)?;
        self.add_child_watch(path, session);
        Some(found)
    }

    /// `SetWatches` after a reconnect (`DataTree.setWatches`): each watch the
    /// client still holds either fires now, if the node changed past
    /// `relative_zxid` (the client's last seen zxid), or is re-registered.
    /// Persistent ones are always re-added. Returns the events to send to
    /// the session, in ZooKeeper's order.
    #[allow(clippy::too_many_arguments)]
    pub fn set_watches(
        &mut self,
        tree: &DataTree,
        session: SessionId,
        relative_zxid: Zxid,
        data: &[String],
        exist: &[String],
        child: &[String],
        persistent: &[String],
        persistent_recursive: &[String],
    ) -> Vec<WatchedEvent> {
        let mut events = Vec::new();
        for path in data {
            match tree.stat(path) {
                None => events.push(WatchedEvent::node(EventType::NodeDeleted, path.clone())),
                Some(s) if s.mzxid > relative_zxid => {
                    events.push(WatchedEvent::node(EventType::NodeDataChanged, path.clone()))
                }
                Some(_) => self.add_data_watch(path, session),
            }
        }
        for path in exist {
            if tree.exists(path) {
                events.push(WatchedEvent::node(EventType::NodeCreated, path.clone()));
            } else {
                self.add_data_watch(path, session);
            }
        }
        for path in child {
            match tree.stat(path) {
                None => events.push(WatchedEvent::node(EventType::NodeDeleted, path.clone())),
                Some(s) if s.pzxid > relative_zxid => {
                    events.push(WatchedEvent::node(EventType::NodeChildrenChanged, path.clone()))
                }
                Some(_) => self.add_child_watch(path, session),
            }
        }
        for path in persistent {
            self.add_persistent(path, session, AddWatchMode::Persistent);
        }
        for path in persistent_recursive {
            self.add_persistent(path, session, AddWatchMode::PersistentRecursive);
        }
        events
    }

    /// Number of (path, session) registrations in both tables, as `mntr`'s
    /// `zk_watch_count` counts them.
    pub fn watch_count(&self) -> usize {
        self.data.len() + self.child.len()
    }

    /// Number of registrations the session holds in both tables.
    pub fn session_watch_count(&self, session: SessionId) -> usize {
        let n = |t: &WatchTable| t.by_session.get(&session).map_or(0, BTreeSet::len);
        n(&self.data) + n(&self.child)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fire(w: &mut WatchManager, path: &str, event_type: EventType) -> Vec<(SessionId, EventType, String)> {
        w.trigger(&[Trigger::new(path, event_type)])
            .into_iter()
            .map(|(s, e)| (s, e.event_type, e.path.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn one_shot_watches_fire_once() {
        let mut w = WatchManager::new();
        w.add_data_watch("/a", 1);
        w.add_data_watch("/a", 2);
        assert_eq!(w.watch_count(), 2);
        let ev = fire(&mut w, "/a", EventType::NodeDataChanged);
        assert_eq!(
            ev,
            vec![
                (1, EventType::NodeDataChanged, "/a".into()),
                (2, EventType::NodeDataChanged, "/a".into())
            ]
        );
        assert!(fire(&mut w, "/a", EventType::NodeDataChanged).is_empty());
        assert_eq!(w.watch_count(), 0);
    }

    #[test]
    fn data_and_child_watch_get_one_node_deleted() {
        let mut w = WatchManager::new();
        w.add_data_watch("/a", 1);
        w.add_child_watch("/a", 1);
        w.add_child_watch("/a", 2);
        let ev = fire(&mut w, "/a", EventType::NodeDeleted);
        assert_eq!(
            ev,
            vec![
                (1, EventType::NodeDeleted, "/a".into()),
                (2, EventType::NodeDeleted, "/a".into())
            ]
        );
        assert_eq!(w.watch_count(), 0);
    }

    #[test]
    fn child_data_change_does_not_fire_parent_child_watch() {
        let mut w = WatchManager::new();
        w.add_child_watch("/p", 1);
        assert!(fire(&mut w, "/p/c", EventType::NodeDataChanged).is_empty());
        assert_eq!(fire(&mut w, "/p", EventType::NodeChildrenChanged).len(), 1);
    }

    #[test]
    fn remove_session_drops_everything() {
        let mut w = WatchManager::new();
        w.add_data_watch("/a", 1);
        w.add_child_watch("/b", 1);
        w.add_persistent("/c", 1, AddWatchMode::PersistentRecursive);
        w.add_data_watch("/a", 2);
        assert_eq!(w.session_watch_count(1), 4);
        w.remove_session(1);
        assert_eq!(w.session_watch_count(1), 0);
        assert_eq!(w.watch_count(), 1);
        assert!(fire(&mut w, "/c/x", EventType::NodeCreated).is_empty());
        assert_eq!(w.data.recursive, 0);
        assert_eq!(w.child.recursive, 0);
    }

    #[test]
    fn recursive_overwrites_the_sessions_child_watch_zookeeper_4466() {
        // A one-shot child watch, then a recursive watch by the same session
        // on the same path: the child watch never fires (3.8.0).
        let mut w = WatchManager::new();
        w.add_child_watch("/a", 1);
        w.add_persistent("/a", 1, AddWatchMode::PersistentRecursive);
        w.add_child_watch("/a", 2);
        assert_eq!(
            fire(&mut w, "/a", EventType::NodeChildrenChanged),
            vec![(2, EventType::NodeChildrenChanged, "/a".to_string())]
        );
        assert_eq!(fire(&mut w, "/a/b", EventType::NodeCreated).len(), 1);
        // PERSISTENT then PERSISTENT_RECURSIVE: no more NodeChildrenChanged.
        let mut w = WatchManager::new();
        w.add_persistent("/p", 1, AddWatchMode::Persistent);
        w.add_persistent("/p", 1, AddWatchMode::PersistentRecursive);
        assert!(fire(&mut w, "/p", EventType::NodeChildrenChanged).is_empty());
        assert_eq!(fire(&mut w, "/p", EventType::NodeDataChanged).len(), 1);
        // A descendant's delete reaches the session once.
        assert_eq!(fire(&mut w, "/p/x", EventType::NodeDeleted).len(), 1);
    }
}
