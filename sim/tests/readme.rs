//! The example in README.md, kept compiling and passing.

use std::time::Duration;
use zkdst_recipes::zk::{CreateMode, ZkClient};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

#[test]
fn my_recipe_survives_a_leader_partition() {
    for seed in 0..200 {
        run_seed(seed, None, move || async move {
            let rec = Recorder::new();
            let mut c = Cluster::start(EnsembleConfig::default(), rec.clone(), seed);
            c.wait_for_leader(Duration::from_secs(30)).await.unwrap();
            let worker = c.spawn_client(0, 6000, |zk| async move {
                // ... your recipe, using `zk` ...
                zk.create("/x", b"", CreateMode::Persistent).await
            });
            if let Some(l) = c.leader() {
                let rest: Vec<NodeRef> = c.nodes().into_iter().filter(|n| *n != NodeRef::Server(l)).collect();
                c.partition(&[vec![NodeRef::Server(l)], rest]);
            }
            madsim::time::sleep(Duration::from_secs(5)).await;
            c.heal_all();
            let _ = worker.await;
            c.shutdown();
            // Judge the history with the checkers:
            let h = rec.history();
            let r = zkdst_checker::properties::registry::run("zk-consistency", &h, &Default::default()).unwrap();
            assert_eq!(
                r.verdict,
                zkdst_checker::Verdict::Pass,
                "{}",
                zkdst_checker::report::render_text(&h, &[r.clone()])
            );
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
}
