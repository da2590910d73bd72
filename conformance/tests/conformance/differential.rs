//! The differential driver: the real server against itself, and the
//! simulator against the real server, on generated sequences.

use std::cell::Cell;
use std::time::{Duration, Instant};

use proptest::test_runner::TestCaseError;
use zkdst_conformance::real::{connect_clients, fresh_root, run_real, run_real_reusing_root};
use zkdst_conformance::sim::run_sim;
use zkdst_conformance::{
    compare, run_sequence, sequence, Divergence, ExecOptions, GenConfig, NoFaults, Outcome, ServerOptions, SimOptions,
    Step,
};
use zkdst_recipes::zk::{CreateMode, ZkClient};

use crate::support::{env_u64, outcome_kind, run, run_seed, seeded_runner, serial, sim_seed, standalone};

#[test]
fn differential_self_consistency() {
    let _serial = serial();
    let cases: u32 = std::env::var("ZKDST_CONFORMANCE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    // Reaping must not happen during a run (its timing would differ between
    // runs): containers and TTL nodes are reaped once an hour here.
    let server = standalone(ServerOptions {
        container_check_ms: Some(3_600_000),
        ..ServerOptions::default()
    });
    let connect = server.connect_string();
    // One thread, as in the sim-vs-real test: the real adapter forwards a
    // session's one-shot watches in wake order on one task, but each
    // client's sessions and the executor are tasks too; one thread keeps
    // the run repeatable (see `normalize::event_sequences`).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let gen = GenConfig::default();
    let exec = ExecOptions {
        step_pause: Duration::from_millis(1),
        settle: Duration::from_millis(100),
        ..ExecOptions::default()
    };
    // ZKDST_CONFORMANCE_SEED replays a run (the seed is printed).
    let seed = run_seed();
    eprintln!("differential: ZKDST_CONFORMANCE_SEED={seed} ZKDST_CONFORMANCE_CASES={cases}");
    let mut runner = seeded_runner(seed, cases, 64);
    let started = Instant::now();
    let ops_run = Cell::new(0usize);
    let watches_fired = Cell::new(0usize);
    let tally = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let result = runner.run(&sequence(&gen), |steps| {
        let (a, b) = rt.block_on(async {
            let limit = Duration::from_secs(60);
            // One root name for both runs (cleared in between): a closed
            // session's ephemerals go in an order that depends on their paths.
            let root = format!("/self-{}", std::process::id());
            let a = tokio::time::timeout(
                limit,
                run_real_reusing_root(&connect, &root, gen.clients, &steps, &exec),
            )
            .await;
            let b = tokio::time::timeout(
                limit,
                run_real_reusing_root(&connect, &root, gen.clients, &steps, &exec),
            )
            .await;
            (a, b)
        });
        let a = a
            .map_err(|_| TestCaseError::fail("run A timed out"))?
            .map_err(|e| TestCaseError::fail(format!("run A could not start: {e}")))?;
        let b = b
            .map_err(|_| TestCaseError::fail("run B timed out"))?
            .map_err(|e| TestCaseError::fail(format!("run B could not start: {e}")))?;
        ops_run.set(ops_run.get() + a.ops.len());
        for op in &a.ops {
            let mut kind = outcome_kind(&op.outcome);
            if std::env::var_os("ZKDST_CONFORMANCE_TALLY_STEPS").is_some() {
                let step = op.step.to_string();
                let mut words = step.split_whitespace().skip(1);
                kind = format!(
                    "{kind} <- {} {}",
                    words.next().unwrap_or(""),
                    words.next().unwrap_or("")
                );
            }
            *tally.borrow_mut().entry(kind).or_default() += 1;
        }
        watches_fired.set(watches_fired.get() + a.watches.iter().filter(|w| w.event.is_some()).count());
        compare(&a, &b).map_err(|d| {
            let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
            TestCaseError::fail(format!("{d}\nsequence:\n  {}", steps.join("\n  ")))
        })
    });
    eprintln!(
        "differential: {cases} cases, {} ops, {} watch events, {:?}",
        ops_run.get(),
        watches_fired.get(),
        started.elapsed()
    );
    eprintln!("differential outcomes: {:?}", tally.borrow());
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(ops_run.get() > 0, "no op ran");
}

/// Every generated sequence runs on the real standalone server (fresh root,
/// fresh sessions) and on a fresh simulated 1-server ensemble configured
/// alike (tick 200 ms, extended types, reaping once an hour, children in
/// a fixed order); the normalised traces — results, Stats, multi results,
/// each watch's event and each client's event order — must be identical.
/// `ZKDST_CONFORMANCE_CASES` (default 150), `ZKDST_CONFORMANCE_SEED`.
#[test]
fn differential_sim_vs_real() {
    let _serial = serial();
    let cases = env_u64("ZKDST_CONFORMANCE_CASES").unwrap_or(150) as u32;
    let server_options = ServerOptions {
        container_check_ms: Some(3_600_000),
        ..ServerOptions::default()
    };
    let sim_options = SimOptions {
        tick_ms: server_options.tick_ms as u64,
        extended_types: server_options.extended_types,
        container_check_ms: 3_600_000,
        ..SimOptions::default()
    };
    let server = standalone(server_options);
    let connect = server.connect_string();
    // One thread: the adapter's per-watch forwarding tasks then run in the
    // order the client library woke them, which keeps each session's event
    // order visible to the executor.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let gen = GenConfig::default();
    let exec = ExecOptions {
        step_pause: Duration::from_millis(1),
        settle: Duration::from_millis(100),
        ..ExecOptions::default()
    };
    let seed = run_seed();
    eprintln!("sim-vs-real: ZKDST_CONFORMANCE_SEED={seed} ZKDST_CONFORMANCE_CASES={cases}");
    let mut runner = seeded_runner(seed, cases, 256);
    let started = Instant::now();
    let (runs, ops_run, watches_fired, real_time, sim_time) = (
        Cell::new(0usize),
        Cell::new(0usize),
        Cell::new(0usize),
        Cell::new(Duration::ZERO),
        Cell::new(Duration::ZERO),
    );
    let first_failure = std::cell::RefCell::new(None::<String>);
    let faults_seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let fixed_root = format!("/sim-vs-real-{}", std::process::id());
    let result = runner.run(&sequence(&gen), |steps| {
        runs.set(runs.get() + 1);
        let t = Instant::now();
        // A real run that cannot finish (the shared machine stalled the JVM
        // or the client could not connect) is retried once on a fresh root
        // before it counts as a failure; it is never a divergence.
        // Every run uses the same root (cleared first), and so does the
        // simulated run: paths decide some orders (a closed session's
        // ephemerals go in Java HashSet order), and shrinking needs runs of
        // one sequence to repeat.
        let root = fixed_root.as_str();
        let mut real = None;
        for attempt in 0..2 {
            let r = rt.block_on(async {
                tokio::time::timeout(
                    Duration::from_secs(60),
                    run_real_reusing_root(&connect, root, gen.clients, &steps, &exec),
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
                "sim-vs-real: attempt {attempt}: {:?}",
                real.as_ref().and_then(|r| r.as_ref().err())
            );
        }
        real_time.set(real_time.get() + t.elapsed());
        let real = real.expect("at least one attempt").map_err(TestCaseError::fail)?;
        let t = Instant::now();
        let sim = run_sim(sim_seed(&steps), &sim_options, root, gen.clients, &steps, &exec)
            .map_err(|e| TestCaseError::fail(format!("the simulated run failed: {e}")))?;
        sim_time.set(sim_time.get() + t.elapsed());
        ops_run.set(ops_run.get() + real.ops.len());
        watches_fired.set(watches_fired.get() + real.watches.iter().filter(|w| w.event.is_some()).count());
        for op in &real.ops {
            let fault = matches!(
                op.step,
                Step::Disconnect { .. } | Step::Reconnect { .. } | Step::Expire { .. }
            );
            if fault || matches!(op.outcome, Outcome::NotRun) {
                let step = op.step.to_string();
                let kind = step.split_whitespace().nth(1).unwrap_or("").to_string();
                *faults_seen
                    .borrow_mut()
                    .entry(format!("{kind} -> {}", outcome_kind(&op.outcome)))
                    .or_default() += 1;
            }
        }
        let burst_events: usize = real.bursts.iter().map(|(_, from, to)| to - from).sum();
        *faults_seen
            .borrow_mut()
            .entry("reconnect burst events".to_string())
            .or_default() += burst_events;
        compare(&real, &sim).map_err(|d| {
            let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
            let msg = format!("(left = real, right = sim) {d}\nsequence:\n  {}", steps.join("\n  "));
            first_failure.borrow_mut().get_or_insert_with(|| msg.clone());
            TestCaseError::fail(msg)
        })
    });
    eprintln!(
        "sim-vs-real: {cases} cases ({} runs incl. shrinking), {} ops, {} watch events, {:?} \
         (real {:?}, sim {:?})",
        runs.get(),
        ops_run.get(),
        watches_fired.get(),
        started.elapsed(),
        real_time.get(),
        sim_time.get()
    );
    eprintln!("sim-vs-real fault steps: {:?}", faults_seen.borrow());
    if let Err(e) = result {
        if let Some(first) = first_failure.borrow().as_ref() {
            eprintln!("first divergence before shrinking:\n{first}");
        }
        match e {
            proptest::test_runner::TestError::Fail(reason, _) => panic!("minimal diverging sequence: {reason}"),
            other => panic!("{other}"),
        }
    }
    assert!(ops_run.get() > 0, "no op ran");
}

/// The comparison is not vacuous: the same steps on a root that differs by
/// one node diverge at the first step that can see it.
#[test]
fn differential_detects_a_difference() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(60), async {
        let connect = server.connect_string();
        let steps = vec![
            Step::Create {
                client: 0,
                path: "a".into(),
                data: vec![],
                mode: CreateMode::Persistent,
            },
            Step::GetChildren {
                client: 1,
                path: String::new(),
                watch: false,
            },
        ];
        let exec = ExecOptions::default();
        let a = run_real(&connect, &fresh_root(), 2, &steps, &exec)
            .await
            .expect("run A");
        let b = run_real(&connect, &fresh_root(), 2, &steps, &exec)
            .await
            .expect("run B");
        assert_eq!(compare(&a, &b), Ok(()));
        // Run C: the same, with an extra node under the root.
        let root = fresh_root();
        let admin = connect_clients(&connect, 1, Duration::from_secs(4))
            .await
            .expect("admin");
        admin[0].create(&root, b"", CreateMode::Persistent).await.expect("root");
        admin[0]
            .create(&format!("{root}/extra"), b"", CreateMode::Persistent)
            .await
            .expect("extra");
        let clients = connect_clients(&connect, 2, Duration::from_secs(4))
            .await
            .expect("clients");
        let c = run_sequence(&clients, &root, &steps, tokio::time::sleep, &exec, &mut NoFaults).await;
        let d = compare(&a, &c).expect_err("an extra child must show");
        eprintln!("expected divergence:\n{d}");
        assert!(matches!(d, Divergence::Op { index: 1, .. }), "{d}");
        for client in clients.iter().chain(&admin) {
            client.close().await;
        }
    });
}
