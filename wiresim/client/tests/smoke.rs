//! zookeeper-client 0.11, unmodified, against the simulated ensemble: it
//! connects through the wire port, creates, reads, watches, runs its own
//! lock recipe, survives a dropped connection, and the same seed gives the
//! same trace twice.

use std::time::Duration;

use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::wire::connect_string;
use zookeeper_client as zkc;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        wire: true,
        ..Default::default()
    }
}

/// One seed: two zookeeper-client sessions do a bit of everything; the
/// trace lists what they saw, with virtual times.
pub async fn scenario(seed: u64) -> Vec<String> {
    zkdst_wiresim::enter();
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    // Every server serving implies an established leader.
    assert!(
        c.wait_serving(Duration::from_secs(30)).await,
        "servers never all served"
    );
    let node = c.client_node(1);
    let id = node.id();
    let trace = node
        .spawn(async move {
            let mut t = Vec::new();
            let start = std::time::Instant::now();
            let _ = start;
            let mut log = |s: String| {
                t.push(format!(
                    "{:>6}ms {s}",
                    madsim::time::TimeHandle::current().elapsed().as_millis()
                ))
            };
            let servers = connect_string(3);
            let connect = || async {
                zkc::Client::connector()
                    .with_session_timeout(Duration::from_secs(6))
                    .connect(&servers)
                    .await
            };
            let zk = connect().await.expect("connects");
            log(format!("session {:#x}", zk.session_id().0));
            let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
            let (stat, _) = zk.create("/a", b"v0", &opts).await.expect("create");
            log(format!("created /a czxid {:#x}", stat.czxid));
            let (data, _, watcher) = zk.get_and_watch_data("/a").await.expect("get");
            assert_eq!(data, b"v0");
            log("read /a".into());
            let other = connect().await.expect("second session");
            log(format!("session {:#x}", other.session_id().0));
            other.set_data("/a", b"v1", None).await.expect("set");
            let event = watcher.changed().await;
            log(format!("event {:?} {}", event.event_type, event.path));
            assert_eq!(event.event_type, zkc::EventType::NodeDataChanged);

            // Its own lock recipe (Curator layout), two contenders.
            let prefix = zkc::LockPrefix::new_curator("/locks", "lock-").expect("prefix");
            let lopts = zkc::LockOptions::new(zkc::Acls::anyone_all())
                .with_ancestor_options(zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all()))
                .expect("options");
            let held = zk.lock(prefix, b"", lopts.clone()).await.expect("lock");
            log(format!("locked {}", held.lock_path().rsplit('/').next().unwrap_or("")));
            held.set_data("/a", b"locked", None).await.expect("fenced write");
            drop(held);
            let prefix2 = zkc::LockPrefix::new_curator("/locks", "lock-").expect("prefix");
            let held2 = other.lock(prefix2, b"", lopts).await.expect("second lock");
            log(format!("locked {}", held2.lock_path().rsplit('/').next().unwrap_or("")));
            drop(held2);

            // A dropped connection with watches armed: the client
            // reconnects, re-arms them with SetWatches, the session lives.
            let (_, _, data_watch) = zk.get_and_watch_data("/a").await.expect("watch /a");
            let (_, _, child_watch) = zk.get_and_watch_children("/locks").await.expect("watch /locks");
            let n = zkdst_sim::wire::reset_connections(id);
            log(format!("reset {n} connections"));
            other.set_data("/a", b"after", None).await.expect("set after reset");
            let event = data_watch.changed().await;
            log(format!(
                "event {:?} {} after the reconnect",
                event.event_type, event.path
            ));
            other.create("/locks/x", b"", &opts).await.expect("child");
            let event = child_watch.changed().await;
            log(format!(
                "event {:?} {} after the reconnect",
                event.event_type, event.path
            ));
            let (data, stat) = zk.get_data("/a").await.expect("read after reconnect");
            log(format!("read {:?} v{}", String::from_utf8_lossy(&data), stat.version));
            assert_eq!(data, b"after");
            let children = zk.list_children("/locks").await.expect("children");
            log(format!("{} lock nodes left", children.len()));
            t
        })
        .await
        .expect("client node");
    c.shutdown();
    trace
}

#[test]
fn zookeeper_client_runs_in_the_simulation_and_replays() {
    for seed in 0..5u64 {
        let once = run_seed(seed, Some(Duration::from_secs(600)), move || scenario(seed)).expect("seed runs");
        let twice = run_seed(seed, Some(Duration::from_secs(600)), move || scenario(seed)).expect("seed runs");
        if seed == 0 {
            eprintln!("{}", once.join("\n"));
        }
        assert_eq!(once, twice, "seed {seed} replays");
    }
}
