//! First contact: an ensemble elects a leader and serves a client; every
//! ensemble size (1, 3, 5, 7) elects, commits, and survives losing its
//! leader when it has a quorum without it.

use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

#[madsim::test]
async fn ensemble_serves_a_client() {
    let rec = Recorder::new();
    let mut c = Cluster::start(
        EnsembleConfig {
            tick_ms: 500,
            ..Default::default()
        },
        rec.clone(),
        1,
    );
    let leader = c.wait_for_leader(Duration::from_secs(30)).await;
    assert!(leader.is_some(), "no leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await, "not connected");
        let (p, s) = zk.create("/a", b"x", CreateMode::Persistent).await.unwrap();
        assert_eq!(p, "/a");
        assert_eq!(s.version, 0);
        let (p2, _) = zk.create("/a/q-", b"", CreateMode::PersistentSequential).await.unwrap();
        assert_eq!(p2, "/a/q-0000000000");
        assert_eq!(
            zk.create("/a", b"", CreateMode::Persistent).await.unwrap_err(),
            ZkError::NodeExists
        );
        let st = zk.set_data("/a", b"y", 0).await.unwrap();
        assert_eq!(st.version, 1);
        let (d, _) = zk.get_data("/a").await.unwrap();
        assert_eq!(d, b"y");
        let (kids, _) = zk.get_children("/a").await.unwrap();
        assert_eq!(kids, vec!["q-0000000000".to_string()]);
        zk.sync("/").await.unwrap();
        assert_eq!(zk.delete("/a", ANY_VERSION).await.unwrap_err(), ZkError::NotEmpty);
        zk.session_id()
    });
    let sid = h.await.unwrap();
    assert_ne!(sid, 0);
    let hist = rec.history();
    assert!(hist.events.len() > 10);
    c.shutdown();
}

async fn sized(servers: u32, seed: u64) {
    let mut c = Cluster::start(
        EnsembleConfig {
            servers,
            tick_ms: 500,
            ..Default::default()
        },
        Recorder::new(),
        seed,
    );
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("no leader");
    let zk = c
        .spawn_client(1, 10_000, |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(10)).await);
            zk.create("/x", b"1", CreateMode::Persistent).await.unwrap();
            zk
        })
        .await
        .unwrap();
    if servers > 1 {
        c.kill_server(leader, true);
        let next = c.wait_for_leader(Duration::from_secs(30)).await;
        assert!(
            next.is_some_and(|l| l != leader),
            "{servers} servers, seed {seed}: no new leader"
        );
    }
    let node = c.client_node(1);
    node.spawn(async move {
        assert!(zk.wait_connected(Duration::from_secs(30)).await, "no reconnect");
        assert_eq!(zk.get_data("/x").await.unwrap().0, b"1", "acknowledged write lost");
        zk.set_data("/x", b"2", ANY_VERSION).await.unwrap();
    })
    .await
    .unwrap();
    c.shutdown();
}

#[test]
fn every_ensemble_size_elects_commits_and_fails_over() {
    for servers in [1, 3, 5, 7] {
        for seed in 0..5 {
            run_seed(seed, Some(Duration::from_secs(600)), move || sized(servers, seed))
                .unwrap_or_else(|e| panic!("{servers} servers: {e}"));
        }
    }
}
