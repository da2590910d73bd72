//! §0.1 and §1.3: the internal create counter, client cversion and
//! sequential names.

use zkdst_recipes::zk::{CreateMode, EventType};

use super::*;

const SEQ: CreateMode = CreateMode::PersistentSequential;
const PLAIN: CreateMode = CreateMode::Persistent;

#[test]
fn two_sequential_children_then_delete_one() {
    let mut s = Server::new();
    s.created("/q", PLAIN);
    assert_eq!(s.created("/q/s-", SEQ), "/q/s-0000000000");
    assert_eq!(s.created("/q/s-", SEQ), "/q/s-0000000001");
    assert_eq!(s.delete("/q/s-0000000000", -1), TxnResult::Delete);
    assert_eq!(s.cversion("/q"), 3);
    assert_eq!(s.created("/q/s-", SEQ), "/q/s-0000000002");
}

#[test]
fn counter_is_shared_by_prefixes_and_plain_creates() {
    // verified on 3.8.0: s-…00, s-…01, delete, s-…02, plain, other-…04, /p/…05
    let mut s = Server::new();
    s.created("/p", PLAIN);
    assert_eq!(s.created("/p/s-", SEQ), "/p/s-0000000000");
    assert_eq!(s.created("/p/s-", SEQ), "/p/s-0000000001");
    assert_eq!(s.delete("/p/s-0000000000", -1), TxnResult::Delete);
    assert_eq!(s.created("/p/s-", SEQ), "/p/s-0000000002");
    assert_eq!(s.created("/p/plain", PLAIN), "/p/plain");
    assert_eq!(s.created("/p/other-", SEQ), "/p/other-0000000004");
    assert_eq!(s.created("/p/", SEQ), "/p/0000000005");
    assert_eq!(s.tree.child_counter("/p"), Some(6));
    // 6 creates, 1 delete
    assert_eq!(s.cversion("/p"), 7);
    assert_eq!(s.tree.stat("/p").map(|st| st.num_children), Some(5));
}

#[test]
fn fresh_server_cversions_and_zookeeper_children() {
    let mut s = Server::new();
    assert_eq!(s.cversion("/"), -1);
    assert_eq!(s.cversion("/zookeeper"), -2);
    assert_eq!(s.created("/zookeeper/x", PLAIN), "/zookeeper/x");
    // 1 create, 3 children
    assert_eq!(s.cversion("/zookeeper"), -1);
    // the root's counter starts at 0 although /zookeeper exists
    assert_eq!(s.created("/", SEQ), "/0000000000");
    assert_eq!(s.cversion("/"), 0);
}

#[test]
fn sequence_wraps_as_a_java_int() {
    let mut s = Server::new();
    s.created("/w", PLAIN);
    assert_eq!(s.tree.preset_child_counter("/w", i32::MAX - 1), Ok(()));
    assert_eq!(s.created("/w/n-", SEQ), "/w/n-2147483646");
    assert_eq!(s.created("/w/n-", SEQ), "/w/n-2147483647");
    assert_eq!(s.created("/w/n-", SEQ), "/w/n--2147483648");
    assert_eq!(s.created("/w/n-", SEQ), "/w/n--2147483647");
    assert_eq!(s.tree.preset_child_counter("/w", -5), Ok(()));
    assert_eq!(s.created("/w/n-", SEQ), "/w/n--000000005");
    assert_eq!(s.tree.child_counter("/w"), Some(-4));
}

#[test]
fn a_sequence_base_offsets_names_not_cversion() {
    let mut s = Server::new();
    s.cfg.sequence_base = i32::MAX;
    s.created("/w", PLAIN);
    assert_eq!(s.created("/w/n-", SEQ), "/w/n-2147483647");
    assert_eq!(s.created("/w/n-", SEQ), "/w/n--2147483648");
    assert_eq!(s.created("/w/n-", SEQ), "/w/n--2147483647");
    // The Stat is ZooKeeper's: three creates.
    assert_eq!(s.cversion("/w"), 3);
    s.cfg.sequence_base = -2;
    s.created("/u", PLAIN);
    assert_eq!(s.created("/u/n-", SEQ), "/u/n--000000002");
    assert_eq!(s.created("/u/n-", SEQ), "/u/n--000000001");
    assert_eq!(s.created("/u/n-", SEQ), "/u/n-0000000000");
}

#[test]
fn sequential_name_taken_is_node_exists() {
    let mut s = Server::new();
    s.created("/p", PLAIN);
    s.created("/p/s-0000000005", PLAIN);
    assert_eq!(s.tree.preset_child_counter("/p", 5), Ok(()));
    assert_eq!(s.create("/p/s-", SEQ), err(zkdst_recipes::zk::ZkError::NodeExists));
    // the failed create did not advance the counter
    assert_eq!(s.tree.child_counter("/p"), Some(5));
}

#[test]
fn zxid_and_time_stat_rules() {
    let mut s = Server::new();
    s.created("/a", PLAIN);
    let created = s.tree.stat("/a").expect("exists");
    assert_eq!((created.czxid, created.mzxid, created.pzxid), (3, 3, 3));
    assert_eq!((created.ctime, created.mtime), (30, 30));
    assert_eq!(s.tree.stat("/").map(|st| st.pzxid), Some(3));
    let TxnResult::SetData { stat } = s.set_data("/a", b"x", 0) else {
        panic!("setData failed")
    };
    assert_eq!((stat.czxid, stat.mzxid, stat.pzxid, stat.version), (3, 4, 3, 1));
    assert_eq!((stat.ctime, stat.mtime, stat.data_length), (30, 40, 1));
    // identical bytes still bump the version
    let TxnResult::SetData { stat } = s.set_data("/a", b"x", -1) else {
        panic!("setData failed")
    };
    assert_eq!(stat.version, 2);
    s.created("/a/b", PLAIN);
    assert_eq!(s.tree.stat("/a").map(|st| (st.pzxid, st.mzxid)), Some((6, 5)));
    s.delete("/a/b", -1);
    assert_eq!(s.tree.stat("/a").map(|st| st.pzxid), Some(7));
}

#[test]
fn create_and_delete_triggers() {
    let mut s = Server::new();
    s.created("/a", PLAIN);
    let c = s.run(
        1,
        WriteRequest::Create {
            path: "/a/b".into(),
            data: vec![],
            mode: PLAIN,
        },
    );
    assert_eq!(
        c.triggers,
        vec![
            Trigger::new("/a/b", EventType::NodeCreated),
            Trigger::new("/a", EventType::NodeChildrenChanged)
        ]
    );
    let d = s.run(
        1,
        WriteRequest::Delete {
            path: "/a/b".into(),
            version: -1,
        },
    );
    assert_eq!(
        d.triggers,
        vec![
            Trigger::new("/a/b", EventType::NodeDeleted),
            Trigger::new("/a", EventType::NodeChildrenChanged)
        ]
    );
    let u = s.run(
        1,
        WriteRequest::SetData {
            path: "/a".into(),
            data: vec![1],
            version: -1,
        },
    );
    assert_eq!(u.triggers, vec![Trigger::new("/a", EventType::NodeDataChanged)]);
    let e = s.run(
        1,
        WriteRequest::Delete {
            path: "/a/b".into(),
            version: -1,
        },
    );
    assert!(e.triggers.is_empty());
}
