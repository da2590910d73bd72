use super::*;

const MIN: &str = "name = \"x\"\n[workload]\nrecipe = \"lock\"\n";

#[test]
fn minimal_file_gets_defaults() {
    let s = Scenario::parse(MIN, "x.toml").unwrap();
    assert_eq!(s.ensemble.servers, 3);
    assert_eq!(s.workload.recipe, Recipe::Lock);
    assert_eq!(s.faults.mode, FaultMode::Swarm);
}

#[test]
fn errors_name_file_and_field() {
    let e = Scenario::parse(&format!("{MIN}[ensemble]\nservers = \"three\"\n"), "x.toml").unwrap_err();
    let t = e.to_string();
    assert!(t.starts_with("x.toml: field `ensemble.servers`"), "{t}");
    assert!(t.contains("expected"), "{t}");
    let e = Scenario::parse("name = \"x\"\n[workload]\nrecipe = \"lokc\"\n", "y.toml").unwrap_err();
    let t = e.to_string();
    assert!(t.contains("workload.recipe") && t.contains("lock"), "{t}");
    let e = Scenario::parse(&format!("{MIN}[check]\ncheckers = [\"mutex\", \"mutexx\"]\n"), "z.toml").unwrap_err();
    assert!(e.to_string().contains("check.checkers[1]"), "{e}");
    let e = Scenario::parse(&format!("{MIN}[faults.swarm]\nkill-leader = 2.0\n"), "z.toml").unwrap_err();
    assert!(e.to_string().contains("faults.swarm.kill-leader"), "{e}");
    let e = Scenario::parse(&format!("{MIN}[check.params]\nfifoo = true\n"), "z.toml").unwrap_err();
    assert!(e.to_string().contains("check.params"), "{e}");
}

#[test]
fn a_fault_kind_has_one_name() {
    for k in FaultKind::ALL {
        let toml = format!("{MIN}[faults.swarm]\n{} = 0.25\n", k.name());
        let s = Scenario::parse(&toml, "x.toml").unwrap_or_else(|e| panic!("{}: {e}", k.name()));
        assert_eq!(s.faults.swarm.get(&k), Some(&0.25), "{}", k.name());
    }
    // The name the stats once used for a random kill is not a second name.
    let e = Scenario::parse(&format!("{MIN}[faults.swarm]\nkill-random = 0.25\n"), "x.toml").unwrap_err();
    let t = e.to_string();
    assert!(t.contains("faults.swarm") && t.contains("kill-server"), "{t}");
}

#[test]
fn session_timeout_must_be_one_the_servers_grant() {
    let e = |t: u32| {
        Scenario::parse(
            &format!("{MIN}[ensemble]\ntick_ms = 500\nsession_timeout_ms = {t}\n"),
            "x.toml",
        )
    };
    assert!(e(1000).is_ok() && e(10000).is_ok());
    let low = e(999).unwrap_err().to_string();
    assert!(
        low.contains("ensemble.session_timeout_ms") && low.contains("at least 2 ticks"),
        "{low}"
    );
    let high = e(10001).unwrap_err().to_string();
    assert!(
        high.contains("ensemble.session_timeout_ms") && high.contains("at most 10000 ms"),
        "{high}"
    );
}

#[test]
fn container_parents_are_a_share_of_seeds_and_reaping_needs_an_interval() {
    let s = Scenario::parse(MIN, "x.toml").unwrap();
    assert_eq!(
        (s.workload.container_parents, s.ensemble.container_check_ms),
        (0.0, 60_000)
    );
    let parse = |ensemble: &str, workload: &str| {
        Scenario::parse(
            &format!("name = \"x\"\n[ensemble]\n{ensemble}\n[workload]\nrecipe = \"lock\"\n{workload}\n"),
            "x.toml",
        )
    };
    let s = parse("container_check_ms = 100", "container_parents = 0.5").unwrap();
    assert_eq!(
        (s.workload.container_parents, s.ensemble.container_check_ms),
        (0.5, 100)
    );
    let e = parse("", "container_parents = 1.5").unwrap_err().to_string();
    assert!(e.contains("workload.container_parents") && e.contains("[0, 1]"), "{e}");
    let e = parse("container_check_ms = 0", "").unwrap_err().to_string();
    assert!(
        e.contains("ensemble.container_check_ms") && e.contains("positive"),
        "{e}"
    );
}

#[test]
fn variants_are_checked_against_the_recipe() {
    let s = Scenario::parse(&format!("{MIN}variant = \"LostWatchLock\"\n"), "x.toml").unwrap();
    assert_eq!(s.workload.variant, Some(Variant::LostWatchLock));
    assert_eq!(s.correct_twin().workload.variant, None);
    let e = Scenario::parse(&format!("{MIN}variant = \"LostWatchLok\"\n"), "x.toml").unwrap_err();
    let t = e.to_string();
    assert!(
        t.starts_with("x.toml: field `workload.variant`") && t.contains("LostWatchLock"),
        "{t}"
    );
    let e = Scenario::parse(&format!("{MIN}variant = \"LostItemQueue\"\n"), "x.toml").unwrap_err();
    let t = e.to_string();
    assert!(
        t.contains("workload.variant") && t.contains("expected recipe = \"queue\""),
        "{t}"
    );
    let q = "name = \"x\"\n[workload]\nrecipe = \"queue\"\nvariant = \"LockingQueueRace\"\n";
    let e = Scenario::parse(q, "q.toml").unwrap_err();
    assert!(e.to_string().contains("workload.consumer"), "{e}");
    let e = Scenario::parse(&format!("{MIN}partitions = 2\n"), "x.toml").unwrap_err();
    assert!(e.to_string().contains("workload.partitions"), "{e}");
    let m = format!("{MIN}[measure]\nfigure = \"herd.x\"\nflag_above = 1.0\n");
    let e = Scenario::parse(&m, "x.toml").unwrap_err();
    assert!(e.to_string().contains("measure.figure"), "{e}");
}

#[test]
fn expected_minimums_name_known_counters() {
    let ok = format!("{MIN}[expect.min]\n\"fault.kill-server\" = 2\n\"expiry-while-holding\" = 1\n");
    let s = Scenario::parse(&ok, "x.toml").unwrap();
    assert_eq!(s.expect.min.get(&Exercised::Fault(FaultKind::KillServer)), Some(&2));
    let bad = format!("{MIN}[expect.min]\n\"fault.kill-leeder\" = 1\n");
    let t = Scenario::parse(&bad, "x.toml").unwrap_err().to_string();
    assert!(
        t.starts_with("x.toml: field `expect.min") && t.contains("kill-leeder") && t.contains("kill-leader"),
        "{t}"
    );
}

#[test]
fn a_scenario_without_checkers_is_judged_by_its_recipes_promises() {
    let s = Scenario::parse("name = \"x\"\n[workload]\nrecipe = \"semaphore\"\n", "x.toml").unwrap();
    assert_eq!(
        s.check.checkers,
        [
            "semaphore",
            "liveness",
            "replicas",
            "session-lost",
            "recipe-errors",
            "watches"
        ]
    );
    let s = Scenario::parse(
        "name = \"x\"\n[workload]\nrecipe = \"lock\"\n[check]\nmin_progress = 2\n",
        "x.toml",
    )
    .unwrap();
    assert_eq!(
        s.check.checkers,
        [
            "mutex",
            "fencing",
            "liveness",
            "replicas",
            "session-lost",
            "recipe-errors",
            "watches"
        ]
    );
    let s = Scenario::parse(
        "name = \"x\"\n[workload]\nrecipe = \"lock\"\n[check]\ncheckers = [\"mutex\"]\n",
        "x.toml",
    )
    .unwrap();
    assert_eq!(
        s.check.checkers,
        ["mutex", "replicas", "session-lost", "recipe-errors", "watches"]
    );
}

#[test]
fn the_library_lock_needs_the_wire_build() {
    let lib = "name = \"x\"\n[ensemble]\nclient = \"wire\"\n[workload]\nrecipe = \"library-lock\"\n";
    // This build installs no client library: both the client and the
    // recipe are refused, each naming zkdst-wire.
    let e = Scenario::parse(lib, "x.toml").unwrap_err().to_string();
    assert!(e.contains("zkdst-wire"), "{e}");
    let e = Scenario::parse(&lib.replace("client = \"wire\"\n", ""), "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.recipe") && e.contains("zkdst-wire"), "{e}");
    let e = Scenario::parse(&format!("{MIN}lock_prefix = \"curator\"\n"), "x.toml").unwrap_err();
    assert!(e.to_string().contains("workload.lock_prefix"), "{e}");
    let e = Scenario::parse(&format!("{lib}lock_prefix = \"curatr\"\n"), "x.toml").unwrap_err();
    let t = e.to_string();
    assert!(t.contains("workload.lock_prefix") && t.contains("shared"), "{t}");
}
