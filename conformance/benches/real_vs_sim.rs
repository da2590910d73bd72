//! `cargo bench -p zkdst-conformance --bench real_vs_sim`: the simulator
//! beside a real ZooKeeper 3.8, in one run.
//!
//! The same closed-loop workload ([`zkdst_conformance::throughput`]: 20
//! sessions, create/setData/getData/delete) runs for a fixed number of
//! successful operations on a real 3-server ensemble on 127.0.0.1 (through
//! the real adapter) and on a simulated 3-server ensemble (SimClients,
//! every operation recorded as in a fuzz run). Backends alternate
//! (real, sim, real, sim, ...) and each figure is the median of the
//! repeats, so the ratios come from one sitting on one machine. Each
//! comparison starts with unmeasured warm-up runs (`ZKDST_RVS_WARM`,
//! default 3, on the real ensemble, whose JVM is still compiling; one on
//! the simulator).
//!
//! - steady: no faults → operations per wall second on each, their ratio,
//!   and the simulator's simulated seconds per wall second.
//! - failover: the leader is killed (SIGKILL / `kill_server`) when a
//!   quarter of the operations are done, and restarted once a new leader
//!   is elected → wall time until all operations completed, on each.
//! - steady with `forceSync=no` on the real ensemble: how much of the real
//!   figure is the disk.
//!
//! The simulator's wall time is the whole seed (ensemble start, election,
//! sessions, workload); the real one is the workload only (its ensemble
//! is started once, beforehand), which favours the real ensemble.
//!
//! ZKDST_RVS_OPS (default 40000), ZKDST_RVS_REPEAT (default 3), ZKDST_RVS_WARM,
//! ZKDST_RVS_ONLY=steady|failover|nosync.

use std::sync::Arc;
use std::time::{Duration, Instant};

use zkdst_conformance::server::{RealEnsemble, ServerOptions};
use zkdst_conformance::sim::connect_sim_clients;
use zkdst_conformance::throughput::{closed_loop, create_root, Tally, ROOT};
use zkdst_real::{RealClient, TokioRuntime};
use zkdst_recipes::zk::ZkClient;
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::runtime::SimRuntime;

const CLIENTS: u32 = 20;
const TICK_MS: u32 = 200;
const SESSION_TIMEOUT_MS: i32 = 6000;

/// One run's figures.
#[derive(Debug, Clone, Copy)]
struct Measured {
    done: u64,
    failed: u64,
    wall: Duration,
    /// Simulated time of the workload (the simulator only).
    simulated: Option<Duration>,
    /// From the kill until a new leader was seen (failover runs).
    election: Option<Duration>,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The workload on a real ensemble. With `failover`, this thread kills the
/// leader at a quarter of `target` and restarts it once another leads.
fn real_run(
    ensemble: &mut RealEnsemble,
    rt: &tokio::runtime::Runtime,
    run: u64,
    target: u64,
    failover: bool,
) -> Measured {
    let connect = ensemble.connect_string();
    let clients: Vec<RealClient> = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..CLIENTS {
            v.push(
                RealClient::connect(&connect)
                    .await
                    .expect("connecting to the real ensemble"),
            );
        }
        create_root(&v[0]).await.expect("creating the root");
        v
    });
    let tally = Arc::new(Tally::default());
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, zk) in clients.iter().cloned().enumerate() {
        let tally = tally.clone();
        tasks.push(rt.spawn(async move {
            let parent = format!("{ROOT}/r{run}c{i}");
            closed_loop(&zk, &TokioRuntime::new(), &parent, target, &tally).await;
        }));
    }
    let mut election = None;
    if failover {
        while tally.done() < target / 4 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let old = ensemble.leader().expect("a leader before the kill");
        let killed = Instant::now();
        ensemble.kill(old);
        ensemble.wait_for_leader(Duration::from_secs(60)).expect("a new leader");
        election = Some(killed.elapsed());
        ensemble.restart(old).expect("restarting the old leader");
    }
    rt.block_on(async {
        for t in tasks {
            t.await.expect("a workload task");
        }
    });
    let wall = start.elapsed();
    rt.block_on(async {
        for zk in clients {
            zk.close().await;
        }
    });
    Measured {
        done: tally.done(),
        failed: tally.failed(),
        wall,
        simulated: None,
        election,
    }
}

/// The workload on a fresh simulated ensemble under `seed`.
fn sim_run(seed: u64, target: u64, failover: bool) -> Measured {
    let start = Instant::now();
    let out = run_seed(seed, Some(Duration::from_secs(3600)), move || async move {
        let cfg = EnsembleConfig {
            servers: 3,
            tick_ms: TICK_MS as u64,
            ..EnsembleConfig::default()
        };
        let mut cluster = Cluster::start(cfg, Recorder::new(), seed);
        cluster
            .wait_for_leader(Duration::from_secs(60))
            .await
            .expect("a leader");
        let clients = connect_sim_clients(&mut cluster, CLIENTS as usize, SESSION_TIMEOUT_MS)
            .await
            .expect("connecting the simulated sessions");
        create_root(&clients[0]).await.expect("creating the root");
        let tally = Arc::new(Tally::default());
        let begun = madsim::time::Instant::now();
        let mut tasks = Vec::new();
        for (i, zk) in clients.into_iter().enumerate() {
            let tally = tally.clone();
            tasks.push(cluster.client_node(i as u32).spawn(async move {
                let parent = format!("{ROOT}/r0c{i}");
                closed_loop(&zk, &SimRuntime::new(), &parent, target, &tally).await;
            }));
        }
        let mut election = None;
        if failover {
            while tally.done() < target / 4 {
                madsim::time::sleep(Duration::from_millis(1)).await;
            }
            let old = cluster.leader().expect("a leader before the kill");
            let killed = madsim::time::Instant::now();
            cluster.kill_server(old, false);
            loop {
                match cluster.leader() {
                    Some(l) if l != old => break,
                    _ => madsim::time::sleep(Duration::from_millis(1)).await,
                }
            }
            election = Some(killed.elapsed());
            cluster.restart_server(old);
        }
        for t in tasks {
            t.await.expect("a workload task");
        }
        let simulated = begun.elapsed();
        cluster.shutdown();
        (tally.done(), tally.failed(), simulated, election)
    })
    .expect("the simulated run");
    Measured {
        done: out.0,
        failed: out.1,
        wall: start.elapsed(),
        simulated: Some(out.2),
        election: out.3,
    }
}

fn row(name: &str, m: &Measured) {
    let rate = m.done as f64 / secs(m.wall);
    let sim = match m.simulated {
        Some(s) => format!(
            "  simulated {:.2} s ({:.1} sim-s/wall-s)",
            secs(s),
            secs(s) / secs(m.wall)
        ),
        None => String::new(),
    };
    let election = match m.election {
        Some(e) => format!("  new leader after {:.2} s", secs(e)),
        None => String::new(),
    };
    println!(
        "  {name:<5} {:>7} ok {:>5} failed  wall {:>7.3} s  {:>9.0} ops/wall-s{sim}{election}",
        m.done,
        m.failed,
        secs(m.wall),
        rate
    );
}

/// Alternates real and sim runs and prints each and the medians' ratios.
#[allow(clippy::too_many_arguments)]
fn compare(
    title: &str,
    ensemble: &mut RealEnsemble,
    rt: &tokio::runtime::Runtime,
    target: u64,
    failover: bool,
    repeat: u64,
    warm: u64,
    run0: u64,
) {
    println!("{title}: {CLIENTS} sessions, {target} operations, {repeat} alternated runs each");
    // The JVM compiles its hot paths during the first runs (a cold real
    // run is about twice as slow, and it keeps improving over ~100,000
    // operations): unmeasured runs first, `warm` on the real ensemble and
    // one on the simulator.
    for w in 0..warm {
        row("warm", &real_run(ensemble, rt, run0 + 90 + w, target, failover));
    }
    row("warm", &sim_run(99, target, failover));
    let (mut real, mut sim) = (Vec::new(), Vec::new());
    for r in 0..repeat {
        let m = real_run(ensemble, rt, run0 + r, target, failover);
        row("real", &m);
        real.push(m);
        let m = sim_run(r, target, failover);
        row("sim", &m);
        sim.push(m);
    }
    let real_wall = median(real.iter().map(|m| secs(m.wall)).collect());
    let sim_wall = median(sim.iter().map(|m| secs(m.wall)).collect());
    let real_rate = median(real.iter().map(|m| m.done as f64 / secs(m.wall)).collect());
    let sim_rate = median(sim.iter().map(|m| m.done as f64 / secs(m.wall)).collect());
    let sim_speed = median(
        sim.iter()
            .filter_map(|m| Some(secs(m.simulated?) / secs(m.wall)))
            .collect(),
    );
    let sim_time = median(sim.iter().filter_map(|m| Some(secs(m.simulated?))).collect());
    println!(
        "  median: real {real_rate:.0} ops/wall-s, {real_wall:.2} s; sim {sim_rate:.0} ops/wall-s, {sim_wall:.2} s \
         ({sim_time:.2} simulated s, {sim_speed:.1} sim-s/wall-s)"
    );
    println!(
        "  ratio sim/real: {:.1}x operations per wall second; real wall / sim wall = {:.1}x\n",
        sim_rate / real_rate,
        real_wall / sim_wall
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects nothing here.
    let target = env_u64("ZKDST_RVS_OPS", 40_000);
    let repeat = env_u64("ZKDST_RVS_REPEAT", 3).max(1);
    let warm = env_u64("ZKDST_RVS_WARM", 3);
    let only = std::env::var("ZKDST_RVS_ONLY").unwrap_or_default();
    let wants = |w: &str| only.is_empty() || only == w;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    println!("real ZooKeeper 3.8 (3 servers on 127.0.0.1, tickTime {TICK_MS} ms) vs zkdst's simulator (3 servers)\n");
    if wants("steady") || wants("failover") {
        let mut ensemble = RealEnsemble::start(ServerOptions {
            tick_ms: TICK_MS,
            ..ServerOptions::default()
        })
        .expect("starting the real ensemble");
        if wants("steady") {
            compare("steady", &mut ensemble, &rt, target, false, repeat, warm, 0);
        }
        if wants("failover") {
            compare(
                "failover (leader killed at 1/4, restarted)",
                &mut ensemble,
                &rt,
                target,
                true,
                repeat,
                warm,
                100,
            );
        }
    }
    if wants("nosync") {
        let mut ensemble = RealEnsemble::start(ServerOptions {
            tick_ms: TICK_MS,
            force_sync: false,
            ..ServerOptions::default()
        })
        .expect("starting the real ensemble (forceSync=no)");
        compare(
            "steady, real with forceSync=no",
            &mut ensemble,
            &rt,
            target,
            false,
            repeat,
            warm,
            200,
        );
    }
}
