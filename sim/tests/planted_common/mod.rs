//! Shared harness of the planted-bug tests: start an ensemble, record
//! recipe-level operations, run the faults / heal / liveness phases, and
//! hunt seeds until the checkers report the planted bug — then demand that
//! the correct recipe passes the same seeds with the same faults.
//!
//! Seeds: by default a few (fast subset, stop at the first detection). With
//! `ZKDST_PLANTED_SEEDS=N` (N ≤ 500) every one of N seeds is run for both
//! the planted and the correct recipe, and the detection rate is printed.
//! `ZKDST_PLANTED_FIRST` shifts the seed range.

#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkdst_checker::history::{ClientId, History, Op, OpId, Outcome, Value};
use zkdst_checker::properties::registry;
use zkdst_checker::{CheckResult, Params, Verdict};
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::Ctx;
use zkdst_sim::client::{ClientConfig, SimClient};
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::runtime::SimRuntime;

/// Session timeout every client asks for (ms).
pub const SESSION_MS: i32 = 4000;
/// Liveness bound handed to the checker (ms).
pub const BOUND_MS: u64 = 20_000;

/// Which recipe a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Planted,
    Correct,
}

pub type SimCtx = Ctx<SimClient, SimRuntime>;

pub fn ctx(zk: SimClient) -> SimCtx {
    Ctx::new(zk, SimRuntime::new())
}

/// Starts a 3-server ensemble and waits for a leader.
pub async fn start(seed: u64) -> (Cluster, Recorder) {
    let rec = Recorder::new();
    rec.set_meta("seed", seed.to_string());
    let c = Cluster::start(
        EnsembleConfig {
            tick_ms: 500,
            ..Default::default()
        },
        rec.clone(),
        seed,
    );
    assert!(
        c.wait_for_leader(Duration::from_secs(30)).await.is_some(),
        "seed {seed}: no leader"
    );
    (c, rec)
}

/// A new session handle for client `id` (call on that client's node).
pub fn reconnect(id: ClientId, servers: Vec<u32>, rec: &Recorder) -> SimClient {
    SimClient::connect(
        ClientConfig {
            id,
            servers,
            session_timeout_ms: SESSION_MS,
        },
        rec.clone(),
    )
}

pub fn invoke(zk: &SimClient, op: Op) -> OpId {
    let s = zk.session_id();
    zk.recorder().invoke(zk.id(), (s != 0).then_some(s), op)
}

pub fn ok(zk: &SimClient, id: OpId, value: Value) {
    zk.recorder().complete(id, zk.id(), Outcome::Ok { value }, None);
}

pub fn fail(zk: &SimClient, id: OpId, error: impl std::fmt::Display) {
    zk.recorder().complete(
        id,
        zk.id(),
        Outcome::Fail {
            error: error.to_string(),
        },
        None,
    );
}

pub fn info(zk: &SimClient, id: OpId, error: impl std::fmt::Display) {
    zk.recorder().complete(
        id,
        zk.id(),
        Outcome::Info {
            error: error.to_string(),
        },
        None,
    );
}

pub async fn sleep_ms(ms: u64) {
    madsim::time::sleep(Duration::from_millis(ms)).await;
}

pub fn rand_ms(lo: u64, hi: u64) -> u64 {
    use madsim::rand::Rng;
    madsim::rand::thread_rng().gen_range(lo..hi)
}

/// A stop flag shared by the workers and the orchestrator.
#[derive(Clone, Default)]
pub struct Flag(Arc<AtomicBool>);

impl Flag {
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The workers' current session handles, for the nemesis.
#[derive(Clone, Default)]
pub struct Handles(Arc<Mutex<Vec<Option<SimClient>>>>);

impl Handles {
    pub fn set(&self, i: usize, zk: &SimClient) {
        let mut v = self.0.lock().unwrap();
        if v.len() <= i {
            v.resize(i + 1, None);
        }
        v[i] = Some(zk.clone());
    }
    pub fn get(&self, i: usize) -> Option<SimClient> {
        self.0.lock().unwrap().get(i).cloned().flatten()
    }
    pub fn random(&self, range: std::ops::Range<usize>) -> Option<SimClient> {
        let i = rand_ms(range.start as u64, range.end as u64) as usize;
        self.get(i)
    }
}

/// Who holds the resource now (for nemeses that target the holder).
#[derive(Clone, Default)]
pub struct Holder(Arc<Mutex<Option<ClientId>>>);

impl Holder {
    pub fn set(&self, c: Option<ClientId>) {
        *self.0.lock().unwrap() = c;
    }
    pub fn get(&self) -> Option<ClientId> {
        *self.0.lock().unwrap()
    }
}

/// Heals everything (recorded as the last fault, "heal"), lets the system
/// run `live_ms` with the workers still invoking, stops them, waits out the
/// liveness bound, and shuts down. Returns the history.
pub async fn heal_and_finish(mut c: Cluster, rec: Recorder, stop: &Flag, live_ms: u64) -> History {
    c.heal_all();
    sleep_ms(live_ms).await;
    stop.set();
    sleep_ms(BOUND_MS + 3000).await;
    rec.note(None, "end of run");
    c.shutdown();
    sleep_ms(1).await;
    rec.history()
}

pub fn params() -> Params {
    Params {
        liveness_bound_ms: BOUND_MS,
        ..Params::default()
    }
}

fn seed_range(default: u64) -> (Vec<u64>, bool) {
    let first: u64 = std::env::var("ZKDST_PLANTED_FIRST")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    match std::env::var("ZKDST_PLANTED_SEEDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(n) => ((first..first + n.min(500)).collect(), true),
        None => ((first..first + default).collect(), false),
    }
}

/// Runs one seed of `scenario` on a fresh thread.
pub fn run<F, Fut>(seed: u64, v: Variant, scenario: F) -> History
where
    F: FnOnce(u64, Variant) -> Fut + Send + 'static,
    Fut: Future<Output = History> + 'static,
{
    run_seed(seed, Some(Duration::from_secs(1800)), move || scenario(seed, v)).unwrap_or_else(|e| panic!("{e}"))
}

fn verdicts(h: &History, checkers: &[&str], p: &Params) -> Vec<CheckResult> {
    registry::run_all(checkers, h, p).expect("known checkers")
}

/// What a hunt found.
#[derive(Debug)]
pub struct Found {
    pub seed: u64,
    pub tried: usize,
    pub checker: String,
    pub kinds: Vec<String>,
}

/// Hunts seeds until `checkers` report a violation for the planted recipe;
/// replays the catching seed (same history fingerprint); then runs the
/// correct recipe on every seed tried and requires every checker to pass.
/// Panics (with the seed) on any failure; returns what was found.
pub fn hunt<F, Fut>(bug: &str, class: &str, default_seeds: u64, checkers: &[&str], p: &Params, scenario: F) -> Found
where
    F: Fn(u64, Variant) -> Fut + Send + Copy + 'static,
    Fut: Future<Output = History> + 'static,
{
    let (seeds, exhaustive) = seed_range(default_seeds);
    let mut found: Option<Found> = None;
    let mut caught = 0usize;
    let mut tried = Vec::new();
    for &seed in &seeds {
        tried.push(seed);
        let h = run(seed, Variant::Planted, scenario);
        let rs = verdicts(&h, checkers, p);
        if let Some(r) = rs.iter().find(|r| r.verdict == Verdict::Violation) {
            caught += 1;
            if found.is_none() {
                eprintln!(
                    "PLANTED {bug}: seed {seed} caught by `{}`:\n{}",
                    r.checker,
                    zkdst_checker::report::render_text(&h, std::slice::from_ref(r))
                );
                let again = run(seed, Variant::Planted, scenario);
                assert_eq!(
                    again.fingerprint(),
                    h.fingerprint(),
                    "{bug}: seed {seed} did not replay bit for bit"
                );
                found = Some(Found {
                    seed,
                    tried: tried.len(),
                    checker: r.checker.clone(),
                    kinds: r.kinds().into_iter().map(String::from).collect(),
                });
            }
            if !exhaustive {
                break;
            }
        } else {
            let summary: Vec<String> = rs.iter().map(|r| format!("{}={:?}", r.checker, r.verdict)).collect();
            eprintln!("PLANTED {bug}: seed {seed} not caught ({})", summary.join(", "));
        }
    }
    let Some(f) = found else {
        panic!("{bug} ({class}): not caught by {checkers:?} in {} seeds", tried.len());
    };
    for &seed in &tried {
        let h = run(seed, Variant::Correct, scenario);
        for r in verdicts(&h, checkers, p) {
            assert_eq!(
                r.verdict,
                Verdict::Pass,
                "the CORRECT recipe for {class} fails `{}` on seed {seed} under the same faults:\n{}",
                r.checker,
                zkdst_checker::report::render_text(&h, std::slice::from_ref(&r))
            );
        }
    }
    eprintln!(
        "PLANTED-RESULT bug={bug} class={class:?} caught=yes first_seed={} seeds_tried={} caught_on={caught} checker={} kinds={:?} correct_passed_on={}",
        f.seed,
        if exhaustive { seeds.len() } else { f.tried },
        f.checker,
        f.kinds,
        tried.len()
    );
    f
}
