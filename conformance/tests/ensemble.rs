//! The differential test on three servers: generated sequences run on a
//! real 3-server ensemble and on a simulated one, sessions pinned to
//! different members (leader first, then the followers), every read after
//! a `sync` (see `zkdst_conformance::ensemble`). The normalised traces must
//! be identical. `ZKDST_CONFORMANCE_ENSEMBLE_CASES` (default 25),
//! `ZKDST_CONFORMANCE_SEED` replays.
#![cfg(feature = "real")]

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use proptest::test_runner::{TestCaseError, TestError};
use zkdst_conformance::ensemble::{ensemble_gen, members_leader_first, run_real_pinned};
use zkdst_conformance::seeded::{env_u64, run_seed, seeded_runner, sim_seed};
use zkdst_conformance::sim::run_sim;
use zkdst_conformance::{compare, sequence, ExecOptions, RealEnsemble, ServerOptions, SimOptions};

#[test]
fn differential_ensemble_sim_vs_real() {
    let cases = env_u64("ZKDST_CONFORMANCE_ENSEMBLE_CASES").unwrap_or(25) as u32;
    let server_options = ServerOptions {
        container_check_ms: Some(3_600_000),
        ..ServerOptions::default()
    };
    let sim_options = SimOptions {
        servers: 3,
        tick_ms: server_options.tick_ms as u64,
        extended_types: server_options.extended_types,
        container_check_ms: 3_600_000,
        pinned: true,
        ..SimOptions::default()
    };
    let ensemble = RealEnsemble::start(server_options).unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let gen = ensemble_gen();
    let exec = ExecOptions {
        step_pause: Duration::from_millis(1),
        settle: Duration::from_millis(100),
        sync_before_reads: true,
        ..ExecOptions::default()
    };
    let seed = run_seed();
    eprintln!("ensemble: ZKDST_CONFORMANCE_SEED={seed} ZKDST_CONFORMANCE_ENSEMBLE_CASES={cases}");
    let mut runner = seeded_runner(seed, cases, 128);
    let started = Instant::now();
    let (runs, ops_run, watches_fired) = (Cell::new(0usize), Cell::new(0usize), Cell::new(0usize));
    let (real_time, sim_time) = (Cell::new(Duration::ZERO), Cell::new(Duration::ZERO));
    let first_failure = RefCell::new(None::<String>);
    let root = format!("/ensemble-{}", std::process::id());
    let result = runner.run(&sequence(&gen), |steps| {
        runs.set(runs.get() + 1);
        let t = Instant::now();
        let mut real = None;
        for attempt in 0..2 {
            // The leader is looked up per run (an election may have
            // happened); the simulated run pins the same roles.
            let Some(members) = members_leader_first(&ensemble) else {
                real = Some(Err("no leader".to_string()));
                std::thread::sleep(Duration::from_millis(500));
                continue;
            };
            let r = rt.block_on(async {
                tokio::time::timeout(
                    Duration::from_secs(60),
                    run_real_pinned(&members, &root, gen.clients, &steps, &exec),
                )
                .await
            });
            match r {
                Ok(Ok(trace)) => {
                    real = Some(Ok(trace));
                    break;
                }
                Ok(Err(e)) => real = Some(Err(format!("the real run could not start: {e}"))),
                Err(_) => real = Some(Err("the real run timed out (60 s)".to_string())),
            }
            eprintln!(
                "ensemble: attempt {attempt}: {:?}",
                real.as_ref().and_then(|r| r.as_ref().err())
            );
        }
        real_time.set(real_time.get() + t.elapsed());
        let real = real.expect("at least one attempt").map_err(TestCaseError::fail)?;
        let t = Instant::now();
        let sim = run_sim(
            sim_seed(&steps),
            &sim_options,
            "/conformance",
            gen.clients,
            &steps,
            &exec,
        )
        .map_err(|e| TestCaseError::fail(format!("the simulated run failed: {e}")))?;
        sim_time.set(sim_time.get() + t.elapsed());
        ops_run.set(ops_run.get() + real.ops.len());
        watches_fired.set(watches_fired.get() + real.watches.iter().filter(|w| w.event.is_some()).count());
        compare(&real, &sim).map_err(|d| {
            let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
            let msg = format!("(left = real, right = sim) {d}\nsequence:\n  {}", steps.join("\n  "));
            first_failure.borrow_mut().get_or_insert_with(|| msg.clone());
            TestCaseError::fail(msg)
        })
    });
    eprintln!(
        "ensemble: {cases} cases ({} runs incl. shrinking), {} ops, {} watch events, {:?} (real {:?}, sim {:?})",
        runs.get(),
        ops_run.get(),
        watches_fired.get(),
        started.elapsed(),
        real_time.get(),
        sim_time.get()
    );
    if let Err(e) = result {
        if let Some(first) = first_failure.borrow().as_ref() {
            eprintln!("first divergence before shrinking:\n{first}");
        }
        match e {
            TestError::Fail(reason, _) => panic!("minimal diverging sequence: {reason}"),
            other => panic!("{other}"),
        }
    }
    assert!(ops_run.get() > 0, "no op ran");
}
