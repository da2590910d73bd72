//! Every shipped recipe scenario through zookeeper-client: with the library
//! installed, a scenario's sessions are zookeeper-client sessions (through
//! zkdst's adapter) speaking jute to the simulated servers, judged by the
//! same checkers, under the same faults, replaying bit for bit.
//!
//! `ZKDST_WIRE_SEEDS=N` sets the seeds per scenario (default 2); the
//! campaign figures come from `zkdst-wire fuzz` (README).

use std::path::{Path, PathBuf};

use zkdst_scenarios::{run, Client, RunVerdict, Scenario};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

fn load(path: &Path) -> Scenario {
    zkdst_wiresim::install();
    Scenario::load(path).unwrap_or_else(|e| panic!("{e}"))
}

fn seeds() -> u64 {
    std::env::var("ZKDST_WIRE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
}

/// The shipped scenario files (the regression list and the manifest aside).
fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| !matches!(p.file_stem().and_then(|s| s.to_str()), Some("Cargo" | "regressions")))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_scenario_passes_through_zookeeper_client() {
    let files = shipped();
    assert!(files.len() >= 15, "found only {} scenarios", files.len());
    for file in files {
        let sc = load(&file);
        assert_eq!(sc.client(), Client::Wire, "{}: not through the wire", file.display());
        for seed in 0..seeds() {
            let o = run(&sc, seed, None);
            assert_eq!(
                o.history.meta.get("client").map(String::as_str),
                Some(zkdst_wiresim::library::NAME),
                "{} seed {seed}: the run did not go through the library",
                file.display()
            );
            assert_eq!(
                o.verdict,
                RunVerdict::Pass,
                "{} seed {seed} through zookeeper-client: {:?} {:?}",
                file.display(),
                o.violation_kinds(),
                o.error
            );
        }
    }
}

#[test]
fn a_seed_through_the_wire_replays_bit_for_bit_and_differs_from_the_typed_client() {
    let sc = load(&scenarios_dir().join("lock.toml"));
    for seed in 0..3 {
        let a = run(&sc, seed, None);
        let b = run(&sc, seed, None);
        assert_eq!(a.fingerprint, b.fingerprint, "seed {seed} did not replay bit for bit");
        let mut typed = sc.clone();
        typed.ensemble.client = Some(Client::Sim);
        let t = run(&typed, seed, None);
        assert_eq!(t.verdict, RunVerdict::Pass);
        assert!(!t.history.meta.contains_key("client"));
        assert_ne!(
            a.fingerprint, t.fingerprint,
            "seed {seed}: the wire run is the typed run"
        );
    }
}

/// The planted lock bugs (recipes with a known defect) are still caught when
/// their scenario runs through zookeeper-client, at the seed `zkdst-wire
/// bench bugs` first found each, and each correct twin passes that seed.
#[test]
fn planted_lock_bugs_are_caught_through_the_wire() {
    use zkdst_scenarios::bench::bugs::detects;
    const KNOWN: [(&str, u64); 7] = [
        ("lock-cancellation-leak.toml", 0),
        ("lock-delete-under-disconnect.toml", 1),
        ("lock-herd.toml", 0),
        ("lock-lost-watch.toml", 0),
        ("lock-stale-session.toml", 0),
        ("lock-unfenced.toml", 0),
        ("lock-unprotected-create.toml", 0),
    ];
    for (file, seed) in KNOWN {
        let sc = load(&scenarios_dir().join("planted").join(file));
        let o = run(&sc, seed, None);
        assert_eq!(
            o.history.meta.get("client").map(String::as_str),
            Some(zkdst_wiresim::library::NAME)
        );
        assert!(
            detects(&sc, &o),
            "{file} seed {seed} escaped through the wire: {:?}",
            o.results
        );
        let twin = sc.correct_twin();
        let c = run(&twin, seed, None);
        assert_eq!(
            c.verdict,
            RunVerdict::Pass,
            "{file}: the correct twin fails seed {seed}"
        );
        assert!(
            !detects(&twin, &c),
            "{file}: the correct twin is flagged at seed {seed}"
        );
    }
}
