//! §1.8: which read sets which watch, which write fires it, SetWatches,
//! persistent and recursive watches — through real txns.

use zkdst_recipes::zk::{AddWatchMode, CreateMode, EventType, SessionId};

use super::*;

/// A server plus its watch manager; writes deliver their events.
struct Watched {
    s: Server,
    w: WatchManager,
}

impl Watched {
    fn new() -> Watched {
        Watched {
            s: Server::new(),
            w: WatchManager::new(),
        }
    }

    fn write(&mut self, req: WriteRequest) -> Vec<(SessionId, EventType, String)> {
        let a = self.s.run(1, req);
        self.w
            .trigger(&a.triggers)
            .into_iter()
            .map(|(s, e)| (s, e.event_type, e.path.unwrap_or_default()))
            .collect()
    }

    fn create(&mut self, path: &str) -> Vec<(SessionId, EventType, String)> {
        self.write(WriteRequest::Create {
            path: path.into(),
            data: vec![],
            mode: CreateMode::Persistent,
        })
    }

    fn delete(&mut self, path: &str) -> Vec<(SessionId, EventType, String)> {
        self.write(WriteRequest::Delete {
            path: path.into(),
            version: -1,
        })
    }

    fn set(&mut self, path: &str) -> Vec<(SessionId, EventType, String)> {
        self.write(WriteRequest::SetData {
            path: path.into(),
            data: vec![1],
            version: -1,
        })
    }
}

fn ev(session: SessionId, t: EventType, path: &str) -> (SessionId, EventType, String) {
    (session, t, path.to_string())
}

#[test]
fn get_data_on_missing_sets_no_watch_but_exists_does() {
    let mut x = Watched::new();
    assert_eq!(x.w.get_data_watch(&x.s.tree, "/a", 1), None);
    assert_eq!(x.w.get_children_watch(&x.s.tree, "/a", 1), None);
    assert_eq!(x.w.watch_count(), 0);
    assert_eq!(x.w.exists_watch(&x.s.tree, "/a", 2), None);
    assert_eq!(x.w.watch_count(), 1);
    assert_eq!(x.create("/a"), vec![ev(2, EventType::NodeCreated, "/a")]);
}

#[test]
fn which_write_fires_which_watch() {
    let mut x = Watched::new();
    x.create("/p");
    x.create("/p/c");
    let t = x.s.tree.clone();
    assert!(x.w.get_data_watch(&t, "/p/c", 1).is_some());
    assert!(x.w.get_children_watch(&t, "/p", 2).is_some());
    // a child's data change does not fire the parent's child watch
    assert_eq!(x.set("/p/c"), vec![ev(1, EventType::NodeDataChanged, "/p/c")]);
    // one-shot: gone after firing
    assert!(x.set("/p/c").is_empty());
    assert_eq!(x.create("/p/d"), vec![ev(2, EventType::NodeChildrenChanged, "/p")]);
    assert!(x.create("/p/e").is_empty());
    // delete: data + child watch on the path → one NodeDeleted; parent child watch
    let t = x.s.tree.clone();
    assert!(x.w.exists_watch(&t, "/p/d", 1).is_some());
    assert!(x.w.get_children_watch(&t, "/p/d", 1).is_some());
    assert!(x.w.get_children_watch(&t, "/p", 3).is_some());
    assert_eq!(
        x.delete("/p/d"),
        vec![
            ev(1, EventType::NodeDeleted, "/p/d"),
            ev(3, EventType::NodeChildrenChanged, "/p")
        ]
    );
    assert_eq!(x.w.watch_count(), 0);
}

#[test]
fn closing_a_session_fires_every_watcher_of_its_ephemerals() {
    let mut x = Watched::new();
    x.s.run(3, WriteRequest::CreateSession { timeout_ms: 6000 });
    x.write(WriteRequest::Create {
        path: "/eph".into(),
        data: vec![],
        mode: CreateMode::Ephemeral,
    });
    let t = x.s.tree.clone();
    x.w.exists_watch(&t, "/eph", 2);
    x.w.exists_watch(&t, "/eph", 3);
    x.w.get_children_watch(&t, "/", 3);
    assert_eq!(
        x.write(WriteRequest::CloseSession),
        vec![
            ev(2, EventType::NodeDeleted, "/eph"),
            ev(3, EventType::NodeDeleted, "/eph"),
            ev(3, EventType::NodeChildrenChanged, "/")
        ]
    );
}

#[test]
fn set_watches_table() {
    let mut x = Watched::new();
    for p in ["/gone", "/changed", "/same", "/kids", "/quiet"] {
        x.create(p);
    }
    x.create("/kids/a");
    let last_seen = x.s.tree.last_zxid();
    // while the client is disconnected:
    x.delete("/gone");
    x.set("/changed");
    x.create("/kids/b");
    x.create("/born");
    x.create("/flash");
    x.delete("/flash");
    let s = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let events = x.w.set_watches(
        &x.s.tree,
        1,
        last_seen,
        &s(&["/gone", "/changed", "/same"]),
        &s(&["/born", "/flash", "/never"]),
        &s(&["/gone", "/kids", "/quiet"]),
        &s(&["/pers"]),
        &s(&["/rec"]),
    );
    let got: Vec<(EventType, String)> = events
        .into_iter()
        .map(|e| (e.event_type, e.path.unwrap_or_default()))
        .collect();
    assert_eq!(
        got,
        vec![
            (EventType::NodeDeleted, "/gone".to_string()),
            (EventType::NodeDataChanged, "/changed".to_string()),
            (EventType::NodeCreated, "/born".to_string()),
            (EventType::NodeDeleted, "/gone".to_string()),
            (EventType::NodeChildrenChanged, "/kids".to_string()),
        ]
    );
    // re-registered: /same (data), /flash and /never (exist: the documented
    // miss — created and deleted while disconnected, no event), /quiet
    // (child), /pers (2 tables), /rec (2 tables: 3.8's addWatch)
    assert_eq!(x.w.session_watch_count(1), 8);
    assert_eq!(x.set("/same"), vec![ev(1, EventType::NodeDataChanged, "/same")]);
    assert_eq!(x.create("/flash"), vec![ev(1, EventType::NodeCreated, "/flash")]);
    assert_eq!(
        x.create("/quiet/a"),
        vec![ev(1, EventType::NodeChildrenChanged, "/quiet")]
    );
    assert_eq!(x.create("/rec"), vec![ev(1, EventType::NodeCreated, "/rec")]);
    assert_eq!(x.create("/pers"), vec![ev(1, EventType::NodeCreated, "/pers")]);
}

#[test]
fn recursive_watch_sees_the_subtree_but_never_children_changed() {
    // verified on 3.8.0
    let mut x = Watched::new();
    x.create("/rr");
    x.w.add_persistent("/rr", 1, AddWatchMode::PersistentRecursive);
    let mut got = Vec::new();
    got.extend(x.create("/rr/a"));
    got.extend(x.create("/rr/a/b"));
    got.extend(x.set("/rr/a/b"));
    got.extend(x.set("/rr"));
    got.extend(x.delete("/rr/a/b"));
    got.extend(x.delete("/rr/a"));
    got.extend(x.delete("/rr"));
    got.extend(x.create("/rrx"));
    assert_eq!(
        got,
        vec![
            ev(1, EventType::NodeCreated, "/rr/a"),
            ev(1, EventType::NodeCreated, "/rr/a/b"),
            ev(1, EventType::NodeDataChanged, "/rr/a/b"),
            ev(1, EventType::NodeDataChanged, "/rr"),
            ev(1, EventType::NodeDeleted, "/rr/a/b"),
            ev(1, EventType::NodeDeleted, "/rr/a"),
            ev(1, EventType::NodeDeleted, "/rr"),
        ]
    );
    // In both tables (3.8's DataTree.addWatch).
    assert_eq!(x.w.watch_count(), 2);
}

#[test]
fn persistent_watch_sees_the_path_itself() {
    let mut x = Watched::new();
    x.w.add_persistent("/pw", 1, AddWatchMode::Persistent);
    let mut got = Vec::new();
    got.extend(x.create("/pw"));
    got.extend(x.create("/pw/a"));
    got.extend(x.set("/pw/a"));
    got.extend(x.set("/pw"));
    got.extend(x.set("/pw"));
    got.extend(x.delete("/pw/a"));
    got.extend(x.delete("/pw"));
    assert_eq!(
        got,
        vec![
            ev(1, EventType::NodeCreated, "/pw"),
            ev(1, EventType::NodeChildrenChanged, "/pw"),
            ev(1, EventType::NodeDataChanged, "/pw"),
            ev(1, EventType::NodeDataChanged, "/pw"),
            ev(1, EventType::NodeChildrenChanged, "/pw"),
            ev(1, EventType::NodeDeleted, "/pw"),
        ]
    );
    assert_eq!(x.w.watch_count(), 2);
}

#[test]
fn zookeeper_4466_later_mode_wins() {
    // recursive then persistent: NodeChildrenChanged, no descendant events
    // (verified on 3.8.0)
    let mut x = Watched::new();
    x.create("/q");
    x.w.add_persistent("/q", 1, AddWatchMode::PersistentRecursive);
    x.w.add_persistent("/q", 1, AddWatchMode::Persistent);
    assert_eq!(x.create("/q/a"), vec![ev(1, EventType::NodeChildrenChanged, "/q")]);
    assert!(x.set("/q/a").is_empty());
    // persistent then recursive: recursive wins in both tables, no more
    // NodeChildrenChanged (verified on 3.8.0 by the conformance suite)
    x.w.add_persistent("/q", 2, AddWatchMode::Persistent);
    x.w.add_persistent("/q", 2, AddWatchMode::PersistentRecursive);
    assert_eq!(
        x.create("/q/b"),
        vec![
            ev(2, EventType::NodeCreated, "/q/b"),
            ev(1, EventType::NodeChildrenChanged, "/q"),
        ]
    );
    // a standard watch registered after a persistent one makes it one-shot
    x.w.add_persistent("/q/a", 3, AddWatchMode::Persistent);
    x.w.add_data_watch("/q/a", 3);
    assert_eq!(
        x.set("/q/a"),
        vec![
            ev(2, EventType::NodeDataChanged, "/q/a"),
            ev(3, EventType::NodeDataChanged, "/q/a")
        ]
    );
    assert_eq!(x.set("/q/a"), vec![ev(2, EventType::NodeDataChanged, "/q/a")]);
    // ... but the other way round the watch stays persistent
    x.w.add_data_watch("/q/b", 3);
    x.w.add_persistent("/q/b", 3, AddWatchMode::Persistent);
    assert_eq!(x.set("/q/b").len(), 2);
    assert_eq!(x.set("/q/b").len(), 2);
}

#[test]
fn standard_and_recursive_watchers_get_one_event_each() {
    let mut x = Watched::new();
    x.create("/r");
    x.create("/r/a");
    x.w.add_persistent("/", 1, AddWatchMode::PersistentRecursive);
    let t = x.s.tree.clone();
    x.w.exists_watch(&t, "/r/a", 1);
    x.w.get_children_watch(&t, "/r/a", 1);
    x.w.exists_watch(&t, "/r/a", 2);
    assert_eq!(
        x.delete("/r/a"),
        vec![
            ev(1, EventType::NodeDeleted, "/r/a"),
            ev(2, EventType::NodeDeleted, "/r/a")
        ]
    );
    // the child watch was consumed by the delete; the recursive watch is in
    // both tables
    assert_eq!(x.w.watch_count(), 2);
}
