//! Znode behaviour that only shows in a running ensemble: the leader reaps
//! a container once its last child is gone (not one that never had a
//! child); getChildren's order is unspecified (servers shuffle it); a
//! request over jute.maxbuffer makes the server drop the connection.

use std::collections::BTreeSet;
use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        container_check_ms: 1000,
        ..Default::default()
    }
}

async fn containers(seed: u64) {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    c.spawn_client(1, 10_000, move |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/used", b"", CreateMode::Container).await.unwrap();
        zk.create("/never", b"", CreateMode::Container).await.unwrap();
        zk.create("/used/child", b"", CreateMode::Persistent).await.unwrap();
        madsim::time::sleep(Duration::from_secs(3)).await;
        assert!(
            zk.exists("/used").await.unwrap().is_some(),
            "seed {seed}: reaped with a child"
        );
        zk.delete("/used/child", ANY_VERSION).await.unwrap();
        madsim::time::sleep(Duration::from_secs(3)).await;
        zk.sync("/").await.unwrap();
        assert!(
            zk.exists("/used").await.unwrap().is_none(),
            "seed {seed}: an emptied container stayed"
        );
        assert!(
            zk.exists("/never").await.unwrap().is_some(),
            "seed {seed}: a container that never had a child was reaped"
        );
    })
    .await
    .unwrap();
    c.shutdown();
}

#[test]
fn the_leader_reaps_emptied_containers() {
    for seed in 0..10 {
        run_seed(seed, Some(Duration::from_secs(600)), move || containers(seed)).unwrap_or_else(|e| panic!("{e}"));
    }
}

async fn children_orders(seed: u64) -> usize {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let orders = c
        .spawn_client(1, 10_000, |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(10)).await);
            zk.create("/p", b"", CreateMode::Persistent).await.unwrap();
            for i in 0..8 {
                zk.create(&format!("/p/c{i}"), b"", CreateMode::Persistent)
                    .await
                    .unwrap();
            }
            let mut orders = BTreeSet::new();
            for _ in 0..10 {
                let (children, _) = zk.get_children("/p").await.unwrap();
                let mut sorted = children.clone();
                sorted.sort();
                assert_eq!(sorted, (0..8).map(|i| format!("c{i}")).collect::<Vec<_>>());
                orders.insert(children);
            }
            orders.len()
        })
        .await
        .unwrap();
    c.shutdown();
    orders
}

#[test]
fn get_children_order_is_unspecified() {
    // Recipes must sort: ten reads of eight children come back in more than
    // one order.
    for seed in 0..5 {
        let n = run_seed(seed, None, move || children_orders(seed)).unwrap_or_else(|e| panic!("{e}"));
        assert!(n > 1, "seed {seed}: getChildren always returned the same order");
    }
}

#[test]
fn an_oversized_request_drops_the_connection() {
    for seed in 0..5 {
        run_seed(seed, None, move || async move {
            let mut c = Cluster::start(cfg(), Recorder::new(), seed);
            c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
            c.spawn_client(1, 10_000, move |zk| async move {
                assert!(zk.wait_connected(Duration::from_secs(10)).await);
                let sid = zk.session_id();
                let big = vec![7u8; 1024 * 1024 + 1];
                let r = zk.create("/big", &big, CreateMode::Persistent).await;
                assert_eq!(r, Err(ZkError::ConnectionLoss), "seed {seed}");
                assert!(zk.wait_connected(Duration::from_secs(10)).await);
                assert_eq!(zk.session_id(), sid, "the session outlives the dropped connection");
                assert!(
                    zk.exists("/big").await.unwrap().is_none(),
                    "seed {seed}: applied anyway"
                );
                zk.create("/small", &big[..1000], CreateMode::Persistent).await.unwrap();
            })
            .await
            .unwrap();
            c.shutdown();
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
}
