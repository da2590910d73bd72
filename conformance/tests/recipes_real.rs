//! The recipes on a real ZooKeeper: lock, queue, election and double
//! barrier, several clients each, and a queue whose directories are
//! containers the server reaps, through `RealClient` and the tokio
//! runtime (`TokioRuntime`) — on the standalone server, and on the
//! three-server ensemble while one server is killed and restarted.
//!
//! Each client is its own session. Every wait is bounded.
#![cfg(feature = "real")]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use zkdst_conformance::real::fresh_root;
use zkdst_conformance::{RealEnsemble, RealServer, ServerOptions};
use zkdst_real::{RealClient, RealOptions, TokioRuntime};
use zkdst_recipes::barrier::DoubleBarrier;
use zkdst_recipes::election::Election;
use zkdst_recipes::lock::Lock;
use zkdst_recipes::queue::{AtMostOnceConsumer, Queue};
use zkdst_recipes::zk::{CreateMode, ZkClient};
use zkdst_recipes::{Ctx, RetryPolicy};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

type RealCtx = Ctx<RealClient, TokioRuntime>;

async fn ctx(connect: &str) -> RealCtx {
    let zk = RealClient::connect_with(
        connect,
        RealOptions {
            session_timeout: Duration::from_secs(8),
            connect_timeout: Duration::from_secs(20),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("connecting to {connect}: {e}"));
    Ctx::new(zk, TokioRuntime::new()).with_retry(RetryPolicy::default())
}

async fn close_all(ctxs: &[RealCtx]) {
    for c in ctxs {
        c.client().close().await;
    }
}

/// Four clients take a lock three times each: never two holders, fencing
/// tokens increase.
async fn lock_smoke(connect: &str, root: &str) -> String {
    let holders = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut ctxs = Vec::new();
    for _ in 0..4 {
        ctxs.push(ctx(connect).await);
    }
    let mut tasks = Vec::new();
    for c in &ctxs {
        let (c, holders, tokens, dir) = (c.clone(), holders.clone(), tokens.clone(), format!("{root}/lock"));
        tasks.push(tokio::spawn(async move {
            let lock = Lock::new(c, dir);
            for _ in 0..3 {
                let guard = lock.acquire().await.expect("acquire");
                assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                tokens.lock().unwrap().push(guard.token());
                tokio::time::sleep(Duration::from_millis(20)).await;
                holders.fetch_sub(1, Ordering::SeqCst);
                let _ = guard.release_and_wait().await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("lock client");
    }
    close_all(&ctxs).await;
    let mut t = tokens.lock().unwrap().clone();
    assert_eq!(t.len(), 12);
    let in_order = t.windows(2).all(|w| w[0] < w[1]);
    assert!(in_order, "fencing tokens must increase in acquisition order: {t:?}");
    t.dedup();
    format!(
        "lock: 12 acquisitions by 4 clients, tokens increasing ({} distinct)",
        t.len()
    )
}

/// Two producers enqueue 15 items each, three consumers take them all:
/// every item exactly once.
async fn queue_smoke(connect: &str, root: &str) -> String {
    let dir = format!("{root}/queue");
    let mut ctxs = Vec::new();
    for _ in 0..5 {
        ctxs.push(ctx(connect).await);
    }
    let mut producers = Vec::new();
    for (p, c) in ctxs[..2].iter().enumerate() {
        let (c, dir) = (c.clone(), dir.clone());
        producers.push(tokio::spawn(async move {
            let q = Queue::new(c, &dir);
            for i in 0..15 {
                q.enqueue(format!("p{p}-{i}").as_bytes()).await.expect("enqueue");
            }
        }));
    }
    let taken = Arc::new(Mutex::new(Vec::new()));
    let mut consumers = Vec::new();
    for c in &ctxs[2..] {
        let (c, dir, taken) = (c.clone(), dir.clone(), taken.clone());
        consumers.push(tokio::spawn(async move {
            let q = AtMostOnceConsumer::new(c, &dir);
            loop {
                match q.take_for(Duration::from_secs(3)).await.expect("take") {
                    Some(item) => taken
                        .lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&item.data).to_string()),
                    None => return,
                }
            }
        }));
    }
    for t in producers {
        t.await.expect("producer");
    }
    for t in consumers {
        t.await.expect("consumer");
    }
    close_all(&ctxs).await;
    let taken = taken.lock().unwrap().clone();
    let distinct: BTreeSet<&String> = taken.iter().collect();
    assert_eq!(distinct.len(), taken.len(), "an item was taken twice: {taken:?}");
    assert_eq!(taken.len(), 30, "items lost: {taken:?}");
    "queue: 30 items from 2 producers taken exactly once by 3 consumers".to_string()
}

/// Three candidates: one leader at a time; each resigns in turn and the
/// next is elected, with a larger token.
async fn election_smoke(connect: &str, root: &str) -> String {
    let dir = format!("{root}/election");
    let mut ctxs = Vec::new();
    for _ in 0..3 {
        ctxs.push(ctx(connect).await);
    }
    let leaders = Arc::new(AtomicUsize::new(0));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (i, c) in ctxs.iter().enumerate() {
        let (c, dir, leaders, tokens) = (c.clone(), dir.clone(), leaders.clone(), tokens.clone());
        tasks.push(tokio::spawn(async move {
            let e = Election::new(c, dir);
            let lead = e.campaign(format!("candidate-{i}").as_bytes()).await.expect("campaign");
            assert_eq!(leaders.fetch_add(1, Ordering::SeqCst), 0, "two leaders at once");
            let info = e.leader().await.expect("leader").expect("a leader");
            assert!(lead.is_leader());
            tokens.lock().unwrap().push(lead.token());
            tokio::time::sleep(Duration::from_millis(50)).await;
            leaders.fetch_sub(1, Ordering::SeqCst);
            lead.resign().await.expect("resign");
            info
        }));
    }
    for t in tasks {
        t.await.expect("candidate");
    }
    close_all(&ctxs).await;
    let t = tokens.lock().unwrap().clone();
    assert_eq!(t.len(), 3);
    assert!(t.windows(2).all(|w| w[0] < w[1]), "leadership tokens: {t:?}");
    "election: 3 candidates led one at a time, tokens increasing".to_string()
}

/// Three participants: nobody passes `enter` before all three joined,
/// nobody passes `leave` before all three left.
async fn double_barrier_smoke(connect: &str, root: &str) -> String {
    let dir = format!("{root}/barrier");
    let mut ctxs = Vec::new();
    for _ in 0..3 {
        ctxs.push(ctx(connect).await);
    }
    let entered = Arc::new(AtomicUsize::new(0));
    let left = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (i, c) in ctxs.iter().enumerate() {
        let (c, dir, entered, left) = (c.clone(), dir.clone(), entered.clone(), left.clone());
        tasks.push(tokio::spawn(async move {
            // Staggered arrivals.
            tokio::time::sleep(Duration::from_millis(150 * i as u64)).await;
            let mut b = DoubleBarrier::new(c, dir, 3);
            entered.fetch_add(1, Ordering::SeqCst);
            b.enter().await.expect("enter");
            assert_eq!(entered.load(Ordering::SeqCst), 3, "passed enter before all joined");
            tokio::time::sleep(Duration::from_millis(100 * i as u64)).await;
            left.fetch_add(1, Ordering::SeqCst);
            b.leave().await.expect("leave");
            assert_eq!(left.load(Ordering::SeqCst), 3, "passed leave before all left");
        }));
    }
    for t in tasks {
        t.await.expect("participant");
    }
    close_all(&ctxs).await;
    "double barrier: 3 participants entered and left together".to_string()
}

/// Waits up to `limit` for `path` to be gone; true if it went. A read
/// that fails (ConnectionLoss while the nemesis kills the leader) is
/// tried again.
async fn gone_within(c: &RealCtx, path: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(None) = c.client().exists(path).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// With container parents (Curator's `creatingParentContainersIfNeeded`)
/// the server deletes the queue's directories once emptied (it looks
/// every second here), the next enqueue recreates them, and every item is
/// still taken exactly once; idle, the queue leaves no node behind.
async fn container_queue_smoke(connect: &str, root: &str) -> String {
    let dir = format!("{root}/cqueue");
    let (producer, consumer) = (
        ctx(connect).await.with_container_parents(),
        ctx(connect).await.with_container_parents(),
    );
    let q = Queue::new(producer.clone(), &dir);
    let c = AtMostOnceConsumer::new(consumer.clone(), &dir);
    let mut taken = BTreeSet::new();
    for round in 0..2 {
        for i in 0..5 {
            q.enqueue(format!("r{round}-{i}").as_bytes()).await.expect("enqueue");
        }
        for _ in 0..5 {
            let item = c
                .take_for(Duration::from_secs(5))
                .await
                .expect("take")
                .expect("an item");
            assert!(
                taken.insert(String::from_utf8_lossy(&item.data).to_string()),
                "taken twice"
            );
        }
        let items = format!("{dir}/items");
        assert!(
            gone_within(&consumer, &items, Duration::from_secs(30)).await,
            "round {round}: the emptied container {items} was not reaped"
        );
    }
    assert_eq!(taken.len(), 10);
    assert!(
        gone_within(&consumer, &dir, Duration::from_secs(30)).await,
        "the idle queue's directory {dir} was left behind"
    );
    close_all(&[producer, consumer]).await;
    "queue with container parents: items/ reaped after each round and recreated, 10 items taken once".to_string()
}

async fn all_recipes(connect: &str) -> Vec<String> {
    let root = fresh_root();
    let admin = ctx(connect).await;
    admin
        .client()
        .create(&root, b"", CreateMode::Persistent)
        .await
        .expect("root");
    admin.client().close().await;
    vec![
        lock_smoke(connect, &root).await,
        queue_smoke(connect, &root).await,
        election_smoke(connect, &root).await,
        double_barrier_smoke(connect, &root).await,
        container_queue_smoke(connect, &root).await,
    ]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[test]
fn recipes_on_the_standalone_server() {
    let _serial = serial();
    let server = RealServer::start(ServerOptions::default()).unwrap_or_else(|e| panic!("starting ZooKeeper: {e}"));
    let connect = server.connect_string();
    let started = Instant::now();
    let done =
        runtime().block_on(async { tokio::time::timeout(Duration::from_secs(180), all_recipes(&connect)).await });
    let done = done.expect("the recipes took longer than 180 s");
    eprintln!("standalone, {:?}:\n  {}", started.elapsed(), done.join("\n  "));
}

/// The same recipes on the ensemble while one member (the leader, the
/// member that hurts most) is killed and, two seconds later, restarted.
#[test]
fn recipes_on_the_ensemble_with_a_member_killed_and_restarted() {
    let _serial = serial();
    let ensemble = RealEnsemble::start(ServerOptions {
        tick_ms: 500,
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let connect = ensemble.connect_string();
    let ensemble = Arc::new(Mutex::new(ensemble));
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let nemesis = {
        let (ensemble, finished) = (ensemble.clone(), finished.clone());
        std::thread::spawn(move || {
            let mut log = Vec::new();
            // Each round: kill the leader while the recipes run, restart it.
            for round in 0..3 {
                std::thread::sleep(Duration::from_millis(if round == 0 { 300 } else { 1000 }));
                if round > 0 && finished.load(Ordering::SeqCst) {
                    break;
                }
                let mut e = ensemble.lock().unwrap();
                let Some(leader) = e.leader() else {
                    log.push(format!("round {round}: no leader to kill"));
                    continue;
                };
                e.kill(leader);
                drop(e);
                let killed = Instant::now();
                std::thread::sleep(Duration::from_secs(2));
                let mut e = ensemble.lock().unwrap();
                let restarted = e.restart(leader);
                log.push(format!(
                    "round {round}: killed member {leader}, restarted after {:?}: {restarted:?}",
                    killed.elapsed()
                ));
                let _ = e.wait_for_leader(Duration::from_secs(30));
            }
            log
        })
    };
    let started = Instant::now();
    let done =
        runtime().block_on(async { tokio::time::timeout(Duration::from_secs(300), all_recipes(&connect)).await });
    finished.store(true, Ordering::SeqCst);
    let log = nemesis.join().expect("nemesis thread");
    eprintln!("ensemble faults:\n  {}", log.join("\n  "));
    let done = done.expect("the recipes took longer than 300 s");
    eprintln!("ensemble, {:?}:\n  {}", started.elapsed(), done.join("\n  "));
    assert!(log.iter().any(|l| l.contains("killed")), "no server was killed");
}
