//! A follower cut off from its leader: what it forwarded into the cut is
//! never applied. Real ZooKeeper's leader closes the LearnerHandler of a
//! follower silent for syncLimit, and the follower closes its socket when
//! it stops following, so the bytes it queued die with the connection —
//! even when the link heals and the follower rejoins in the same epoch.
//! Applying them would commit a create seconds after its client got
//! ConnectionLoss and moved on (found by the wire lock scenario, seed 43).

use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::zab::ZabConfig;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        // Both sides give up on the link after 1.5 s, well inside the
        // 10 s session, so the session outlives the cut.
        zab: ZabConfig {
            sync_limit: 3,
            ..ZabConfig::default()
        },
        ..Default::default()
    }
}

/// Returns whether `/late` exists once everything settled.
async fn forwarded_into_a_cut(seed: u64) -> bool {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let ids = c.server_ids();
    let follower = *ids.iter().find(|s| **s != leader).expect("a follower");
    let other = *ids.iter().find(|s| **s != leader && **s != follower).expect("another");
    // Client 1 reaches only the follower.
    c.client_node(1);
    for s in [leader, other] {
        c.cut(NodeRef::Client(1), NodeRef::Server(s));
        c.cut(NodeRef::Server(s), NodeRef::Client(1));
    }
    let h = c.spawn_client(1, 10_000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk
    });
    let zk = h.await.unwrap();
    // Cut the follower from its leader, both ways; its write is queued on
    // the cut link.
    c.cut(NodeRef::Server(follower), NodeRef::Server(leader));
    c.cut(NodeRef::Server(leader), NodeRef::Server(follower));
    let create = c.client_node(1).spawn(async move {
        let r = zk.create("/late", b"", CreateMode::Persistent).await;
        (r, zk)
    });
    // Long enough for both sides to give up on each other, short of the
    // session timeout.
    madsim::time::sleep(Duration::from_millis(4_000)).await;
    c.uncut(NodeRef::Server(follower), NodeRef::Server(leader));
    c.uncut(NodeRef::Server(leader), NodeRef::Server(follower));
    let (r, _zk) = create.await.unwrap();
    assert_eq!(r.map(|_| ()), Err(ZkError::ConnectionLoss), "seed {seed}");
    // Let the follower rejoin and its stalled link drain.
    madsim::time::sleep(Duration::from_secs(20)).await;
    let check = c.spawn_client(2, 10_000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.sync("/").await.expect("sync");
        zk.exists("/late").await.expect("exists")
    });
    let st = check.await.unwrap();
    c.shutdown();
    st.is_some()
}

#[test]
fn a_write_forwarded_into_a_cut_is_never_applied() {
    for seed in 0..10 {
        let late = run_seed(seed, Some(Duration::from_secs(600)), move || forwarded_into_a_cut(seed))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(!late, "seed {seed}: the create committed after its ConnectionLoss");
    }
}
