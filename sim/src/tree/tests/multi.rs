//! §1.7: multi — all or nothing, per-op results, one zxid, intra-multi
//! visibility.

use zkdst_recipes::zk::{CreateMode, EventType, MultiError, Op, OpResult, ZkError};

use super::*;

fn create(path: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: vec![],
        mode: CreateMode::Persistent,
    }
}

fn seq(path: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: vec![],
        mode: CreateMode::PersistentSequential,
    }
}

fn failed(result: TxnResult) -> MultiError {
    match result {
        TxnResult::MultiFailed(m) => m,
        other => panic!("expected a failed multi, got {other:?}"),
    }
}

fn ok(result: TxnResult) -> Vec<OpResult> {
    match result {
        TxnResult::Multi(r) => r,
        other => panic!("expected a successful multi, got {other:?}"),
    }
}

#[test]
fn failing_op_aborts_everything() {
    let mut s = Server::new();
    s.created("/p", CreateMode::Persistent);
    let digest = s.tree.digest();
    let a = s.run(
        1,
        WriteRequest::Multi(vec![
            create("/m1"),
            create("/m1"),
            Op::SetData {
                path: "/p".into(),
                data: vec![1],
                version: -1,
            },
        ]),
    );
    let m = failed(a.result);
    assert_eq!(m.error, ZkError::NodeExists);
    assert_eq!(m.index, 1);
    assert_eq!(
        m.results,
        vec![
            OpResult::Error(None),
            OpResult::Error(Some(ZkError::NodeExists)),
            OpResult::Error(Some(ZkError::RuntimeInconsistency))
        ]
    );
    assert!(a.triggers.is_empty());
    assert!(!s.tree.exists("/m1"));
    assert_eq!(s.tree.stat("/p").map(|st| st.version), Some(0));
    assert_eq!(s.tree.digest(), digest);
    assert_eq!(
        s.log.last(),
        Some(&Txn::MultiError {
            index: 1,
            error: ZkError::NodeExists,
            op_count: 3
        })
    );
}

#[test]
fn failing_check_first() {
    let mut s = Server::new();
    s.created("/m2", CreateMode::Persistent);
    let a = s.run(
        1,
        WriteRequest::Multi(vec![
            Op::Check {
                path: "/m2".into(),
                version: 7,
            },
            create("/m3"),
        ]),
    );
    let m = failed(a.result);
    assert_eq!(m.error, ZkError::BadVersion);
    assert_eq!(
        m.results,
        vec![
            OpResult::Error(Some(ZkError::BadVersion)),
            OpResult::Error(Some(ZkError::RuntimeInconsistency))
        ]
    );
    assert!(!s.tree.exists("/m3"));
    let missing = s.run(
        1,
        WriteRequest::Multi(vec![Op::Check {
            path: "/nope".into(),
            version: -1,
        }]),
    );
    assert_eq!(failed(missing.result).error, ZkError::NoNode);
}

#[test]
fn one_zxid_and_intra_multi_visibility() {
    let mut s = Server::new();
    let zxid = s.tree.last_zxid() + 1;
    let a = s.run(
        1,
        WriteRequest::Multi(vec![create("/m2"), create("/m2/a"), seq("/m2/s-"), seq("/m2/s-")]),
    );
    let results = ok(a.result);
    let paths: Vec<&str> = results
        .iter()
        .map(|r| match r {
            OpResult::Create { path, .. } => path.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(paths, vec!["/m2", "/m2/a", "/m2/s-0000000001", "/m2/s-0000000002"]);
    let st = s.tree.stat("/m2").expect("exists");
    assert_eq!((st.czxid, st.mzxid, st.pzxid), (zxid, zxid, zxid));
    assert_eq!(s.tree.stat("/m2/s-0000000002").map(|st| st.czxid), Some(zxid));
    // each op's Stat is taken when that op applies
    let OpResult::Create { stat, .. } = &results[0] else {
        panic!()
    };
    assert_eq!(stat.num_children, 0);
    assert_eq!(s.tree.last_zxid(), zxid);
}

#[test]
fn successful_result_kinds_and_chained_versions() {
    let mut s = Server::new();
    s.created("/x", CreateMode::Persistent);
    let a = s.run(
        1,
        WriteRequest::Multi(vec![
            Op::SetData {
                path: "/x".into(),
                data: vec![1],
                version: 0,
            },
            Op::SetData {
                path: "/x".into(),
                data: vec![2],
                version: 1,
            },
            Op::Check {
                path: "/x".into(),
                version: 2,
            },
            create("/y"),
            Op::Delete {
                path: "/y".into(),
                version: 0,
            },
        ]),
    );
    let r = ok(a.result);
    assert!(matches!(r[0], OpResult::SetData { stat } if stat.version == 1));
    assert!(matches!(r[1], OpResult::SetData { stat } if stat.version == 2));
    assert_eq!(r[2], OpResult::Check);
    assert!(matches!(&r[3], OpResult::Create { path, .. } if path == "/y"));
    assert_eq!(r[4], OpResult::Delete);
    assert!(!s.tree.exists("/y"));
    assert_eq!(s.tree.get_data("/x").map(|(d, st)| (d, st.version)), Some((vec![2], 2)));
    // triggers are those of the individual ops, in order
    assert_eq!(
        a.triggers
            .iter()
            .map(|t| (t.path.as_str(), t.event_type))
            .collect::<Vec<_>>(),
        vec![
            ("/x", EventType::NodeDataChanged),
            ("/x", EventType::NodeDataChanged),
            ("/y", EventType::NodeCreated),
            ("/", EventType::NodeChildrenChanged),
            ("/y", EventType::NodeDeleted),
            ("/", EventType::NodeChildrenChanged),
        ]
    );
}

#[test]
fn empty_multi_succeeds_and_consumes_a_zxid() {
    let mut s = Server::new();
    let zxid = s.tree.last_zxid();
    assert_eq!(s.run(1, WriteRequest::Multi(vec![])).result, TxnResult::Multi(vec![]));
    assert_eq!(s.tree.last_zxid(), zxid + 1);
}

#[test]
fn delete_then_recreate_and_parent_checks() {
    let mut s = Server::new();
    s.created("/a", CreateMode::Persistent);
    let r = s.run(
        1,
        WriteRequest::Multi(vec![
            Op::Delete {
                path: "/a".into(),
                version: -1,
            },
            create("/a"),
        ]),
    );
    assert_eq!(ok(r.result).len(), 2);
    assert_eq!(s.tree.child_counter("/"), Some(2));
    // a later op sees that an earlier one made its parent ephemeral
    let e = WriteRequest::Multi(vec![
        Op::Create {
            path: "/e".into(),
            data: vec![],
            mode: CreateMode::Ephemeral,
        },
        create("/e/c"),
    ]);
    let m = failed(s.run(1, e).result);
    assert_eq!((m.index, m.error), (1, ZkError::NoChildrenForEphemerals));
    assert!(!s.tree.exists("/e"));
    // and that an earlier op deleted the node
    let m = failed(
        s.run(
            1,
            WriteRequest::Multi(vec![
                Op::Delete {
                    path: "/a".into(),
                    version: -1,
                },
                Op::Check {
                    path: "/a".into(),
                    version: -1,
                },
            ]),
        )
        .result,
    );
    assert_eq!((m.index, m.error), (1, ZkError::NoNode));
    assert!(s.tree.exists("/a"));
}
