//! Point checks of zookeeper-semantics.md against the real server.

use std::time::Duration;

use zkdst_conformance::real::fresh_root;
use zkdst_conformance::ServerOptions;
use zkdst_recipes::zk::{AddWatchMode, CreateMode, EventType, Op, OpResult, ZkClient, ZkError, ANY_VERSION};

use crate::support::{connect, run, serial, standalone};

#[test]
fn semantics_point_checks() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(60), async {
        let zk = connect(&server.connect_string(), 4000).await;
        let other = connect(&server.connect_string(), 4000).await;

        // §1.1: on a fresh server `/` reports cversion -1 and `/zookeeper` -2.
        let root_stat = zk.exists("/").await.expect("/").expect("/ exists");
        let zk_stat = zk.exists("/zookeeper").await.expect("/zookeeper").expect("exists");
        eprintln!("fresh server: / {root_stat:?}\n/zookeeper {zk_stat:?}");
        assert_eq!(root_stat.cversion, -1);
        assert_eq!(zk_stat.cversion, -2);
        let (mut children, _) = zk.get_children("/zookeeper").await.expect("children");
        children.sort();
        assert_eq!(children, vec!["config".to_string(), "quota".to_string()]);
        assert_eq!(
            zk.create("/zookeeper", b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NodeExists)
        );
        assert_eq!(zk.delete("/zookeeper", ANY_VERSION).await, Err(ZkError::BadArguments));

        let root = fresh_root();
        zk.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let p = |rel: &str| format!("{root}/{rel}");

        // §1.1 paths: validated before sending, by the same rules.
        for bad in ["/a/./b", "/a/..", "/a/.", "//", "/a/"] {
            assert!(
                matches!(zk.delete(bad, ANY_VERSION).await, Err(ZkError::InvalidPath(_))),
                "{bad}"
            );
        }
        // A malformed path under a parent that does not exist: the client's
        // check comes first, so InvalidPath — neither NoNode nor BadArguments.
        assert!(matches!(
            zk.delete("/no-such-parent/./x", ANY_VERSION).await,
            Err(ZkError::InvalidPath(_))
        ));
        // Deleting `/`: zookeeper-client refuses before sending.
        let root_delete = zk.delete("/", ANY_VERSION).await;
        eprintln!("delete / -> {root_delete:?}");
        assert!(matches!(root_delete, Err(ZkError::InvalidArgument(_))));
        // `/p/` is a legal sequential prefix.
        zk.create(&p("p"), b"", CreateMode::Persistent).await.expect("p");
        let (name, _) = zk
            .create(&p("p/"), b"", CreateMode::PersistentSequential)
            .await
            .expect("p/ sequential");
        assert_eq!(name, p("p/0000000000"));

        // §1 item 1 / §1.3: the sequence counter counts creates, cversion is
        // creates + deletes.
        zk.create(&p("s"), b"", CreateMode::Persistent).await.expect("s");
        let s0 = zk
            .create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s0")
            .0;
        zk.create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s1");
        zk.delete(&s0, ANY_VERSION).await.expect("delete s0");
        let parent = zk.exists(&p("s")).await.expect("s").expect("exists");
        assert_eq!((parent.cversion, parent.num_children), (3, 1));
        let (s2, _) = zk
            .create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s2");
        assert_eq!(s2, p("s/s-0000000002"));
        zk.create(&p("s/plain"), b"", CreateMode::Persistent)
            .await
            .expect("plain");
        let (other_prefix, _) = zk
            .create(&p("s/other-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("other");
        assert_eq!(other_prefix, p("s/other-0000000004"), "the counter is per parent");

        // §1.5: -2 is no wildcard; a wrong version on a non-empty node is
        // BadVersion (checked before NotEmpty).
        assert_eq!(zk.set_data(&p("s"), b"", -2).await, Err(ZkError::BadVersion));
        assert_eq!(zk.delete(&p("s"), 5).await, Err(ZkError::BadVersion));
        assert_eq!(zk.delete(&p("s"), ANY_VERSION).await, Err(ZkError::NotEmpty));

        // §1.2: ephemerals cannot have children (sequential ones neither).
        zk.create(&p("e"), b"", CreateMode::Ephemeral).await.expect("e");
        assert_eq!(
            zk.create(&p("e/x"), b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NoChildrenForEphemerals)
        );
        assert_eq!(
            zk.create(&p("e/x-"), b"", CreateMode::PersistentSequential)
                .await
                .map(|_| ()),
            Err(ZkError::NoChildrenForEphemerals)
        );
        // Container and TTL nodes show ephemeralOwner 0.
        let (_, c) = zk.create(&p("c"), b"", CreateMode::Container).await.expect("container");
        assert_eq!(c.ephemeral_owner, 0);
        let (_, t) = zk
            .create(&p("t"), b"", CreateMode::PersistentWithTtl { ttl_ms: 60_000 })
            .await
            .expect("ttl (server runs with extended types)");
        assert_eq!(t.ephemeral_owner, 0);
        assert!(matches!(
            zk.create(&p("t0"), b"", CreateMode::PersistentWithTtl { ttl_ms: 0 })
                .await,
            Err(ZkError::InvalidArgument(_))
        ));

        // §1.7: a failed multi applies nothing and reports [0, err, -2 ...];
        // a successful one shares one zxid.
        let failed = zk
            .multi(vec![
                Op::Create {
                    path: p("m1"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m1"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::SetData {
                    path: p("s"),
                    data: vec![],
                    version: ANY_VERSION,
                },
            ])
            .await
            .expect_err("NodeExists in the middle");
        assert_eq!((failed.error.clone(), failed.index), (ZkError::NodeExists, 1));
        assert_eq!(
            failed.results,
            vec![
                OpResult::Error(None),
                OpResult::Error(Some(ZkError::NodeExists)),
                OpResult::Error(Some(ZkError::RuntimeInconsistency)),
            ]
        );
        assert_eq!(zk.exists(&p("m1")).await.expect("m1"), None);
        let ok = zk
            .multi(vec![
                Op::Create {
                    path: p("m2"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m2/a"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m2/s-"),
                    data: vec![],
                    mode: CreateMode::PersistentSequential,
                },
                Op::SetData {
                    path: p("m2"),
                    data: b"d".to_vec(),
                    version: 0,
                },
            ])
            .await
            .expect("multi");
        assert_eq!(ok.len(), 4);
        assert!(matches!(&ok[2], OpResult::Create { path, .. } if *path == p("m2/s-0000000001")));
        // 3.8.0 answers creates inside a multi without a Stat.
        if let OpResult::Create { stat, .. } = &ok[0] {
            eprintln!("multi create Stat on this server: {stat:?}");
            assert_eq!(stat.czxid, -1, "3.8.0 reports no Stat for a create in a multi");
        }
        let a = zk.exists(&p("m2/a")).await.expect("m2/a").expect("exists");
        let m2 = zk.exists(&p("m2")).await.expect("m2").expect("exists");
        assert_eq!((m2.czxid, m2.mzxid, m2.pzxid), (a.czxid, a.czxid, a.czxid));
        assert_eq!(zk.multi(vec![]).await, Ok(vec![]));

        // §1.8 watches: getData on a missing node sets no watch, exists does.
        assert_eq!(
            zk.get_data_watch(&p("w")).await.map(|_| ()).err(),
            Some(ZkError::NoNode)
        );
        let (_, created) = other.exists_watch(&p("w")).await.expect("exists watch");
        zk.create(&p("w"), b"", CreateMode::Persistent).await.expect("w");
        let e = tokio::time::timeout(Duration::from_secs(5), created.changed())
            .await
            .expect("event");
        assert_eq!(
            (e.event_type, e.path.as_deref()),
            (EventType::NodeCreated, Some(p("w").as_str()))
        );
        // A child's data change does not fire the parent's child watch.
        zk.create(&p("w/c"), b"", CreateMode::Persistent).await.expect("w/c");
        let (_, _, children) = other.get_children_watch(&p("w")).await.expect("child watch");
        zk.set_data(&p("w/c"), b"x", ANY_VERSION).await.expect("set");
        zk.delete(&p("w/c"), ANY_VERSION).await.expect("delete w/c");
        let e = tokio::time::timeout(Duration::from_secs(5), children.changed())
            .await
            .expect("event");
        assert_eq!(e.event_type, EventType::NodeChildrenChanged);

        // ZOOKEEPER-4466 as seen through zookeeper-client: a one-shot child
        // watch and a persistent-recursive watch by one session on one path —
        // the child watch never fires.
        let (_, _, swallowed) = other.get_children_watch(&p("w")).await.expect("child watch");
        let _recursive = other
            .add_watch(&p("w"), AddWatchMode::PersistentRecursive)
            .await
            .expect("add");
        zk.create(&p("w/d"), b"", CreateMode::Persistent).await.expect("w/d");
        let e = tokio::time::timeout(Duration::from_secs(2), swallowed.changed()).await;
        eprintln!("child watch under a recursive watch on the same path: {e:?}");
        assert!(e.is_err(), "the child watch fired after all: {e:?}");

        zk.close().await;
        other.close().await;
    });
}
