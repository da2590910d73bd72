//! The planted bugs, each caught by the checkers at a known-failing seed of
//! its scenario (`scenarios/planted/*.toml`), replayed bit for bit, while
//! the correct twin (the same file without `variant`) passes that seed.
//! The seed hunt itself is `zkdst bench bugs`.

use std::path::PathBuf;

use zkdst_scenarios::bench::bugs::detects;
use zkdst_scenarios::{run, shrink, RunVerdict, Scenario, Variant};

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("planted").join(name)
}

/// (file, known-failing seed, the violation kind the checkers must report
/// — or, for a measured scenario, the figure)
const KNOWN: [(&str, u64, &str); 22] = [
    ("lock-unprotected-create.toml", 0, "liveness:stuck"),
    ("lock-stale-session.toml", 0, "mutex:mutex-overlap"),
    ("lock-unfenced.toml", 0, "fencing:stale-token-accepted"),
    ("latch-reset-livelock.toml", 0, "liveness:stuck"),
    ("lock-cancellation-leak.toml", 0, "liveness:stuck"),
    ("lock-delete-under-disconnect.toml", 1, "liveness:stuck"),
    ("lock-lost-watch.toml", 0, "liveness:stuck"),
    ("queue-locking-race.toml", 0, "queue:lost-item"),
    ("queue-claim-name-complete.toml", 0, "queue:never-completed"),
    ("queue-cancelled-take.toml", 0, "queue:lost-item"),
    ("membership-suspended-ignored.toml", 0, "fencing:stale-token-accepted"),
    ("semaphore-leaked-lease.toml", 1, "progress:no-progress"),
    ("queue-duplicate-processing.toml", 0, "queue:duplicate-delivery"),
    ("queue-lost-item.toml", 0, "queue:lost-item"),
    ("queue-duplicate-item.toml", 0, "queue:duplicate-delivery"),
    ("counter-double-increment.toml", 0, "counter:counter-out-of-bounds"),
    ("lock-herd.toml", 0, "mutex.notifications_per_release"),
    ("lock-gone-blocker.toml", 2, "mutex:mutex-overlap"),
    ("election-no-abdication.toml", 0, "election:acted-past-grace"),
    ("election-predecessor-gone.toml", 0, "election:leaders-overlap"),
    ("election-vanished-leader.toml", 0, "election:leader-misreported"),
    ("sim-diff-skips-entry.toml", 0, "replicas:replica-gap"),
];

fn caught(file: &str) -> zkdst_scenarios::RunOutcome {
    let (_, seed, kind) = KNOWN.iter().find(|k| k.0 == file).copied().unwrap();
    let sc = Scenario::load(&path(file)).unwrap_or_else(|e| panic!("{e}"));
    let a = run(&sc, seed, None);
    assert!(detects(&sc, &a), "{file} seed {seed} not caught: {:?}", a.results);
    match &sc.measure {
        // Measured, not judged: the run passes and reports the figure.
        Some(m) => {
            assert_eq!(m.figure, kind);
            assert_eq!(a.verdict, RunVerdict::Pass, "{file}: {:?}", a.failed_checks());
        }
        None => assert!(
            a.violation_kinds().iter().any(|k| k == kind),
            "{file}: {:?}",
            a.violation_kinds()
        ),
    }
    let b = run(&sc, seed, None);
    assert_eq!(
        a.fingerprint, b.fingerprint,
        "{file} seed {seed} did not replay bit for bit"
    );
    assert_eq!(a.violation_kinds(), b.violation_kinds());
    let twin = sc.correct_twin();
    let c = run(&twin, seed, None);
    assert_eq!(
        c.verdict,
        RunVerdict::Pass,
        "the correct twin of {file} fails seed {seed}: {:?}",
        c.violation_kinds()
    );
    assert!(
        !detects(&twin, &c),
        "{file}: the correct twin's figure {:?}",
        twin.measured(&c.results)
    );
    a
}

macro_rules! planted {
    ($($test:ident => $file:literal),* $(,)?) => {
        $(#[test] fn $test() { let _ = caught($file); })*
    };
}

planted! {
    unprotected_create => "lock-unprotected-create.toml",
    stale_session => "lock-stale-session.toml",
    unfenced => "lock-unfenced.toml",
    reset_livelock => "latch-reset-livelock.toml",
    cancellation_leak => "lock-cancellation-leak.toml",
    delete_under_disconnect => "lock-delete-under-disconnect.toml",
    lost_watch => "lock-lost-watch.toml",
    locking_queue_race => "queue-locking-race.toml",
    claim_name_complete => "queue-claim-name-complete.toml",
    cancelled_take => "queue-cancelled-take.toml",
    suspended_ignored => "membership-suspended-ignored.toml",
    leaked_lease => "semaphore-leaked-lease.toml",
    duplicate_processing => "queue-duplicate-processing.toml",
    lost_item => "queue-lost-item.toml",
    duplicate_item => "queue-duplicate-item.toml",
    double_increment => "counter-double-increment.toml",
    herd => "lock-herd.toml",
    gone_blocker => "lock-gone-blocker.toml",
    no_abdication => "election-no-abdication.toml",
    predecessor_gone => "election-predecessor-gone.toml",
    vanished_leader => "election-vanished-leader.toml",
}

/// The simulator bug: a follower skips a DIFF entry. At seed 0 the
/// replicas checker catches it and ZooKeeper's consistency model alone
/// does not (no client read the skipped write from that follower).
#[test]
fn sim_diff_skips_entry() {
    let a = caught("sim-diff-skips-entry.toml");
    let by = |name: &str| a.results.iter().find(|r| r.checker == name).map(|r| r.verdict);
    assert_eq!(by("replicas"), Some(zkdst_checker::Verdict::Violation));
    assert_eq!(by("zk-consistency"), Some(zkdst_checker::Verdict::Pass));
}

#[test]
fn every_planted_type_has_one_scenario() {
    let files = zkdst_scenarios::scenario::planted();
    let mut variants = Vec::new();
    let mut sim_bugs = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(
            KNOWN.iter().any(|k| k.0 == name),
            "{name} has no known-failing seed here"
        );
        let sc = Scenario::load(f).unwrap_or_else(|e| panic!("{e}"));
        match (sc.workload.variant, sc.ensemble.planted) {
            (Some(v), None) => variants.push(v),
            (None, Some(b)) => sim_bugs.push(b),
            _ => panic!("{name}: expected one planted variant or simulator bug"),
        }
    }
    assert_eq!(sim_bugs, zkdst_sim::planted::SimBug::ALL.to_vec());
    variants.sort();
    let mut all = Variant::ALL.to_vec();
    all.sort();
    assert_eq!(variants, all);
}

#[test]
fn shrinking_a_planted_failure_leaves_the_trigger() {
    let sc = Scenario::load(&path("lock-stale-session.toml")).unwrap();
    let s = shrink::shrink(&sc, 0, |_| {}).expect("seed 0 fails");
    assert!(s.original_faults > 3, "{}", s.original_faults);
    assert!((1..=3).contains(&s.plan.faults.len()), "{}", s.plan);
    assert!(s.plan.faults.iter().all(|f| f.fault.kind_name() == "drop-connection"));
    let o = run(&sc, 0, Some(&s.plan));
    assert!(o.violation_kinds().iter().any(|k| k == "mutex:mutex-overlap"));
}
