//! The conformance suite's operation-level differential through
//! zookeeper-client: each generated sequence (sessions; creates of every
//! mode; reads, watches, multi, sync; disconnects and expiry) runs twice on
//! a fresh simulated ensemble under the same seed — once with zkdst's typed
//! client, once with zookeeper-client speaking jute to the servers' wire
//! port through zkdst's adapter (the one the sim-vs-real differential runs
//! against a real ZooKeeper) — and the two traces must agree after the
//! normalisation that differential applies. The typed simulator is held to
//! a real ZooKeeper 3.8 by that suite (conformance/tests), so this holds
//! the codec, the connection handler and the byte transport to it.
//!
//! `ZKDST_WIRE_DIFF_CASES` sets the number of sequences (default 150);
//! `ZKDST_CONFORMANCE_SEED` replays a run (its seed is printed).

use std::cell::Cell;
use std::time::{Duration, Instant};

use proptest::test_runner::TestCaseError;
use zkdst_conformance::seeded::{env_u64, run_seed, seeded_runner, sim_seed};
use zkdst_conformance::sim::run_sim;
use zkdst_conformance::{compare, sequence, ExecOptions, GenConfig, OpRecord, SimOptions, Step};
use zkdst_sim::client::ClientKind;

#[test]
fn zookeeper_client_through_the_wire_agrees_with_the_typed_client() {
    zkdst_wiresim::install();
    let library = zkdst_sim::client::library::library().expect("installed");
    let cases = env_u64("ZKDST_WIRE_DIFF_CASES").unwrap_or(150) as u32;
    let typed = SimOptions::default();
    let wire = SimOptions {
        client: ClientKind::Library(library),
        ..SimOptions::default()
    };
    let gen = GenConfig::default();
    let exec = ExecOptions {
        step_pause: Duration::from_millis(1),
        settle: Duration::from_millis(100),
        ..ExecOptions::default()
    };
    let seed = run_seed();
    eprintln!("wire differential: ZKDST_CONFORMANCE_SEED={seed} ZKDST_WIRE_DIFF_CASES={cases}");
    let mut runner = seeded_runner(seed, cases, 256);
    let started = Instant::now();
    let (ops, watches, faults) = (Cell::new(0usize), Cell::new(0usize), Cell::new(0usize));
    let root = "/wire-diff";
    let result = runner.run(&sequence(&gen), |steps| {
        let s = sim_seed(&steps);
        let a = run_sim(s, &typed, root, gen.clients, &steps, &exec)
            .map_err(|e| TestCaseError::fail(format!("the typed run failed: {e}")))?;
        let b = run_sim(s, &wire, root, gen.clients, &steps, &exec)
            .map_err(|e| TestCaseError::fail(format!("the wire run failed: {e}")))?;
        ops.set(ops.get() + b.ops.len());
        watches.set(watches.get() + b.watches.iter().filter(|w| w.event.is_some()).count());
        let fault = |o: &&OpRecord| {
            matches!(
                o.step,
                Step::Disconnect { .. } | Step::Reconnect { .. } | Step::Expire { .. }
            )
        };
        faults.set(faults.get() + b.ops.iter().filter(fault).count());
        compare(&a, &b).map_err(|d| {
            let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
            TestCaseError::fail(format!(
                "(left = typed, right = wire) {d}\nsequence:\n  {}",
                steps.join("\n  ")
            ))
        })
    });
    eprintln!(
        "wire differential: {cases} sequences, {} ops, {} watch events, {} fault steps, {:?}",
        ops.get(),
        watches.get(),
        faults.get(),
        started.elapsed()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        ops.get() > 0 && watches.get() > 0 && faults.get() > 0,
        "the sequences exercised nothing"
    );
}
