//! `cargo bench -p zkdst-sim`: the simulator's speed and memory.
//!
//! - write-heavy: 3 servers, 20 clients in closed loop (set_data/create)
//!   for 60 simulated seconds → simulated ZooKeeper operations per wall
//!   second (target ≥ 50,000).
//! - idle-heavy: 5 servers, 200 sessions with T = 10 s, one simulated hour,
//!   no operations → simulated seconds per wall second (target ≥ 10,000).
//! - memory: many seeds of a small faulty scenario in one process →
//!   resident memory growth (target < 50 MB over 10,000 seeds).
//!
//! Speed figures are the median of ZKDST_BENCH_REPEAT runs (default 5);
//! ZKDST_BENCH_ONLY=write|idle|memory runs one; ZKDST_BENCH_SEEDS lowers
//! the memory seeds for a quick look.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkdst_recipes::zk::{CreateMode, ZkClient, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

async fn write_heavy(ops: Arc<AtomicU64>) {
    let rec = Recorder::new();
    let mut c = Cluster::start(
        EnsembleConfig {
            servers: 3,
            tick_ms: 2000,
            ..Default::default()
        },
        rec,
        1,
    );
    c.wait_for_leader(Duration::from_secs(60)).await.expect("leader");
    let stop = madsim::time::Instant::now() + Duration::from_secs(60);
    let mut hs = Vec::new();
    for id in 0..20u32 {
        let ops = ops.clone();
        hs.push(c.spawn_client(id, 10_000, move |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(30)).await);
            let mine = format!("/w{id}");
            let _ = zk.create(&mine, b"", CreateMode::Persistent).await;
            let mut n = 0u64;
            while madsim::time::Instant::now() < stop {
                n += 1;
                let r = if n % 2 == 0 {
                    zk.set_data(&mine, b"x", ANY_VERSION).await.map(|_| ())
                } else {
                    zk.create(&format!("{mine}/c{n}"), b"", CreateMode::Persistent)
                        .await
                        .map(|_| ())
                };
                if r.is_ok() {
                    ops.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for h in hs {
        let _ = h.await;
    }
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;
}

async fn idle_heavy() {
    let rec = Recorder::new();
    let mut c = Cluster::start(
        EnsembleConfig {
            servers: 5,
            tick_ms: 2000,
            ..Default::default()
        },
        rec,
        2,
    );
    c.wait_for_leader(Duration::from_secs(60)).await.expect("leader");
    let mut hs = Vec::new();
    for id in 0..200u32 {
        hs.push(c.spawn_client(id, 10_000, |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(60)).await);
            madsim::time::sleep(Duration::from_secs(3600)).await;
            zk.session_id()
        }));
    }
    for h in hs {
        let _ = h.await;
    }
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;
}

async fn small_faulty(seed: u64) {
    let rec = Recorder::new();
    let mut c = Cluster::start(
        EnsembleConfig {
            servers: 3,
            tick_ms: 500,
            ..Default::default()
        },
        rec,
        seed,
    );
    c.wait_for_leader(Duration::from_secs(30)).await;
    let h = c.spawn_client(0, 4000, |zk| async move {
        for i in 0..20 {
            let _ = zk.create(&format!("/n{i}"), b"", CreateMode::Persistent).await;
        }
    });
    madsim::time::sleep(Duration::from_millis(300)).await;
    if let Some(l) = c.leader() {
        let rest: Vec<NodeRef> = c.nodes().into_iter().filter(|n| *n != NodeRef::Server(l)).collect();
        c.partition(&[vec![NodeRef::Server(l)], rest]);
    }
    madsim::time::sleep(Duration::from_secs(3)).await;
    c.heal_all();
    let _ = madsim::time::timeout(Duration::from_secs(20), h).await;
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;
}

fn main() {
    let only = std::env::var("ZKDST_BENCH_ONLY").unwrap_or_default();
    let want = |name: &str| only.is_empty() || only == name;
    if want("write") {
        write_bench();
    }
    if want("idle") {
        idle_bench();
    }
    if want("memory") {
        memory_bench();
    }
}

/// Wall times of `REPEAT` runs (ZKDST_BENCH_REPEAT, default 5), sorted:
/// a shared machine's noise shows as the spread between best and median.
fn timed(mut f: impl FnMut()) -> Vec<f64> {
    let n: usize = std::env::var("ZKDST_BENCH_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let mut walls: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    walls.sort_by(f64::total_cmp);
    walls
}

fn write_bench() {
    let ops = Arc::new(AtomicU64::new(0));
    let walls = timed(|| {
        ops.store(0, Ordering::Relaxed);
        let o = ops.clone();
        run_seed(1, None, move || write_heavy(o)).expect("write-heavy run");
    });
    let n = ops.load(Ordering::Relaxed) as f64;
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    println!(
        "write-heavy: {n} ops in 60 simulated s; {} runs, wall best {best:.2} s, median {median:.2} s -> {:.0} simulated ops per wall second (median; best {:.0})",
        walls.len(),
        n / median,
        n / best
    );
}

fn idle_bench() {
    let walls = timed(|| run_seed(2, None, idle_heavy).expect("idle-heavy run"));
    let (best, median) = (walls[0], walls[walls.len() / 2]);
    println!(
        "idle-heavy: 3600 simulated s, 200 sessions, 5 servers; {} runs, wall best {best:.2} s, median {median:.2} s -> {:.0} simulated s per wall second (median; best {:.0})",
        walls.len(),
        3600.0 / median,
        3600.0 / best
    );
}

fn memory_bench() {
    let seeds: u64 = std::env::var("ZKDST_BENCH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    for seed in 0..20 {
        run_seed(seed, None, move || small_faulty(seed)).expect("warm-up run");
    }
    let before = rss_kb();
    // Sampled along the way too: the allocator returning memory at the end
    // must not hide a peak reached in between.
    let mut peak = before;
    let t = Instant::now();
    for seed in 0..seeds {
        run_seed(seed, None, move || small_faulty(seed)).expect("memory run");
        if seed % 250 == 0 {
            peak = peak.max(rss_kb());
        }
    }
    let after = rss_kb();
    peak = peak.max(after);
    println!(
        "memory: {seeds} seeds of a small faulty scenario in {:.1} s; RSS {} MB -> {} MB (growth {:.1} MB; highest sampled every 250 seeds {} MB, {:+.1} MB)",
        t.elapsed().as_secs_f64(),
        before / 1024,
        after / 1024,
        (after as f64 - before as f64) / 1024.0,
        peak / 1024,
        (peak as f64 - before as f64) / 1024.0
    );
}
