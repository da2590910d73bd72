//! §1.2 and §1.9: ephemerals and session close, containers, TTL nodes.

use zkdst_recipes::zk::{CreateMode, EventType, ZkError};

use super::*;

#[test]
fn close_session_deletes_all_ephemerals_in_one_txn() {
    let mut s = Server::new();
    s.created("/app", CreateMode::Persistent);
    s.created("/app/e1", CreateMode::Ephemeral);
    let seq = s.created("/app/lock-", CreateMode::EphemeralSequential);
    s.run(
        2,
        WriteRequest::Create {
            path: "/other".into(),
            data: vec![],
            mode: CreateMode::Ephemeral,
        },
    );
    assert_eq!(s.tree.ephemerals(1), vec!["/app/e1".to_string(), seq.clone()]);
    assert_eq!(s.tree.stat("/app/e1").map(|st| st.ephemeral_owner), Some(1));
    assert_eq!(s.tree.sessions(), vec![(1, 6000), (2, 6000)]);

    let zxid = s.tree.last_zxid() + 1;
    let a = s.run(1, WriteRequest::CloseSession);
    assert_eq!(
        a.result,
        TxnResult::CloseSession {
            deleted: vec!["/app/e1".to_string(), seq.clone()]
        }
    );
    assert_eq!(
        a.triggers,
        vec![
            Trigger::new("/app/e1", EventType::NodeDeleted),
            Trigger::new("/app", EventType::NodeChildrenChanged),
            Trigger::new(seq.as_str(), EventType::NodeDeleted),
            Trigger::new("/app", EventType::NodeChildrenChanged),
        ]
    );
    assert!(s.tree.ephemerals(1).is_empty());
    assert_eq!(
        s.tree.stat("/app").map(|st| (st.num_children, st.pzxid)),
        Some((0, zxid))
    );
    assert_eq!(s.tree.sessions(), vec![(2, 6000)]);
    assert!(s.tree.exists("/other"));
    assert_eq!(s.tree.digest(), s.tree.compute_digest());
}

#[test]
fn deleting_an_ephemeral_unindexes_it() {
    let mut s = Server::new();
    s.created("/e", CreateMode::Ephemeral);
    assert_eq!(s.delete("/e", -1), TxnResult::Delete);
    assert!(s.tree.ephemerals(1).is_empty());
    let a = s.run(1, WriteRequest::CloseSession);
    assert_eq!(a.result, TxnResult::CloseSession { deleted: vec![] });
    assert!(a.triggers.is_empty());
}

#[test]
fn containers_are_reaped_once_used_and_empty() {
    let mut s = Server::new();
    s.created("/c", CreateMode::Container);
    assert_eq!(s.tree.stat("/c").map(|st| st.ephemeral_owner), Some(0));
    assert_eq!(s.tree.ephemeral_type("/c"), Some(EphemeralType::Container));
    // never used: kept
    assert!(s.tree.containers_to_reap().is_empty());
    s.created("/c/child", CreateMode::Persistent);
    assert!(s.tree.containers_to_reap().is_empty());
    s.delete("/c/child", -1);
    assert_eq!(s.tree.containers_to_reap(), vec!["/c".to_string()]);
    let reap = WriteRequest::DeleteContainer { path: "/c".into() };
    let a = s.run(0, reap.clone());
    assert_eq!(a.result, TxnResult::Delete);
    assert_eq!(a.triggers[0], Trigger::new("/c", EventType::NodeDeleted));
    assert!(!s.tree.exists("/c"));
    // decided again against a tree where it is gone: an error txn
    assert_eq!(s.run(0, reap).result, err(ZkError::NoNode));
    assert!(s.tree.containers_to_reap().is_empty());
}

#[test]
fn never_used_containers_need_max_never_used_interval() {
    let mut s = Server::new();
    s.created("/c", CreateMode::Container);
    let mtime = s.tree.stat("/c").map(|st| st.mtime).unwrap_or_default();
    assert!(s.tree.containers_to_reap_with(mtime + 10_000, 0).is_empty());
    assert!(s.tree.containers_to_reap_with(mtime + 100, 100).is_empty());
    assert_eq!(s.tree.containers_to_reap_with(mtime + 101, 100), vec!["/c".to_string()]);
    s.created("/c/x", CreateMode::Persistent);
    assert!(s.tree.containers_to_reap_with(mtime + 10_000, 100).is_empty());
}

#[test]
fn delete_container_checks() {
    let mut s = Server::new();
    s.created("/e", CreateMode::Ephemeral);
    s.created("/p", CreateMode::Persistent);
    s.created("/p/c", CreateMode::Persistent);
    let reap = |s: &mut Server, p: &str| s.run(0, WriteRequest::DeleteContainer { path: p.into() }).result;
    assert_eq!(reap(&mut s, "/e"), err(ZkError::BadVersion));
    assert_eq!(reap(&mut s, "/p"), err(ZkError::NotEmpty));
    assert_eq!(reap(&mut s, "/zookeeper"), err(ZkError::BadArguments));
    assert_eq!(reap(&mut s, "/nope"), err(ZkError::NoNode));
    // as in ZooKeeper, a plain persistent node passes the checks
    assert_eq!(reap(&mut s, "/p/c"), TxnResult::Delete);
}

#[test]
fn ttl_nodes_expire_when_unmodified_and_childless() {
    let mut s = Server::new();
    s.cfg.extended_types_enabled = true;
    let ttl = CreateMode::PersistentWithTtl { ttl_ms: 100 };
    s.created("/t", ttl);
    let seq = s.created("/t-", CreateMode::PersistentSequentialWithTtl { ttl_ms: 100 });
    let mtime = s.tree.stat("/t").map(|st| st.mtime).unwrap_or_default();
    assert!(s.tree.ttl_expired(mtime + 100).is_empty());
    assert_eq!(s.tree.ttl_expired(mtime + 1000), vec!["/t".to_string(), seq.clone()]);
    // a child keeps it alive
    s.created("/t/c", CreateMode::Persistent);
    assert_eq!(s.tree.ttl_expired(mtime + 1000), vec![seq.clone()]);
    s.delete("/t/c", -1);
    // a data change restarts the clock
    s.set_data("/t", b"x", -1);
    let mtime2 = s.tree.stat("/t").map(|st| st.mtime).unwrap_or_default();
    assert!(mtime2 > mtime);
    assert!(!s.tree.ttl_expired(mtime2 + 50).contains(&"/t".to_string()));
    assert_eq!(
        s.run(0, WriteRequest::DeleteContainer { path: "/t".into() }).result,
        TxnResult::Delete
    );
    assert_eq!(s.tree.ttl_expired(i64::MAX), vec![seq]);
}

#[test]
fn session_table_follows_txns() {
    let mut s = Server::new();
    s.run(7, WriteRequest::CreateSession { timeout_ms: 4000 });
    assert_eq!(s.tree.session_timeout(7), Some(4000));
    assert!(s.tree.has_session(7));
    let d = s.tree.digest();
    s.run(7, WriteRequest::CloseSession);
    assert_eq!(s.tree.session_timeout(7), None);
    assert_ne!(s.tree.digest(), d);
    assert_eq!(s.tree.digest(), s.tree.compute_digest());
}
