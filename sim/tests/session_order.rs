//! A session's requests run in order on a server across its connections:
//! ZooKeeper's CommitProcessor queues them by session id, so a write the
//! server received on a connection that then closed still runs, and a read
//! the session sends on its next connection to that server is answered
//! after it (and sees it). Answering the read first made zookeeper-client's
//! lock cleanup look for a node before the create that made it committed,
//! leaving an orphan only the simulator could produce (wire
//! library-lock-shared, seeds 101 and 276).

use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::zab::ZabConfig;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        // The leader keeps leading through the 1 s cut below.
        zab: ZabConfig {
            sync_limit: 10,
            ..ZabConfig::default()
        },
        ..Default::default()
    }
}

/// Whether the read on the new connection saw the old connection's create.
async fn read_after_reconnect(seed: u64) -> bool {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let followers: Vec<_> = c.server_ids().into_iter().filter(|s| *s != leader).collect();
    // Client 1 reaches only the leader, so it reconnects there.
    c.client_node(1);
    for &s in &followers {
        c.cut(NodeRef::Client(1), NodeRef::Server(s));
        c.cut(NodeRef::Server(s), NodeRef::Client(1));
    }
    let zk = c
        .spawn_client(1, 10_000, |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(10)).await);
            zk
        })
        .await
        .unwrap();
    // The leader cannot reach a quorum: the create waits in its pipeline.
    for &s in &followers {
        c.cut(NodeRef::Server(leader), NodeRef::Server(s));
        c.cut(NodeRef::Server(s), NodeRef::Server(leader));
    }
    let writer = zk.clone();
    let create = c
        .client_node(1)
        .spawn(async move { writer.create("/early", b"", CreateMode::Persistent).await });
    madsim::time::sleep(Duration::from_millis(300)).await;
    zk.drop_connection();
    let reader = zk.clone();
    let read = c.client_node(1).spawn(async move {
        // Until the client is on its new connection (a read on the old one
        // fails with it).
        loop {
            assert!(reader.wait_connected(Duration::from_secs(10)).await);
            match reader.exists("/early").await {
                Err(ZkError::ConnectionLoss) => madsim::time::sleep(Duration::from_millis(10)).await,
                r => break r,
            }
        }
    });
    madsim::time::sleep(Duration::from_millis(1_000)).await;
    for &s in &followers {
        c.uncut(NodeRef::Server(leader), NodeRef::Server(s));
        c.uncut(NodeRef::Server(s), NodeRef::Server(leader));
    }
    assert_eq!(
        create.await.unwrap().map(|_| ()),
        Err(ZkError::ConnectionLoss),
        "seed {seed}"
    );
    let seen = read.await.unwrap().expect("exists");
    c.shutdown();
    seen.is_some()
}

#[test]
fn a_read_on_the_next_connection_waits_for_the_write_the_last_one_sent() {
    for seed in 0..10 {
        let seen = run_seed(seed, Some(Duration::from_secs(600)), move || read_after_reconnect(seed))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(seen, "seed {seed}: the read overtook the session's earlier write");
    }
}
