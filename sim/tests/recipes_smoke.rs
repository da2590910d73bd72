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

/// A site whose coordinator never decides aborts after its limit; a site
/// that waits after the coordinator decided gets that decision instead.
#[madsim::test]
async fn a_site_aborts_when_its_coordinator_never_decides() {
    use zkdst_recipes::two_phase::{Coordinator, Decision, Site};
    let mut c = Cluster::start(
        EnsembleConfig {
            tick_ms: 500,
            ..Default::default()
        },
        Recorder::new(),
        4,
    );
    assert!(c.wait_for_leader(Duration::from_secs(30)).await.is_some());
    let h = c.spawn_client(0, 4000, |zk| async move {
        let ctx = Ctx::new(zk, SimRuntime::new());
        // t1: the coordinator begins and then never decides.
        let _silent = Coordinator::begin(ctx.clone(), "/tx", "t1", &["a"])
            .await
            .expect("begin");
        let site = Site::join(ctx.clone(), "/tx", "t1", "a").await.expect("join");
        site.vote(Decision::Commit).await.expect("vote");
        let t0 = madsim::time::Instant::now();
        let d1 = site.decision_within(Duration::from_secs(2)).await.expect("decision");
        let waited = t0.elapsed();
        // t2: the coordinator decides commit; the bounded wait returns it.
        let coord = Coordinator::begin(ctx.clone(), "/tx", "t2", &["a"])
            .await
            .expect("begin");
        let site = Site::join(ctx.clone(), "/tx", "t2", "a").await.expect("join");
        site.vote(Decision::Commit).await.expect("vote");
        let decided = coord.decide(Duration::from_secs(5)).await.expect("decide");
        let d2 = site.decision_within(Duration::from_secs(2)).await.expect("decision");
        (d1, waited, decided, d2)
    });
    let (d1, waited, decided, d2) = h.await.unwrap();
    assert_eq!(
        d1,
        Decision::Abort,
        "an undecided transaction is aborted by the waiting site"
    );
    assert!(waited >= Duration::from_secs(2), "aborted before the limit: {waited:?}");
    assert_eq!((decided, d2), (Decision::Commit, Decision::Commit));
    c.shutdown();
}
