//! §1.2 and §1.5: error precedence, versions, `/zookeeper`.

use zkdst_recipes::zk::{CreateMode, ZkError};

use super::*;

const PLAIN: CreateMode = CreateMode::Persistent;

#[test]
fn version_wraps_max_to_min_to_minus_one() {
    let mut s = Server::new();
    s.created("/v", PLAIN);
    // jump the version close to the top: a txn sets the new version
    let zxid = s.tree.last_zxid() + 1;
    s.tree.apply(
        zxid,
        0,
        &Txn::SetData {
            path: "/v".into(),
            data: vec![],
            version: i32::MAX - 1,
        },
    );
    let TxnResult::SetData { stat } = s.set_data("/v", b"", i32::MAX - 1) else {
        panic!()
    };
    assert_eq!(stat.version, i32::MAX);
    let TxnResult::SetData { stat } = s.set_data("/v", b"", i32::MAX) else {
        panic!()
    };
    assert_eq!(stat.version, i32::MIN);
    let TxnResult::SetData { stat } = s.set_data("/v", b"", i32::MIN) else {
        panic!()
    };
    assert_eq!(stat.version, i32::MIN + 1);
    // ... on to -2, then -1
    let zxid = s.tree.last_zxid() + 1;
    s.tree.apply(
        zxid,
        0,
        &Txn::SetData {
            path: "/v".into(),
            data: vec![],
            version: -2,
        },
    );
    assert_eq!(s.set_data("/v", b"", -3), err(ZkError::BadVersion));
    let TxnResult::SetData { stat } = s.set_data("/v", b"", -2) else {
        panic!()
    };
    assert_eq!(stat.version, -1);
    // at version -1 compare-and-set is impossible: -1 means "any"
    assert_eq!(s.set_data("/v", b"", 5), err(ZkError::BadVersion));
    let TxnResult::SetData { stat } = s.set_data("/v", b"", -1) else {
        panic!()
    };
    assert_eq!(stat.version, 0);
}

#[test]
fn only_minus_one_is_a_wildcard() {
    let mut s = Server::new();
    s.created("/v", PLAIN);
    assert_eq!(s.set_data("/v", b"x", -2), err(ZkError::BadVersion));
    assert_eq!(s.delete("/v", -2), err(ZkError::BadVersion));
    assert_eq!(s.tree.stat("/v").map(|st| st.version), Some(0));
    assert!(matches!(s.set_data("/v", b"x", 0), TxnResult::SetData { .. }));
    assert_eq!(s.delete("/v", 0), err(ZkError::BadVersion));
    assert_eq!(s.delete("/v", 1), TxnResult::Delete);
}

#[test]
fn delete_precedence() {
    let mut s = Server::new();
    s.created("/d", PLAIN);
    s.created("/d/c", PLAIN);
    // wrong version on a non-empty node: BadVersion before NotEmpty
    assert_eq!(s.delete("/d", 3), err(ZkError::BadVersion));
    assert_eq!(s.delete("/d", 0), err(ZkError::NotEmpty));
    assert_eq!(s.delete("/d", -1), err(ZkError::NotEmpty));
    // NoNode before BadVersion
    assert_eq!(s.delete("/nope", 3), err(ZkError::NoNode));
    assert_eq!(s.delete("/nope/deeper", -1), err(ZkError::NoNode));
    // BadArguments first: special paths, and paths without a '/'
    for bad in ["/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota", "d", ""] {
        assert_eq!(s.delete(bad, 7), err(ZkError::BadArguments), "{bad:?}");
    }
    // Otherwise no syntax check: a malformed path names no node (3.8,
    // verified against a real server by conformance/tests/bytes.rs).
    for malformed in ["/d/", "/d//c", "/d/./c"] {
        assert_eq!(s.delete(malformed, 7), err(ZkError::NoNode), "{malformed:?}");
    }
    assert!(s.tree.exists("/d/c"));
}

#[test]
fn set_data_precedence() {
    let mut s = Server::new();
    assert_eq!(s.set_data("/nope", b"", 9), err(ZkError::NoNode));
    assert_eq!(s.set_data("/bad/", b"", 9), err(ZkError::BadArguments));
    assert_eq!(s.set_data("/nope/..", b"", -1), err(ZkError::BadArguments));
    // setData on / and /zookeeper succeeds on 3.8
    assert!(matches!(s.set_data("/zookeeper", b"z", -1), TxnResult::SetData { .. }));
    assert!(matches!(s.set_data("/", b"r", -1), TxnResult::SetData { .. }));
}

#[test]
fn create_precedence() {
    let mut s = Server::new();
    // The parent check before the path syntax (3.8's pRequest2TxnCreate,
    // verified against a real server by conformance/tests/bytes.rs): a
    // malformed path under a missing parent is NoNode...
    assert_eq!(s.create("/nope//x", PLAIN), err(ZkError::NoNode));
    assert_eq!(s.create("/nope/x/", PLAIN), err(ZkError::NoNode));
    assert_eq!(s.create("/p//", CreateMode::PersistentSequential), err(ZkError::NoNode));
    // ...under an existing one BadArguments; without any '/' at once.
    assert_eq!(s.create("/zookeeper/", PLAIN), err(ZkError::BadArguments));
    assert_eq!(s.create("/zookeeper/.", PLAIN), err(ZkError::BadArguments));
    assert_eq!(s.create("nope", PLAIN), err(ZkError::BadArguments));
    assert_eq!(s.create("/nope/x", PLAIN), err(ZkError::NoNode));
    assert_eq!(
        s.create("/nope/x-", CreateMode::PersistentSequential),
        err(ZkError::NoNode)
    );
    assert_eq!(s.create("/zookeeper", PLAIN), err(ZkError::NodeExists));
    assert_eq!(s.create("/", PLAIN), err(ZkError::NodeExists));
    assert_eq!(s.created("/zookeeper/x", PLAIN), "/zookeeper/x");
    assert_eq!(s.delete("/zookeeper", -1), err(ZkError::BadArguments));
    assert_eq!(s.delete("/zookeeper/x", -1), TxnResult::Delete);
}

#[test]
fn ttl_checks_come_first() {
    let mut s = Server::new();
    let ttl = |ttl_ms| CreateMode::PersistentWithTtl { ttl_ms };
    // Unimplemented even for a malformed path under a missing parent
    assert_eq!(s.create("bad//", ttl(1000)), err(ZkError::Unimplemented));
    assert_eq!(
        s.create("/t", CreateMode::PersistentSequentialWithTtl { ttl_ms: 1 }),
        err(ZkError::Unimplemented)
    );
    s.cfg.extended_types_enabled = true;
    assert_eq!(s.create("bad//", ttl(0)), err(ZkError::BadArguments));
    assert_eq!(s.create("/t", ttl(-1)), err(ZkError::BadArguments));
    assert_eq!(
        s.create("/t", ttl(CreateMode::MAX_TTL_MS + 1)),
        err(ZkError::BadArguments)
    );
    assert_eq!(s.created("/t", ttl(CreateMode::MAX_TTL_MS)), "/t");
    assert_eq!(
        s.tree.ephemeral_type("/t"),
        Some(EphemeralType::Ttl(CreateMode::MAX_TTL_MS))
    );
    assert_eq!(s.tree.stat("/t").map(|st| st.ephemeral_owner), Some(0));
}

#[test]
fn no_children_for_ephemerals() {
    let mut s = Server::new();
    assert_eq!(s.created("/e", CreateMode::Ephemeral), "/e");
    assert_eq!(s.create("/e/c", PLAIN), err(ZkError::NoChildrenForEphemerals));
    assert_eq!(
        s.create("/e/s-", CreateMode::PersistentSequential),
        err(ZkError::NoChildrenForEphemerals)
    );
    assert_eq!(
        s.create("/e/s-", CreateMode::EphemeralSequential),
        err(ZkError::NoChildrenForEphemerals)
    );
    // NoNode still comes before it
    assert_eq!(s.create("/e/c/d", PLAIN), err(ZkError::NoNode));
    assert_eq!(s.tree.child_counter("/e"), Some(0));
    // containers and TTL nodes are not ephemeral parents
    s.created("/c", CreateMode::Container);
    assert_eq!(s.created("/c/x", PLAIN), "/c/x");
}

#[test]
fn session_must_be_live() {
    let mut s = Server::new();
    let create = |p: &str| WriteRequest::Create {
        path: p.into(),
        data: vec![],
        mode: CreateMode::Ephemeral,
    };
    assert_eq!(s.run(99, create("/x")).result, err(ZkError::SessionExpired));
    s.run(2, WriteRequest::CloseSession);
    assert_eq!(s.run(2, create("/x")).result, err(ZkError::SessionExpired));
    assert_eq!(
        s.run(
            2,
            WriteRequest::Delete {
                path: "/nope".into(),
                version: 0
            }
        )
        .result,
        err(ZkError::SessionExpired)
    );
    // the TTL check precedes the session check, as in validateCreateRequest
    let ttl = WriteRequest::Create {
        path: "/t".into(),
        data: vec![],
        mode: CreateMode::PersistentWithTtl { ttl_ms: 5 },
    };
    assert_eq!(s.run(2, ttl).result, err(ZkError::Unimplemented));
    s.cfg.check_sessions = false;
    assert!(matches!(s.run(99, create("/x")).result, TxnResult::Create { .. }));
    assert_eq!(s.tree.ephemerals(99), vec!["/x".to_string()]);
}

#[test]
fn errors_consume_a_zxid_and_change_nothing() {
    let mut s = Server::new();
    let before = (s.tree.digest(), s.tree.last_zxid());
    let a = s.run(
        1,
        WriteRequest::Delete {
            path: "/nope".into(),
            version: -1,
        },
    );
    assert_eq!(a.result, err(ZkError::NoNode));
    assert!(a.triggers.is_empty());
    assert_eq!(s.log.last(), Some(&Txn::Error(ZkError::NoNode)));
    assert_eq!(s.tree.digest(), before.0);
    assert_eq!(s.tree.last_zxid(), before.1 + 1);
}
