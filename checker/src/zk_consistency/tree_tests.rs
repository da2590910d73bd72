//! Unit tests of the data-tree model.

use super::*;

fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: Data::from("d"),
        mode,
    }
}

#[test]
fn sequential_names_use_the_internal_counter_not_cversion() {
    let mut t = DataTree::new();
    t.apply_op(&create("/s", CreateMode::Persistent), 1, 1);
    let a = t
        .apply_op(&create("/s/s-", CreateMode::PersistentSequential), 1, 2)
        .unwrap();
    assert!(matches!(a.reply, Value::Created { ref path, .. } if path == "/s/s-0000000000"));
    t.apply_op(&create("/s/s-", CreateMode::PersistentSequential), 1, 3);
    t.apply_op(
        &Op::Delete {
            path: "/s/s-0000000000".into(),
            version: -1,
        },
        1,
        4,
    );
    assert_eq!(t.get("/s").unwrap().stat().cversion, 3);
    let c = t
        .apply_op(&create("/s/s-", CreateMode::PersistentSequential), 1, 5)
        .unwrap();
    assert!(matches!(c.reply, Value::Created { ref path, .. } if path == "/s/s-0000000002"));
    assert_eq!(t.get("/s").unwrap().pzxid, 5);
}

#[test]
fn a_sequence_base_offsets_names_across_the_wrap() {
    let mut t = DataTree::with_sequence_base(i32::MAX);
    t.apply_op(&create("/s", CreateMode::Persistent), 1, 1);
    let name = |t: &mut DataTree, z| match t.apply_op(&create("/s/n-", CreateMode::PersistentSequential), 1, z) {
        Some(Applied {
            reply: Value::Created { path, .. },
            ..
        }) => path,
        other => panic!("{other:?}"),
    };
    assert_eq!(name(&mut t, 2), "/s/n-2147483647");
    assert_eq!(name(&mut t, 3), "/s/n--2147483648");
    // cversion is ZooKeeper's: two creates.
    assert_eq!(t.get("/s").unwrap().stat().cversion, 2);
}

#[test]
fn versions_and_error_precedence() {
    let mut t = DataTree::new();
    t.apply_op(&create("/a", CreateMode::Persistent), 1, 1);
    t.apply_op(&create("/a/b", CreateMode::Persistent), 1, 2);
    let r = t
        .apply_op(
            &Op::Delete {
                path: "/a".into(),
                version: 7,
            },
            1,
            3,
        )
        .unwrap();
    assert_eq!(r.reply, err(code::BAD_VERSION));
    let r = t
        .apply_op(
            &Op::Delete {
                path: "/a".into(),
                version: -1,
            },
            1,
            3,
        )
        .unwrap();
    assert_eq!(r.reply, err(code::NOT_EMPTY));
    let r = t
        .apply_op(
            &Op::SetData {
                path: "/a".into(),
                data: Data::from("x"),
                version: -2,
            },
            1,
            3,
        )
        .unwrap();
    assert_eq!(r.reply, err(code::BAD_VERSION));
    let r = t
        .apply_op(
            &Op::SetData {
                path: "/a".into(),
                data: Data::from("xy"),
                version: 0,
            },
            1,
            3,
        )
        .unwrap();
    let Value::Stat { stat: Some(s) } = r.reply else {
        panic!("{r:?}")
    };
    assert_eq!(
        (s.version, s.mzxid, s.czxid, s.data_length, s.num_children),
        (1, 3, 1, 2, 1)
    );
    let r = t.apply_op(&create("/x/y", CreateMode::Persistent), 1, 4).unwrap();
    assert_eq!(r.reply, err(code::NO_NODE));
}

#[test]
fn ephemerals_die_with_their_session_and_have_no_children() {
    let mut t = DataTree::new();
    t.apply_op(&create("/e", CreateMode::Ephemeral), 7, 1);
    let r = t.apply_op(&create("/e/c", CreateMode::Persistent), 7, 2).unwrap();
    assert_eq!(r.reply, err(code::NO_CHILDREN_FOR_EPHEMERALS));
    assert_eq!(t.get("/e").unwrap().ephemeral_owner, 7);
    assert_eq!(t.close_session(7, 3), vec!["/e".to_string()]);
    assert!(t.get("/e").is_none());
}

/// A container (or TTL node) is committed with its kind in the raw owner
/// (`Long.MIN_VALUE`), shows clients 0, takes children and outlives the
/// session that made it; replaying its committed txn gives the same tree
/// (lock seed 0 with container parents was judged as losing the write and
/// refusing children under an "ephemeral" parent before the model knew this).
#[test]
fn containers_and_ttl_nodes_take_children_and_show_owner_zero() {
    let mut t = DataTree::new();
    let c = t.apply_op(&create("/c", CreateMode::Container), 7, 1).unwrap();
    let Value::Created { stat, .. } = &c.reply else {
        panic!("{c:?}")
    };
    assert_eq!(stat.ephemeral_owner, 0);
    let committed = TxnRecord::Create {
        path: "/c".into(),
        data: Data::from("d"),
        ephemeral_owner: i64::MIN,
        session: 7,
    };
    assert!(same_txn(c.txn.as_ref().unwrap(), &committed));
    let mut replayed = DataTree::new();
    replayed.apply_txn(&committed, 1).unwrap();
    assert_eq!(replayed.get("/c"), t.get("/c"));
    let r = t
        .apply_op(&create("/c/e", CreateMode::EphemeralSequential), 7, 2)
        .unwrap();
    assert!(matches!(r.reply, Value::Created { .. }), "{r:?}");
    let ttl = t
        .apply_op(&create("/t", CreateMode::PersistentWithTtl { ttl_ms: 500 }), 7, 3)
        .unwrap();
    assert!(
        matches!(ttl.reply, Value::Created { ref stat, .. } if stat.ephemeral_owner == 0),
        "{ttl:?}"
    );
    let r = t.apply_op(&create("/t/x", CreateMode::Persistent), 7, 4).unwrap();
    assert!(matches!(r.reply, Value::Created { .. }), "{r:?}");
    assert_eq!(t.close_session(7, 5), vec!["/c/e0000000000".to_string()]);
    assert!(t.get("/c").is_some() && t.get("/t").is_some());
}

#[test]
fn multi_is_all_or_nothing_and_sees_earlier_ops() {
    let mut t = DataTree::new();
    let ok = t
        .apply_op(
            &Op::Multi {
                ops: vec![
                    create("/m", CreateMode::Persistent),
                    create("/m/s-", CreateMode::PersistentSequential),
                ],
            },
            1,
            1,
        )
        .unwrap();
    let Value::Multi { results } = ok.reply else { panic!() };
    assert!(matches!(&results[1], MultiOpResult::Create { path, .. } if path == "/m/s-0000000000"));
    let before = t.clone();
    let bad = t
        .apply_op(
            &Op::Multi {
                ops: vec![
                    create("/n", CreateMode::Persistent),
                    create("/n", CreateMode::Persistent),
                    Op::Check {
                        path: "/m".into(),
                        version: -1,
                    },
                ],
            },
            1,
            2,
        )
        .unwrap();
    let Value::Error { code, results } = bad.reply else {
        panic!()
    };
    assert_eq!(code, "NodeExists");
    assert_eq!(
        results,
        vec![
            MultiOpResult::Error { code: "Ok".into() },
            MultiOpResult::Error {
                code: "NodeExists".into()
            },
            MultiOpResult::Error {
                code: "RuntimeInconsistency".into()
            }
        ]
    );
    assert_eq!(t, before);
}

#[test]
fn txn_replay_rejects_impossible_txns() {
    let mut t = DataTree::new();
    assert!(t.apply_txn(&TxnRecord::Delete { path: "/nope".into() }, 1).is_err());
    assert!(t
        .apply_txn(
            &TxnRecord::Create {
                path: "/a".into(),
                data: Data::default(),
                ephemeral_owner: 0,
                session: 0
            },
            1
        )
        .is_ok());
    assert!(t
        .apply_txn(
            &TxnRecord::Create {
                path: "/a".into(),
                data: Data::default(),
                ephemeral_owner: 0,
                session: 0
            },
            2
        )
        .is_err());
}

#[test]
fn creates_check_their_path_as_prep_request_processor_does() {
    let mut t = DataTree::new();
    t.apply_op(&create("/a", CreateMode::Persistent), 1, 1);
    let code = |t: &mut DataTree, path: &str, mode, z| match t.apply_op(&create(path, mode), 1, z).unwrap().reply {
        Value::Error { code, .. } => code,
        Value::Created { path, .. } => format!("created {path}"),
        v => panic!("{v:?}"),
    };
    // The root exists; a sequential root is a top-level node.
    assert_eq!(code(&mut t, "/", CreateMode::Persistent, 2), "NodeExists");
    assert_eq!(
        code(&mut t, "/", CreateMode::PersistentSequential, 3),
        "created /0000000001"
    );
    // The parent is looked up before the name's syntax is checked.
    assert_eq!(code(&mut t, "/missing/x/", CreateMode::Persistent, 4), "NoNode");
    assert_eq!(code(&mut t, "/a/", CreateMode::Persistent, 5), "BadArguments");
    assert_eq!(code(&mut t, "/a/.", CreateMode::Persistent, 6), "BadArguments");
    assert_eq!(code(&mut t, "/a/\u{7f}", CreateMode::Persistent, 7), "BadArguments");
    assert_eq!(code(&mut t, "a", CreateMode::Persistent, 8), "BadArguments");
    assert_eq!(
        code(&mut t, "/a/.", CreateMode::PersistentSequential, 9),
        "created /a/.0000000000"
    );
}
