//! Every shipped scenario over a fixed seed set (`ZKDST_SEEDS` raises the
//! count), each seed run twice with the history fingerprints compared.
//!
//! Scenarios marked `#[ignore]` currently FAIL on real findings that are
//! reported to the lead (see scenarios/README.md, "Known findings"); run
//! them with `cargo test -p zkdst-scenarios --release -- --ignored`.

use std::path::PathBuf;

use proptest::prelude::*;
use zkdst_scenarios::{check, fault_plan_strategy, run, seed_count, RunVerdict, Scenario};

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn shipped(name: &str) {
    let p = path(name);
    let sc = Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
    let n = seed_count(sc.seeds.test_count);
    if let Err(e) = check(&p, sc.seeds.start..sc.seeds.start + n) {
        panic!("{e}");
    }
}

#[test]
fn lock() {
    shipped("lock.toml");
}
#[test]
fn rwlock() {
    shipped("rwlock.toml");
}
#[test]
fn revocable_lock() {
    shipped("revocable-lock.toml");
}
#[test]
fn semaphore() {
    shipped("semaphore.toml");
}
#[test]
fn election() {
    shipped("election.toml");
}
#[test]
fn leader_latch() {
    shipped("leader-latch.toml");
}
#[test]
fn config() {
    shipped("config.toml");
}
#[test]
fn two_phase_commit() {
    shipped("two-phase-commit.toml");
}
#[test]
fn ensemble() {
    shipped("ensemble.toml");
}
#[test]
fn ensemble_5() {
    shipped("ensemble-5.toml");
}
#[test]
fn barrier() {
    shipped("barrier.toml");
}
#[test]
fn double_barrier() {
    shipped("double-barrier.toml");
}
#[test]
fn counter() {
    shipped("counter.toml");
}
#[test]
fn membership() {
    shipped("membership.toml");
}
#[test]
fn queue() {
    shipped("queue.toml");
}
#[test]
fn queue_at_least_once() {
    shipped("queue-at-least-once.toml");
}
#[test]
fn priority_queue() {
    shipped("priority-queue.toml");
}

#[test]
fn lock_without_faults_passes_and_replays() {
    let mut sc = Scenario::load(&path("lock.toml")).unwrap();
    sc.faults.mode = zkdst_scenarios::scenario::FaultMode::None;
    for seed in 0..5 {
        let a = run(&sc, seed, None);
        assert_eq!(a.verdict, RunVerdict::Pass, "seed {seed}: {:?}", a.results);
        assert_eq!(a.fingerprint, run(&sc, seed, None).fingerprint, "seed {seed}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    /// Generated plans (on the ensemble alone) keep ZooKeeper consistent.
    #[test]
    fn generated_plans_keep_the_ensemble_consistent(plan in fault_plan_strategy(3, 4, 20_000, 6)) {
        let mut sc = Scenario::load(&path("ensemble.toml")).unwrap();
        sc.ensemble.clients = 4;
        sc.workload.duration_s = 20;
        let o = run(&sc, 1, Some(&plan));
        prop_assert!(o.verdict != RunVerdict::Fail, "{:?}\n{}", o.failed_checks(), plan);
    }
}
