//! The client's watch tables (ZooKeeper's ZKWatchManager): which local
//! watches a notification fires, and what to re-register after a reconnect.

use std::collections::BTreeMap;

use zkdst_recipes::zk::{
    AddWatchMode, EventType, OneshotWatchSender, PersistentWatchSender, SessionState, WatchedEvent,
};

/// Where a one-shot watch was registered: `exists` on an existing node and
/// `getData` go to the data table, `exists` on a missing node to the exist
/// table, `getChildren` to the child table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchKind {
    Data,
    Exist,
    Child,
}

#[derive(Default)]
pub struct ClientWatches {
    data: BTreeMap<String, Vec<OneshotWatchSender>>,
    exist: BTreeMap<String, Vec<OneshotWatchSender>>,
    child: BTreeMap<String, Vec<OneshotWatchSender>>,
    persistent: BTreeMap<String, Vec<PersistentWatchSender>>,
    recursive: BTreeMap<String, Vec<PersistentWatchSender>>,
}

impl ClientWatches {
    pub fn add(&mut self, kind: WatchKind, path: &str, w: OneshotWatchSender) {
        let table = match kind {
            WatchKind::Data => &mut self.data,
            WatchKind::Exist => &mut self.exist,
            WatchKind::Child => &mut self.child,
        };
        table.entry(path.to_string()).or_default().push(w);
    }

    pub fn add_persistent(&mut self, path: &str, mode: AddWatchMode, w: PersistentWatchSender) {
        let table = match mode {
            AddWatchMode::Persistent => &mut self.persistent,
            AddWatchMode::PersistentRecursive => &mut self.recursive,
        };
        table.entry(path.to_string()).or_default().push(w);
    }

    /// Delivers a notification; returns how many local watchers got it.
    pub fn deliver(&mut self, event_type: EventType, path: &str) -> usize {
        let ev = WatchedEvent::node(event_type, path);
        let mut fired: Vec<OneshotWatchSender> = Vec::new();
        let mut take = |t: &mut BTreeMap<String, Vec<OneshotWatchSender>>| {
            if let Some(v) = t.remove(path) {
                fired.extend(v);
            }
        };
        match event_type {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                take(&mut self.data);
                take(&mut self.exist);
            }
            EventType::NodeChildrenChanged => take(&mut self.child),
            EventType::NodeDeleted => {
                take(&mut self.data);
                take(&mut self.exist);
                take(&mut self.child);
            }
            _ => {}
        }
        let mut n = 0;
        for w in fired {
            if w.send(ev.clone()) {
                n += 1;
            }
        }
        if let Some(v) = self.persistent.get_mut(path) {
            v.retain(|w| !w.is_closed());
            for w in v.iter() {
                if w.send(ev.clone()) {
                    n += 1;
                }
            }
        }
        if event_type != EventType::NodeChildrenChanged {
            for (p, v) in self.recursive.iter_mut() {
                if is_self_or_ancestor(p, path) {
                    v.retain(|w| !w.is_closed());
                    for w in v.iter() {
                        if w.send(ev.clone()) {
                            n += 1;
                        }
                    }
                }
            }
        }
        n
    }

    /// Paths to re-register with SetWatches: (data, exist, child,
    /// persistent, recursive). Dropped watch handles are forgotten.
    #[allow(clippy::type_complexity)]
    pub fn for_set_watches(&mut self) -> (Vec<String>, Vec<String>, Vec<String>, Vec<String>, Vec<String>) {
        fn live_once(t: &mut BTreeMap<String, Vec<OneshotWatchSender>>) -> Vec<String> {
            t.retain(|_, v| {
                v.retain(|w| !w.is_canceled());
                !v.is_empty()
            });
            t.keys().cloned().collect()
        }
        fn live_persistent(t: &mut BTreeMap<String, Vec<PersistentWatchSender>>) -> Vec<String> {
            t.retain(|_, v| {
                v.retain(|w| !w.is_closed());
                !v.is_empty()
            });
            t.keys().cloned().collect()
        }
        (
            live_once(&mut self.data),
            live_once(&mut self.exist),
            live_once(&mut self.child),
            live_persistent(&mut self.persistent),
            live_persistent(&mut self.recursive),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
            && self.exist.is_empty()
            && self.child.is_empty()
            && self.persistent.is_empty()
            && self.recursive.is_empty()
    }

    /// A connection lost (Disconnected) or re-established (SyncConnected):
    /// every persistent watch gets the session event, as every watcher does
    /// in ZooKeeper's Java client and every persistent watcher does in
    /// `zookeeper-client`. (One-shot watches get only the terminal event:
    /// the `OneshotWatch` contract.)
    pub fn session_event(&mut self, state: SessionState) {
        let ev = WatchedEvent::session(state);
        for t in [&mut self.persistent, &mut self.recursive] {
            for v in t.values_mut() {
                v.retain(|w| !w.is_closed());
                for w in v.iter() {
                    w.send(ev.clone());
                }
            }
        }
    }

    /// The session ended: every watcher gets the terminal event, once.
    pub fn end(&mut self, state: SessionState) {
        let ev = WatchedEvent::session(state);
        for t in [&mut self.data, &mut self.exist, &mut self.child] {
            for (_, v) in std::mem::take(t) {
                for w in v {
                    w.send(ev.clone());
                }
            }
        }
        for t in [&mut self.persistent, &mut self.recursive] {
            for (_, v) in std::mem::take(t) {
                for w in v {
                    w.send(ev.clone());
                }
            }
        }
    }
}

fn is_self_or_ancestor(ancestor: &str, path: &str) -> bool {
    ancestor == path
        || ancestor == "/"
        || (path.starts_with(ancestor) && path.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkdst_recipes::zk::{OneshotWatch, PersistentWatch};

    #[test]
    fn delete_fires_data_exist_and_child_watches() {
        let mut w = ClientWatches::default();
        let (s1, _r1) = OneshotWatch::channel();
        let (s2, _r2) = OneshotWatch::channel();
        let (s3, _r3) = OneshotWatch::channel();
        w.add(WatchKind::Data, "/a", s1);
        w.add(WatchKind::Child, "/a", s2);
        w.add(WatchKind::Child, "/b", s3);
        assert_eq!(w.deliver(EventType::NodeDeleted, "/a"), 2);
        assert_eq!(w.deliver(EventType::NodeDeleted, "/a"), 0, "one-shot");
        assert_eq!(
            w.deliver(EventType::NodeDataChanged, "/b"),
            0,
            "child watch ignores data changes"
        );
    }

    #[test]
    fn recursive_watches_see_descendants_but_not_child_events() {
        let mut w = ClientWatches::default();
        let (s, _r) = PersistentWatch::channel();
        w.add_persistent("/r", AddWatchMode::PersistentRecursive, s);
        assert_eq!(w.deliver(EventType::NodeCreated, "/r/a/b"), 1);
        assert_eq!(w.deliver(EventType::NodeChildrenChanged, "/r"), 0);
        assert_eq!(w.deliver(EventType::NodeCreated, "/rx"), 0);
        assert_eq!(w.deliver(EventType::NodeDataChanged, "/r"), 1);
    }

    #[test]
    fn set_watches_lists_only_live_watches() {
        let mut w = ClientWatches::default();
        let (s1, r1) = OneshotWatch::channel();
        let (s2, _r2) = OneshotWatch::channel();
        w.add(WatchKind::Exist, "/x", s1);
        w.add(WatchKind::Data, "/y", s2);
        drop(r1);
        let (data, exist, ..) = w.for_set_watches();
        assert_eq!(data, vec!["/y".to_string()]);
        assert!(exist.is_empty());
    }
}
