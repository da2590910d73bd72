//! Reads as ZooKeeper serves them: multiRead answers each read on its own;
//! a follower behind the leader serves its own (stale) state until `sync`;
//! a follower that loses its leader stops serving and drops its clients.

use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ReadOp, ReadResult, SessionState, ZkClient, ZkError, ANY_VERSION};
use zkdst_sim::client::{ClientConfig, SimClient};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::zab::ServerId;

const SEEDS: u64 = 10;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        ..Default::default()
    }
}

fn run(name: &str, f: fn(u64) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) {
    for seed in 0..SEEDS {
        run_seed(seed, Some(Duration::from_secs(600)), move || f(seed)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A client on `servers` only, on its own node.
async fn client_on(c: &mut Cluster, id: u32, servers: Vec<ServerId>) -> SimClient {
    let node = c.client_node(id);
    let recorder = c.recorder().clone();
    let cfg = ClientConfig {
        id,
        servers,
        session_timeout_ms: 10_000,
    };
    node.spawn(async move { SimClient::connect(cfg, recorder) })
        .await
        .expect("client node")
}

async fn multi_read(seed: u64) {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 10_000, move |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/a", b"hello", CreateMode::Persistent).await.unwrap();
        zk.create("/a/x", b"", CreateMode::Persistent).await.unwrap();
        let (_, stat) = zk.get_data("/a").await.unwrap();
        let got = zk
            .multi_read(vec![
                ReadOp::GetChildren { path: "/a".into() },
                ReadOp::GetData { path: "/nope".into() },
                ReadOp::GetData { path: "/a".into() },
            ])
            .await
            .expect("multiRead");
        assert_eq!(
            got,
            vec![
                ReadResult::Children {
                    children: vec!["x".into()]
                },
                ReadResult::Error(ZkError::NoNode),
                ReadResult::Data {
                    data: b"hello".to_vec(),
                    stat
                },
            ],
            "seed {seed}"
        );
        assert_eq!(zk.multi_read(Vec::new()).await, Ok(Vec::new()));
        let bad = zk.multi_read(vec![ReadOp::GetData { path: "a".into() }]).await;
        assert!(matches!(bad, Err(ZkError::InvalidPath(_))), "{bad:?}");
    });
    h.await.unwrap();
    c.shutdown();
}

#[test]
fn multi_read_answers_each_read_on_its_own() {
    run("multi_read", |s| Box::pin(multi_read(s)));
}

async fn stale_reads(seed: u64) {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let follower = c.server_ids().into_iter().find(|s| *s != leader).unwrap();
    let reader = client_on(&mut c, 1, vec![follower]).await;
    let writer = client_on(&mut c, 2, vec![leader]).await;
    let (r, w) = (reader.clone(), writer.clone());
    c.client_node(1)
        .spawn(async move {
            assert!(r.wait_connected(Duration::from_secs(10)).await);
            assert!(w.wait_connected(Duration::from_secs(10)).await);
            w.create("/k", b"old", CreateMode::Persistent).await.unwrap();
            r.sync("/k").await.unwrap();
            assert_eq!(r.get_data("/k").await.unwrap().0, b"old");
        })
        .await
        .unwrap();
    c.cut_one_way(NodeRef::Server(leader), NodeRef::Server(follower));
    let (r, w) = (reader.clone(), writer.clone());
    c.client_node(1)
        .spawn(async move {
            w.set_data("/k", b"new", ANY_VERSION)
                .await
                .expect("write commits without the follower");
            // Well within syncLimit: the follower still serves, from its own tree.
            let (data, _) = r.get_data("/k").await.expect("read on the lagging follower");
            assert_eq!(
                data, b"old",
                "seed {seed}: a lagging follower served the leader's state"
            );
        })
        .await
        .unwrap();
    c.heal_all();
    let r = reader.clone();
    c.client_node(1)
        .spawn(async move {
            // The follower may have dropped its clients meanwhile; retry
            // until a sync goes through, then the read is fresh.
            let mut synced = false;
            for _ in 0..40 {
                if r.wait_connected(Duration::from_secs(5)).await && r.sync("/k").await.is_ok() {
                    synced = true;
                    break;
                }
            }
            assert!(synced, "seed {seed}: no sync after the heal");
            assert_eq!(
                r.get_data("/k").await.unwrap().0,
                b"new",
                "seed {seed}: stale after sync"
            );
        })
        .await
        .unwrap();
    c.shutdown();
}

#[test]
fn a_lagging_follower_serves_stale_reads_until_sync() {
    run("stale_reads", |s| Box::pin(stale_reads(s)));
}

async fn leaderless_follower(seed: u64) {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let follower = c.server_ids().into_iter().find(|s| *s != leader).unwrap();
    let zk = client_on(&mut c, 1, vec![follower]).await;
    let z = zk.clone();
    c.client_node(1)
        .spawn(async move {
            assert!(z.wait_connected(Duration::from_secs(10)).await);
            z.create("/x", b"", CreateMode::Persistent).await.unwrap();
        })
        .await
        .unwrap();
    // Cut the follower off from the other servers, not from its client.
    for s in c.server_ids().into_iter().filter(|s| *s != follower) {
        c.cut(NodeRef::Server(follower), NodeRef::Server(s));
        c.cut(NodeRef::Server(s), NodeRef::Server(follower));
    }
    let z = zk.clone();
    c.client_node(1)
        .spawn(async move {
            let mut w = z.state_watch();
            // syncLimit (10 ticks = 5 s) plus the client's read timeout.
            let dropped = madsim::time::timeout(Duration::from_secs(15), async {
                while z.state() == SessionState::SyncConnected {
                    w.changed().await;
                }
            })
            .await;
            assert!(
                dropped.is_ok(),
                "seed {seed}: a follower without a leader kept its client"
            );
            assert_eq!(z.state(), SessionState::Disconnected, "seed {seed}");
            // It does not take the client back while it has no leader.
            madsim::time::sleep(Duration::from_secs(3)).await;
            assert_eq!(z.state(), SessionState::Disconnected, "seed {seed}");
        })
        .await
        .unwrap();
    c.heal_all();
    let z = zk.clone();
    c.client_node(1)
        .spawn(async move {
            assert!(
                z.wait_connected(Duration::from_secs(30)).await,
                "seed {seed}: no reconnect"
            );
            assert!(z.exists("/x").await.unwrap().is_some());
        })
        .await
        .unwrap();
    c.shutdown();
}

#[test]
fn a_follower_without_a_leader_drops_its_clients() {
    run("leaderless_follower", |s| Box::pin(leaderless_follower(s)));
}
