//! The recipes run on the simulated ensemble through the same interface
//! they use in production: a lock held by one client at a time, with
//! increasing fencing tokens.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkdst_recipes::lock::Lock;
use zkdst_recipes::Ctx;
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runtime::SimRuntime;

#[madsim::test]
async fn lock_is_exclusive_and_tokens_increase() {
    let rec = Recorder::new();
    let mut c = Cluster::start(
        EnsembleConfig {
            tick_ms: 500,
            ..Default::default()
        },
        rec.clone(),
        3,
    );
    assert!(c.wait_for_leader(Duration::from_secs(30)).await.is_some());
    let holders = Arc::new(Mutex::new(0u32));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut hs = Vec::new();
    for id in 0..4 {
        let holders = holders.clone();
        let tokens = tokens.clone();
        hs.push(c.spawn_client(id, 4000, move |zk| async move {
            let ctx = Ctx::new(zk, SimRuntime::new());
            let lock = Lock::new(ctx, "/locks/a");
            for _ in 0..3 {
                let guard = lock.acquire().await.expect("acquire");
                {
                    let mut h = holders.lock().unwrap();
                    *h += 1;
                    assert_eq!(*h, 1, "two holders at once");
                }
                tokens.lock().unwrap().push(guard.token());
                madsim::time::sleep(Duration::from_millis(20)).await;
                *holders.lock().unwrap() -= 1;
                let _released = guard.release_and_wait().await;
            }
        }));
    }
    for h in hs {
        h.await.unwrap();
    }
    let t = tokens.lock().unwrap().clone();
    assert_eq!(t.len(), 12);
    assert!(t.windows(2).all(|w| w[0] < w[1]), "fencing tokens must increase: {t:?}");
    c.shutdown();
}
