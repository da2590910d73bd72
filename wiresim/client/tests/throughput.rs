//! What the wire costs: the same operation loop (create, getData with a
//! watch, setData, getChildren, delete) on the same seeds, once through the
//! typed simulated client and once through zookeeper-client over the jute
//! wire protocol. Prints seconds per path and their ratio, measured in one
//! run with the two paths alternated seed by seed. A measurement, not a
//! check: run it in release with
//! `cargo test --release --manifest-path wiresim/Cargo.toml --test throughput -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use zkdst_recipes::zk::{CreateMode, ZkClient, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::wire::connect_string;
use zookeeper_client as zkc;

const OPS: usize = 2000;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        wire: true,
        ..Default::default()
    }
}

async fn typed(seed: u64) {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 6000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        for i in 0..OPS {
            let p = format!("/n{i}");
            zk.create(&p, b"v", CreateMode::Persistent).await.expect("create");
            zk.get_data(&p).await.expect("get");
            zk.set_data(&p, b"w", ANY_VERSION).await.expect("set");
            zk.get_children("/").await.expect("children");
            zk.delete(&p, ANY_VERSION).await.expect("delete");
        }
    });
    h.await.expect("client");
    c.shutdown();
}

async fn wire(seed: u64) {
    zkdst_wiresim::enter();
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    c.client_node(1)
        .spawn(async move {
            let zk = zkc::Client::connect(&connect_string(3)).await.expect("connect");
            let open = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
            for i in 0..OPS {
                let p = format!("/n{i}");
                zk.create(&p, b"v", &open).await.expect("create");
                zk.get_data(&p).await.expect("get");
                zk.set_data(&p, b"w", None).await.expect("set");
                zk.list_children("/").await.expect("children");
                zk.delete(&p, None).await.expect("delete");
            }
        })
        .await
        .expect("client");
    c.shutdown();
}

#[test]
#[ignore = "a measurement: run with --ignored --nocapture in release"]
fn wire_versus_typed_throughput() {
    let (mut t_typed, mut t_wire) = (Duration::ZERO, Duration::ZERO);
    let seeds = 20u64;
    for seed in 0..seeds {
        let t = Instant::now();
        run_seed(seed, None, move || typed(seed)).expect("typed seed");
        t_typed += t.elapsed();
        let t = Instant::now();
        run_seed(seed, None, move || wire(seed)).expect("wire seed");
        t_wire += t.elapsed();
    }
    let ops = seeds as usize * OPS * 5;
    println!(
        "{ops} ops per path: typed {:.3} s, wire {:.3} s, wire/typed = {:.2}",
        t_typed.as_secs_f64(),
        t_wire.as_secs_f64(),
        t_wire.as_secs_f64() / t_typed.as_secs_f64()
    );
}
