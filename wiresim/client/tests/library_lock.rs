//! zookeeper-client's own lock (`Client::lock`) as shipped scenarios
//! (`scenarios/wire/`), judged by the mutex, fencing and liveness checkers
//! under the full swarm: the shared-prefix lock used as the library asks
//! (one contender per session, never cancelled) passes; the Curator-prefix
//! lock used as applications use it (timed acquires) is caught by the
//! liveness checker on a node the library leaks (README, "Findings").

use std::path::{Path, PathBuf};

use zkdst_scenarios::{run, FaultPlan, RunVerdict, Scenario};

fn wire_scenario(name: &str) -> Scenario {
    zkdst_wiresim::install();
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/wire")
        .join(name);
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_shared_prefix_library_lock_passes_its_seeds() {
    let sc = wire_scenario("library-lock-shared.toml");
    let mut accepted = 0.0;
    for seed in sc.seeds.start..sc.seeds.start + sc.seeds.test_count {
        let o = run(&sc, seed, None);
        assert_eq!(
            o.verdict,
            RunVerdict::Pass,
            "seed {seed}: {:?} {:?}",
            o.violation_kinds(),
            o.error
        );
        accepted += o
            .results
            .iter()
            .filter(|r| r.checker == "fencing")
            .filter_map(|r| r.figures.get("fenced_writes_accepted"))
            .sum::<f64>();
    }
    assert!(accepted > 0.0, "no write through the library's lock was accepted");
}

/// Safety holds (no overlap, no stale token accepted), but every contender
/// queues behind a node nobody will delete: the checkers, not this test,
/// say so.
#[test]
fn the_checkers_catch_the_curator_lock_leaking_a_node() {
    let sc = wire_scenario("library-lock.toml");
    let o = run(&sc, 3, None);
    assert_eq!(o.verdict, RunVerdict::Fail);
    let kinds = o.violation_kinds();
    assert!(kinds.contains(&"liveness:stuck".to_string()), "{kinds:?}");
    assert!(
        !kinds
            .iter()
            .any(|k| k.starts_with("mutex:") || k.starts_with("fencing:")),
        "{kinds:?}"
    );
}

/// `zkdst-wire shrink` took seed 3 down to no fault at all (and 32
/// operations per client): timed acquires on a healthy ensemble are enough.
#[test]
fn the_shrunk_curator_lock_finding_needs_no_fault() {
    let sc = wire_scenario("library-lock.toml");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/wire/findings/library-lock-3.plan.json");
    let text = std::fs::read_to_string(&file).expect("the shrunk plan");
    let plan = FaultPlan::from_json(&text, "library-lock-3.plan.json").expect("a plan");
    assert!(plan.faults.is_empty());
    let o = run(&sc, 3, Some(&plan));
    assert!(
        o.violation_kinds().contains(&"liveness:stuck".to_string()),
        "{:?}",
        o.violation_kinds()
    );
}
