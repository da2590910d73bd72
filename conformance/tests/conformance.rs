//! Conformance tests against a real ZooKeeper 3.8 on loopback.
//!
//! Each test starts its own server(s) (killed when the test ends, also on
//! panic) and runs alone (a process-wide lock), so timing-sensitive fault
//! tests do not compete with each other for the two cores. ZooKeeper is
//! installed through scripts/zk/install.sh when missing.
//!
//! - `differential_sim_vs_real`: N generated sequences
//!   (`ZKDST_CONFORMANCE_CASES`, default 150; `ZKDST_CONFORMANCE_SEED`
//!   replays) each run on the real standalone server and on a fresh
//!   simulated 1-server ensemble; the normalised traces must be identical.
//!   A divergence shrinks to a minimal sequence, printed.
//! - `differential_known_cases`: hand-written sequences for corners the
//!   generator rarely reaches (ZOOKEEPER-4466, close-session order, fan-out).
//! - `differential_self_consistency`: N sequences (default 50), each run
//!   twice on the real server; the normalised traces must be identical.
//! - `fault_*_real_vs_sim`: a lost reply after apply, a client silenced past
//!   its session timeout, the leader of three killed — each scenario
//!   (`zkdst_conformance::faults`) on both backends, same outcomes.
//! - Fault-proxy tests: ConnectionLoss with the write applied (§1.10),
//!   a silenced session expiring, leader failover keeping sessions.
//! - Point checks of zookeeper-semantics.md against the real server.
//!
//! The generated sequences include session faults: a client's connection
//! cut and restored (its watches re-registered with SetWatches), a session
//! expired mid-sequence; on the real server each client connects through
//! its own fault proxy (`zkdst_conformance::real_cutoff`).
//!
//! Hand-written session-fault cases are in tests/session_faults.rs, the
//! 3-server differential in tests/ensemble.rs, the recipes on the real
//! server in tests/recipes_real.rs.

use std::cell::Cell;
use std::future::Future;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use zkdst_conformance::faults::{self, Nemesis};
use zkdst_conformance::real::{connect_clients, fresh_root, run_real, run_real_reusing_root};
use zkdst_conformance::sim::{connect_sim_client, run_sim};
use zkdst_conformance::{
    compare, run_sequence, sequence, Divergence, ExecOptions, FaultMode, FaultProxy, GenConfig, NoFaults, Outcome,
    RealEnsemble, RealServer, ServerOptions, SimOptions, Step,
};
use zkdst_recipes::real::{RealClient, RealOptions};
use zkdst_recipes::zk::{
    AddWatchMode, CreateMode, EventType, Op, OpResult, SessionState, StateWatch, ZkClient, ZkError, ANY_VERSION,
};
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::{Cluster, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on a fresh 2-worker tokio runtime, bounded by `limit`.
fn run<F: Future<Output = ()>>(limit: Duration, f: F) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        tokio::time::timeout(limit, f)
            .await
            .expect("test exceeded its time limit");
    });
}

fn standalone(options: ServerOptions) -> RealServer {
    RealServer::start(options).unwrap_or_else(|e| panic!("starting ZooKeeper: {e}"))
}

async fn connect(connect: &str, session_timeout_ms: u64) -> RealClient {
    RealClient::connect_with(
        connect,
        RealOptions {
            session_timeout: Duration::from_millis(session_timeout_ms),
            ..RealOptions::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("connecting to {connect}: {e}"))
}

/// Waits (bounded) for the next transition to `want` (the watch's current
/// state does not count); the states seen, starting with the current one.
async fn wait_state(w: &mut StateWatch, want: SessionState, limit: Duration) -> Vec<SessionState> {
    let mut seen = vec![w.state()];
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, w.changed()).await {
            Ok(s) => {
                seen.push(s);
                if s == want || s.is_terminal() {
                    return seen;
                }
            }
            Err(_) => return seen,
        }
    }
}

/// Waits (bounded) until a read succeeds: the client is connected again.
async fn wait_usable(zk: &RealClient, limit: Duration) -> Result<(), ZkError> {
    let deadline = Instant::now() + limit;
    loop {
        match zk.exists("/").await {
            Ok(_) => return Ok(()),
            Err(ZkError::ConnectionLoss) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

// ---------------------------------------------------------------------------
// The differential driver, real server against itself.

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
    // One thread, as in the sim-vs-real test: the real adapter forwards each
    // one-shot watch through its own task, and only a current-thread runtime
    // runs those tasks in the order the client library woke them (see
    // `normalize::event_sequences`). On two workers, one delete's
    // NodeDeleted and its parent's NodeChildrenChanged could swap.
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
    let seed: u64 = std::env::var("ZKDST_CONFORMANCE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0)
        });
    eprintln!("differential: ZKDST_CONFORMANCE_SEED={seed} ZKDST_CONFORMANCE_CASES={cases}");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            max_shrink_iters: 64,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
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

// ---------------------------------------------------------------------------
// The differential test: the simulator against the real server.

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// A deterministic madsim seed for a sequence (the same steps, the same
/// simulated run — also while shrinking).
fn sim_seed(steps: &[Step]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{steps:?}").hash(&mut h);
    h.finish()
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
    let seed = env_u64("ZKDST_CONFORMANCE_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    eprintln!("sim-vs-real: ZKDST_CONFORMANCE_SEED={seed} ZKDST_CONFORMANCE_CASES={cases}");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            max_shrink_iters: 256,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
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

/// Hand-written sequences for the corners the generator reaches rarely:
/// watches of several kinds by one session on one path (ZOOKEEPER-4466),
/// one notification fanned out to several watches, the order of the events
/// of one delete, multi triggers. Each runs on both backends.
#[test]
fn differential_known_cases() {
    let _serial = serial();
    let server = standalone(ServerOptions {
        container_check_ms: Some(3_600_000),
        ..ServerOptions::default()
    });
    let connect = server.connect_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let exec = ExecOptions::default();
    let create = |client, path: &str| Step::Create {
        client,
        path: path.into(),
        data: vec![],
        mode: CreateMode::Persistent,
    };
    let children = |client, path: &str| Step::GetChildren {
        client,
        path: path.into(),
        watch: true,
    };
    let data = |client, path: &str| Step::GetData {
        client,
        path: path.into(),
        watch: true,
    };
    let exists = |client, path: &str| Step::Exists {
        client,
        path: path.into(),
        watch: true,
    };
    let add = |client, path: &str, recursive| Step::AddWatch {
        client,
        path: path.into(),
        recursive,
    };
    let delete = |client, path: &str| Step::Delete {
        client,
        path: path.into(),
        version: zkdst_conformance::Version::Any,
    };
    let set = |client, path: &str| Step::SetData {
        client,
        path: path.into(),
        data: b"x".to_vec(),
        version: zkdst_conformance::Version::Any,
    };
    let cases: Vec<(&str, Vec<Step>)> = vec![
        (
            "child watch, then recursive on the same path (ZOOKEEPER-4466)",
            vec![
                create(0, "a"),
                children(1, "a"),
                add(1, "a", true),
                create(0, "a/b"),
                set(0, "a"),
            ],
        ),
        (
            "recursive, then child watch on the same path",
            vec![
                create(0, "a"),
                add(1, "a", true),
                children(1, "a"),
                create(0, "a/b"),
                delete(0, "a/b"),
            ],
        ),
        (
            "persistent, then a one-shot data watch on the same path",
            vec![
                create(0, "a"),
                add(1, "a", false),
                data(1, "a"),
                set(0, "a"),
                set(0, "a"),
                create(0, "a/b"),
            ],
        ),
        (
            "one-shot data watch, then persistent on the same path",
            vec![
                create(0, "a"),
                data(1, "a"),
                add(1, "a", false),
                set(0, "a"),
                set(0, "a"),
                create(0, "a/b"),
            ],
        ),
        (
            "persistent then recursive on the same path",
            vec![
                create(0, "a"),
                add(1, "a", false),
                add(1, "a", true),
                create(0, "a/b"),
                set(0, "a/b"),
                set(0, "a"),
            ],
        ),
        (
            "recursive on the parent, child watch on a child",
            vec![
                create(0, "a"),
                create(0, "a/b"),
                add(1, "a", true),
                children(1, "a/b"),
                create(0, "a/b/c"),
                delete(0, "a/b/c"),
            ],
        ),
        (
            "exists, data and child watches on one node, then delete",
            vec![
                create(0, "a"),
                create(0, "a/b"),
                exists(1, "a/b"),
                data(1, "a/b"),
                children(1, "a/b"),
                children(1, "a"),
                delete(0, "a/b"),
            ],
        ),
        (
            "a delete fires the node's watch before the parent's",
            vec![
                create(0, "a"),
                create(0, "a/b"),
                children(1, "a"),
                data(1, "a/b"),
                exists(2, "a/b"),
                children(2, "a"),
                delete(0, "a/b"),
            ],
        ),
        (
            "a multi's events in op order",
            vec![
                create(0, "a"),
                create(0, "b"),
                children(1, "a"),
                children(1, "b"),
                exists(1, "a/x"),
                data(1, "b"),
                Step::Multi {
                    client: 0,
                    ops: vec![
                        zkdst_conformance::MultiStep::SetData {
                            path: "b".into(),
                            data: vec![],
                            version: zkdst_conformance::Version::Any,
                        },
                        zkdst_conformance::MultiStep::Create {
                            path: "b/y".into(),
                            data: vec![],
                            mode: CreateMode::Persistent,
                        },
                        zkdst_conformance::MultiStep::Create {
                            path: "a/x".into(),
                            data: vec![],
                            mode: CreateMode::Persistent,
                        },
                    ],
                },
            ],
        ),
        (
            "watches of a closed session",
            vec![
                create(0, "a"),
                data(1, "a"),
                children(1, "a"),
                add(1, "a", true),
                Step::Close { client: 1 },
                set(0, "a"),
            ],
        ),
        (
            "ephemerals of a closed session fire other sessions' watches",
            vec![
                create(0, "a"),
                Step::Create {
                    client: 1,
                    path: "a/e".into(),
                    data: vec![],
                    mode: CreateMode::Ephemeral,
                },
                Step::Create {
                    client: 1,
                    path: "a/s-".into(),
                    data: vec![],
                    mode: CreateMode::EphemeralSequential,
                },
                Step::Create {
                    client: 1,
                    path: "b".into(),
                    data: vec![],
                    mode: CreateMode::Ephemeral,
                },
                Step::Create {
                    client: 1,
                    path: "a/s-".into(),
                    data: vec![],
                    mode: CreateMode::EphemeralSequential,
                },
                Step::Create {
                    client: 1,
                    path: "a/b".into(),
                    data: vec![],
                    mode: CreateMode::Ephemeral,
                },
                Step::Create {
                    client: 1,
                    path: "s-".into(),
                    data: vec![],
                    mode: CreateMode::EphemeralSequential,
                },
                Step::Create {
                    client: 1,
                    path: "a/c".into(),
                    data: vec![],
                    mode: CreateMode::Ephemeral,
                },
                children(0, "a"),
                exists(2, "a/e"),
                add(2, "", true),
                Step::Close { client: 1 },
            ],
        ),
    ];
    // A closed session's ephemerals go in the order of ZooKeeper's
    // CloseSessionTxn (a HashSet clone's): several set sizes, seen through
    // a recursive watch.
    let mut cases = cases;
    let names: Vec<String> = [2usize, 3, 5, 7, 13]
        .iter()
        .map(|n| format!("a closed session's {n} ephemerals go in CloseSessionTxn order"))
        .collect();
    for (k, n) in [2usize, 3, 5, 7, 13].into_iter().enumerate() {
        let mut steps = vec![create(0, "a"), add(2, "", true)];
        for i in 0..n {
            let (path, mode) = match i % 3 {
                0 => (format!("e{i}"), CreateMode::Ephemeral),
                1 => ("a/s-".to_string(), CreateMode::EphemeralSequential),
                _ => (format!("a/x{i}"), CreateMode::Ephemeral),
            };
            steps.push(Step::Create {
                client: 1,
                path,
                data: vec![],
                mode,
            });
        }
        steps.push(Step::Close { client: 1 });
        cases.push((names[k].as_str(), steps));
    }
    let mut failures = Vec::new();
    for (name, steps) in &cases {
        let root = fresh_root();
        let real = rt
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(60), run_real(&connect, &root, 3, steps, &exec)).await
            })
            .expect("real run timed out")
            .expect("real run");
        let sim = run_sim(sim_seed(steps), &SimOptions::default(), &root, 3, steps, &exec).expect("sim run");
        match compare(&real, &sim) {
            Ok(()) => eprintln!("known case ok: {name}"),
            Err(d) => {
                eprintln!("known case DIVERGES: {name}\n(left = real, right = sim) {d}");
                failures.push(name.to_string());
            }
        }
        let n = zkdst_conformance::normalize(&real, &Default::default());
        for (c, events) in zkdst_conformance::normalize::event_sequences(&n) {
            let shown: Vec<String> = events
                .iter()
                .map(|e| format!("{:?} {}", e.event_type, e.path.as_deref().unwrap_or("-")))
                .collect();
            eprintln!("  real: client {c}: {}", shown.join(", "));
        }
    }
    assert!(failures.is_empty(), "diverging known cases: {failures:?}");
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

fn outcome_kind(o: &Outcome) -> String {
    match o {
        Outcome::Error(e) | Outcome::MultiFailed { error: e, .. } => {
            let multi = if matches!(o, Outcome::MultiFailed { .. }) {
                "multi "
            } else {
                ""
            };
            format!("{multi}{}", e.name())
        }
        Outcome::Created { .. } => "Created".into(),
        Outcome::Deleted => "Deleted".into(),
        Outcome::Exists(s) => if s.is_some() { "Exists" } else { "ExistsNone" }.into(),
        Outcome::Data { .. } => "Data".into(),
        Outcome::Children { .. } => "Children".into(),
        Outcome::SetData(_) => "SetData".into(),
        Outcome::Multi(_) => "Multi".into(),
        Outcome::Reads(_) => "Reads".into(),
        Outcome::Synced => "Synced".into(),
        Outcome::WatchAdded => "WatchAdded".into(),
        Outcome::Closed => "Closed".into(),
        Outcome::Fault { state, .. } => format!("Fault {state:?}"),
        Outcome::NotRun => "NotRun".into(),
    }
}

// ---------------------------------------------------------------------------
// Fault proxy.

/// (a) + zookeeper-semantics.md §1.10: responses lost after the request was
/// applied. Every write reports ConnectionLoss, every write was applied, and
/// the naive retry sees the consequence.
#[test]
fn connection_loss_after_apply() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(90), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let direct = connect(&server.connect_string(), 2000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let session = zk.session_id();
        let root = fresh_root();
        direct.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let p = |rel: &str| format!("{root}/{rel}");
        direct
            .create(&p("victim"), b"", CreateMode::Persistent)
            .await
            .expect("victim");
        direct
            .create(&p("counter"), b"0", CreateMode::Persistent)
            .await
            .expect("counter");
        direct.create(&p("q"), b"", CreateMode::Persistent).await.expect("q");
        let mut states = zk.state_watch();

        // Lose the responses of one write of each kind; heal after each.
        let mut lost = Vec::new();
        for write in 0..4 {
            proxy.set_mode(FaultMode::DropServerToClient);
            let dropped_before = proxy.stats().dropped_to_client;
            let accepted_before = proxy.stats().accepted;
            let started = Instant::now();
            let result = match write {
                0 => zk.create(&p("ambig"), b"", CreateMode::Persistent).await.map(|_| ()),
                1 => zk
                    .create(&p("q/item-"), b"", CreateMode::PersistentSequential)
                    .await
                    .map(|_| ()),
                2 => zk.delete(&p("victim"), ANY_VERSION).await,
                _ => zk.set_data(&p("counter"), b"1", 0).await.map(|_| ()),
            };
            lost.push(started.elapsed());
            assert_eq!(result, Err(ZkError::ConnectionLoss), "write {write}");
            assert!(
                proxy.stats().dropped_to_client > dropped_before,
                "no response was dropped"
            );
            proxy.set_mode(FaultMode::Pass);
            // The state watcher keeps only the latest state, so a quick
            // Disconnected → SyncConnected may show as SyncConnected alone;
            // the proxy's accepted count shows the reconnect itself.
            let seen = wait_state(&mut states, SessionState::SyncConnected, Duration::from_secs(10)).await;
            assert_eq!(
                seen.last(),
                Some(&SessionState::SyncConnected),
                "write {write}: {seen:?}"
            );
            wait_usable(&zk, Duration::from_secs(10))
                .await
                .expect("usable after the heal");
            assert!(
                proxy.stats().accepted > accepted_before,
                "write {write}: the client did not reconnect after losing the reply"
            );
        }
        eprintln!(
            "ConnectionLoss after {lost:?} (session timeout {:?})",
            zk.session_timeout()
        );
        assert_eq!(zk.session_id(), session, "reconnected with the same session");

        // All four were applied.
        assert!(direct.exists(&p("ambig")).await.expect("exists").is_some());
        let (items, _) = direct.get_children(&p("q")).await.expect("children");
        assert_eq!(items, vec!["item-0000000000".to_string()]);
        assert_eq!(direct.exists(&p("victim")).await.expect("exists"), None);
        let (data, stat) = direct.get_data(&p("counter")).await.expect("counter");
        assert_eq!((data.as_slice(), stat.version), (&b"1"[..], 1));

        // The naive retries.
        assert_eq!(
            zk.create(&p("ambig"), b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NodeExists)
        );
        let (dup, _) = zk
            .create(&p("q/item-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("retried sequential create");
        assert_eq!(dup, p("q/item-0000000001"), "a duplicate item");
        assert_eq!(zk.delete(&p("victim"), ANY_VERSION).await, Err(ZkError::NoNode));
        assert_eq!(zk.set_data(&p("counter"), b"1", 0).await, Err(ZkError::BadVersion));
        zk.close().await;
        direct.close().await;
    });
}

/// (b) A client silenced (both directions) past its session timeout: the
/// server expires the session and deletes its ephemeral; after the heal the
/// client is Expired and every call fails with SessionExpired.
#[test]
fn silenced_client_expires() {
    let _serial = serial();
    let server = standalone(ServerOptions::default()); // tick 200 ms
    run(Duration::from_secs(90), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let observer = connect(&server.connect_string(), 4000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let t = zk.session_timeout();
        assert_eq!(t, Duration::from_millis(2000), "negotiated within [2, 20] ticks");
        let root = fresh_root();
        observer.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let eph = format!("{root}/eph");
        let (_, stat) = zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("ephemeral");
        assert_eq!(stat.ephemeral_owner, zk.session_id());
        let (_, gone) = observer.exists_watch(&eph).await.expect("watch");
        let (_, _, own_watch) = zk.get_data_watch(&eph).await.expect("own watch");
        let mut states = zk.state_watch();

        let silenced = Instant::now();
        proxy.set_mode(FaultMode::DropAll);
        let event = tokio::time::timeout(Duration::from_secs(15), gone.changed())
            .await
            .expect("the server expires the session");
        let server_expiry = silenced.elapsed();
        assert_eq!(event.event_type, EventType::NodeDeleted);
        // The server counts from the last packet it heard (a ping up to
        // ~T/5 before the silence began), rounded up to a tick.
        assert!(
            server_expiry >= t - Duration::from_millis(500),
            "expired after {server_expiry:?}, well before the timeout {t:?}"
        );
        let seen = wait_state(&mut states, SessionState::Expired, Duration::from_secs(1)).await;
        let before_heal = silenced.elapsed();
        proxy.set_mode(FaultMode::Pass);
        let seen_after = wait_state(&mut states, SessionState::Expired, Duration::from_secs(15)).await;
        let client_expiry = silenced.elapsed();
        eprintln!(
            "silenced: server expired the session after {server_expiry:?}; client states by \
             {before_heal:?} (before heal): {seen:?}; after heal: {seen_after:?} at {client_expiry:?}"
        );
        assert_eq!(zk.state(), SessionState::Expired);
        assert_eq!(zk.get_data(&eph).await, Err(ZkError::SessionExpired));
        assert_eq!(observer.exists(&eph).await.expect("exists"), None);
        let own = tokio::time::timeout(Duration::from_secs(5), own_watch.changed())
            .await
            .expect("the one-shot watch hears of the expiry");
        assert_eq!(own.event_type, EventType::None);
        assert_eq!(own.state, SessionState::Expired);
        assert!(proxy.stats().dropped_to_server > 0, "the proxy dropped the pings");
        observer.close().await;
    });
}

/// `close_all`: every connection closed at once; the client reconnects with
/// the same session and in-flight-free state is intact.
#[test]
fn proxy_close_all_reconnects_same_session() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(60), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let zk = connect(&proxy.connect_string(), 2000).await;
        let root = fresh_root();
        zk.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let eph = format!("{root}/e");
        zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("eph");
        let session = zk.session_id();
        let mut states = zk.state_watch();
        let accepted = proxy.stats().accepted;
        proxy.close_all();
        wait_usable(&zk, Duration::from_secs(10)).await.expect("usable again");
        // Disconnected then SyncConnected, unless the two coalesced.
        let mut seen = vec![states.state()];
        while let Ok(s) = tokio::time::timeout(Duration::from_millis(50), states.changed()).await {
            seen.push(s);
        }
        eprintln!("close_all: states {seen:?}");
        assert_eq!(seen.last(), Some(&SessionState::SyncConnected), "{seen:?}");
        assert!(proxy.stats().accepted > accepted, "reconnected through the proxy");
        assert_eq!(zk.session_id(), session);
        assert!(zk.exists(&eph).await.expect("exists").is_some());
        zk.close().await;
    });
}

/// (c) Killing the leader of a 3-server ensemble: clients reconnect with the
/// same session ids, their ephemerals survive, writes work again.
#[test]
fn leader_failover_keeps_sessions() {
    let _serial = serial();
    let mut ensemble = RealEnsemble::start(ServerOptions {
        tick_ms: 500,
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let leader = ensemble.leader().expect("a leader");
    let connect_string = ensemble.connect_string();
    // One member per client as its first choice, so clients sit on
    // followers as well as on the leader.
    let clients: Vec<String> = (0..3).map(|i| ensemble.addr(i).to_string()).collect();
    let mut rt_clients = Vec::new();
    run(Duration::from_secs(120), async {
        let root = fresh_root();
        let admin = connect(&connect_string, 8000).await;
        admin.create(&root, b"", CreateMode::Persistent).await.expect("root");
        for (i, member) in clients.iter().enumerate() {
            // Each client starts on its own member, and may fail over to any.
            let list = format!("{member},{connect_string}");
            let zk = connect(&list, 8000).await;
            let eph = format!("{root}/eph-{i}");
            zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("ephemeral");
            let states = zk.state_watch();
            rt_clients.push((zk, eph, states));
        }
        let sessions: Vec<i64> = rt_clients.iter().map(|(zk, _, _)| zk.session_id()).collect();

        let killed = Instant::now();
        ensemble.kill(leader);
        let new_leader =
            tokio::task::block_in_place(|| ensemble.wait_for_leader(Duration::from_secs(30))).expect("a new leader");
        let elected = killed.elapsed();
        assert_ne!(new_leader, leader);

        for (i, (zk, eph, states)) in rt_clients.iter_mut().enumerate() {
            // A write works again (bounded retries while reconnecting).
            let deadline = Instant::now() + Duration::from_secs(30);
            let path = format!("{root}/after-{i}");
            loop {
                match zk.create(&path, b"", CreateMode::Persistent).await {
                    Ok(_) | Err(ZkError::NodeExists) => break,
                    Err(ZkError::ConnectionLoss) if Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => panic!("client {i}: write after failover failed: {e}"),
                }
            }
            let mut seen = vec![states.state()];
            while let Ok(s) = tokio::time::timeout(Duration::from_millis(10), states.changed()).await {
                seen.push(s);
            }
            eprintln!(
                "failover: client {i} states {seen:?}, writable {:?} after the kill",
                killed.elapsed()
            );
            assert_eq!(zk.session_id(), sessions[i], "client {i} kept its session");
            assert!(zk.state().is_connected(), "client {i}: {:?}", zk.state());
            let stat = zk.exists(eph).await.expect("exists").expect("ephemeral survived");
            assert_eq!(stat.ephemeral_owner, sessions[i]);
        }
        eprintln!("failover: leader {leader} killed, member {new_leader} elected after {elected:?}");
        for (zk, _, _) in &rt_clients {
            zk.close().await;
        }
        admin.close().await;
    });
}

// ---------------------------------------------------------------------------
// Point checks of zookeeper-semantics.md.

#[test]
fn semantics_point_checks() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(60), async {
        let zk = connect(&server.connect_string(), 4000).await;
        let other = connect(&server.connect_string(), 4000).await;

        // §1.1: on a fresh server `/` reports cversion -1 and `/zookeeper` -2.
        let root_stat = zk.exists("/").await.expect("/").expect("/ exists");
        let zk_stat = zk.exists("/zookeeper").await.expect("/zookeeper").expect("exists");
        eprintln!("fresh server: / {root_stat:?}\n/zookeeper {zk_stat:?}");
        assert_eq!(root_stat.cversion, -1);
        assert_eq!(zk_stat.cversion, -2);
        let (mut children, _) = zk.get_children("/zookeeper").await.expect("children");
        children.sort();
        assert_eq!(children, vec!["config".to_string(), "quota".to_string()]);
        assert_eq!(
            zk.create("/zookeeper", b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NodeExists)
        );
        assert_eq!(zk.delete("/zookeeper", ANY_VERSION).await, Err(ZkError::BadArguments));

        let root = fresh_root();
        zk.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let p = |rel: &str| format!("{root}/{rel}");

        // §1.1 paths: validated before sending, by the same rules.
        for bad in ["/a/./b", "/a/..", "/a/.", "//", "/a/"] {
            assert!(
                matches!(zk.delete(bad, ANY_VERSION).await, Err(ZkError::InvalidPath(_))),
                "{bad}"
            );
        }
        // A malformed path under a parent that does not exist: the client's
        // check comes first, so InvalidPath — neither NoNode nor BadArguments.
        assert!(matches!(
            zk.delete("/no-such-parent/./x", ANY_VERSION).await,
            Err(ZkError::InvalidPath(_))
        ));
        // Deleting `/`: zookeeper-client refuses before sending.
        let root_delete = zk.delete("/", ANY_VERSION).await;
        eprintln!("delete / -> {root_delete:?}");
        assert!(matches!(root_delete, Err(ZkError::InvalidArgument(_))));
        // `/p/` is a legal sequential prefix.
        zk.create(&p("p"), b"", CreateMode::Persistent).await.expect("p");
        let (name, _) = zk
            .create(&p("p/"), b"", CreateMode::PersistentSequential)
            .await
            .expect("p/ sequential");
        assert_eq!(name, p("p/0000000000"));

        // §1 item 1 / §1.3: the sequence counter counts creates, cversion is
        // creates + deletes.
        zk.create(&p("s"), b"", CreateMode::Persistent).await.expect("s");
        let s0 = zk
            .create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s0")
            .0;
        zk.create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s1");
        zk.delete(&s0, ANY_VERSION).await.expect("delete s0");
        let parent = zk.exists(&p("s")).await.expect("s").expect("exists");
        assert_eq!((parent.cversion, parent.num_children), (3, 1));
        let (s2, _) = zk
            .create(&p("s/s-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("s2");
        assert_eq!(s2, p("s/s-0000000002"));
        zk.create(&p("s/plain"), b"", CreateMode::Persistent)
            .await
            .expect("plain");
        let (other_prefix, _) = zk
            .create(&p("s/other-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("other");
        assert_eq!(other_prefix, p("s/other-0000000004"), "the counter is per parent");

        // §1.5: -2 is no wildcard; a wrong version on a non-empty node is
        // BadVersion (checked before NotEmpty).
        assert_eq!(zk.set_data(&p("s"), b"", -2).await, Err(ZkError::BadVersion));
        assert_eq!(zk.delete(&p("s"), 5).await, Err(ZkError::BadVersion));
        assert_eq!(zk.delete(&p("s"), ANY_VERSION).await, Err(ZkError::NotEmpty));

        // §1.2: ephemerals cannot have children (sequential ones neither).
        zk.create(&p("e"), b"", CreateMode::Ephemeral).await.expect("e");
        assert_eq!(
            zk.create(&p("e/x"), b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NoChildrenForEphemerals)
        );
        assert_eq!(
            zk.create(&p("e/x-"), b"", CreateMode::PersistentSequential)
                .await
                .map(|_| ()),
            Err(ZkError::NoChildrenForEphemerals)
        );
        // Container and TTL nodes show ephemeralOwner 0.
        let (_, c) = zk.create(&p("c"), b"", CreateMode::Container).await.expect("container");
        assert_eq!(c.ephemeral_owner, 0);
        let (_, t) = zk
            .create(&p("t"), b"", CreateMode::PersistentWithTtl { ttl_ms: 60_000 })
            .await
            .expect("ttl (server runs with extended types)");
        assert_eq!(t.ephemeral_owner, 0);
        assert!(matches!(
            zk.create(&p("t0"), b"", CreateMode::PersistentWithTtl { ttl_ms: 0 })
                .await,
            Err(ZkError::InvalidArgument(_))
        ));

        // §1.7: a failed multi applies nothing and reports [0, err, -2 ...];
        // a successful one shares one zxid.
        let failed = zk
            .multi(vec![
                Op::Create {
                    path: p("m1"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m1"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::SetData {
                    path: p("s"),
                    data: vec![],
                    version: ANY_VERSION,
                },
            ])
            .await
            .expect_err("NodeExists in the middle");
        assert_eq!((failed.error.clone(), failed.index), (ZkError::NodeExists, 1));
        assert_eq!(
            failed.results,
            vec![
                OpResult::Error(None),
                OpResult::Error(Some(ZkError::NodeExists)),
                OpResult::Error(Some(ZkError::RuntimeInconsistency)),
            ]
        );
        assert_eq!(zk.exists(&p("m1")).await.expect("m1"), None);
        let ok = zk
            .multi(vec![
                Op::Create {
                    path: p("m2"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m2/a"),
                    data: vec![],
                    mode: CreateMode::Persistent,
                },
                Op::Create {
                    path: p("m2/s-"),
                    data: vec![],
                    mode: CreateMode::PersistentSequential,
                },
                Op::SetData {
                    path: p("m2"),
                    data: b"d".to_vec(),
                    version: 0,
                },
            ])
            .await
            .expect("multi");
        assert_eq!(ok.len(), 4);
        assert!(matches!(&ok[2], OpResult::Create { path, .. } if *path == p("m2/s-0000000001")));
        // 3.8.0 answers creates inside a multi without a Stat.
        if let OpResult::Create { stat, .. } = &ok[0] {
            eprintln!("multi create Stat on this server: {stat:?}");
            assert_eq!(stat.czxid, -1, "3.8.0 reports no Stat for a create in a multi");
        }
        let a = zk.exists(&p("m2/a")).await.expect("m2/a").expect("exists");
        let m2 = zk.exists(&p("m2")).await.expect("m2").expect("exists");
        assert_eq!((m2.czxid, m2.mzxid, m2.pzxid), (a.czxid, a.czxid, a.czxid));
        assert_eq!(zk.multi(vec![]).await, Ok(vec![]));

        // §1.8 watches: getData on a missing node sets no watch, exists does.
        assert_eq!(
            zk.get_data_watch(&p("w")).await.map(|_| ()).err(),
            Some(ZkError::NoNode)
        );
        let (_, created) = other.exists_watch(&p("w")).await.expect("exists watch");
        zk.create(&p("w"), b"", CreateMode::Persistent).await.expect("w");
        let e = tokio::time::timeout(Duration::from_secs(5), created.changed())
            .await
            .expect("event");
        assert_eq!(
            (e.event_type, e.path.as_deref()),
            (EventType::NodeCreated, Some(p("w").as_str()))
        );
        // A child's data change does not fire the parent's child watch.
        zk.create(&p("w/c"), b"", CreateMode::Persistent).await.expect("w/c");
        let (_, _, children) = other.get_children_watch(&p("w")).await.expect("child watch");
        zk.set_data(&p("w/c"), b"x", ANY_VERSION).await.expect("set");
        zk.delete(&p("w/c"), ANY_VERSION).await.expect("delete w/c");
        let e = tokio::time::timeout(Duration::from_secs(5), children.changed())
            .await
            .expect("event");
        assert_eq!(e.event_type, EventType::NodeChildrenChanged);

        // ZOOKEEPER-4466 as seen through zookeeper-client: a one-shot child
        // watch and a persistent-recursive watch by one session on one path —
        // the child watch never fires.
        let (_, _, swallowed) = other.get_children_watch(&p("w")).await.expect("child watch");
        let _recursive = other
            .add_watch(&p("w"), AddWatchMode::PersistentRecursive)
            .await
            .expect("add");
        zk.create(&p("w/d"), b"", CreateMode::Persistent).await.expect("w/d");
        let e = tokio::time::timeout(Duration::from_secs(2), swallowed.changed()).await;
        eprintln!("child watch under a recursive watch on the same path: {e:?}");
        assert!(e.is_err(), "the child watch fired after all: {e:?}");

        zk.close().await;
        other.close().await;
    });
}

// ---------------------------------------------------------------------------
// Faults: the same scenario on the real server and on the simulator, the
// same client-visible outcomes.

struct ProxyNemesis<'a> {
    proxy: &'a FaultProxy,
    mode: FaultMode,
}

impl Nemesis for ProxyNemesis<'_> {
    fn inject(&mut self) {
        self.proxy.set_mode(self.mode);
    }
    fn heal(&mut self) {
        self.proxy.set_mode(FaultMode::Pass);
    }
}

/// The simulator's lost reply: the next write is applied, its reply lost,
/// the connection dropped.
struct LoseReply(SimClient);

impl Nemesis for LoseReply {
    fn inject(&mut self) {
        self.0.lose_next_write_reply();
    }
    fn heal(&mut self) {}
}

/// The simulator's silence: the client node cut off from every server.
struct Isolate<'a> {
    cluster: &'a mut Cluster,
    client: u32,
}

impl Nemesis for Isolate<'_> {
    fn inject(&mut self) {
        let servers: Vec<NodeRef> = self.cluster.server_ids().into_iter().map(NodeRef::Server).collect();
        self.cluster.partition(&[vec![NodeRef::Client(self.client)], servers]);
    }
    fn heal(&mut self) {
        self.cluster.heal();
    }
}

/// Runs `body` on a fresh simulated ensemble (`servers`, `tick_ms`) with
/// clients connected with the given session timeouts.
fn on_sim<T, B, Fut>(seed: u64, servers: u32, tick_ms: u64, timeouts: Vec<i32>, body: B) -> T
where
    T: Send + 'static,
    B: FnOnce(Cluster, Vec<SimClient>) -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let options = SimOptions {
        servers,
        tick_ms,
        ..SimOptions::default()
    };
    run_seed(seed, Some(Duration::from_secs(3600)), move || async move {
        let mut cluster = Cluster::start(options.ensemble(), Recorder::new(), seed);
        assert!(
            cluster.wait_for_leader(Duration::from_secs(60)).await.is_some(),
            "no leader"
        );
        let mut clients = Vec::new();
        for (i, t) in timeouts.into_iter().enumerate() {
            clients.push(connect_sim_client(&mut cluster, i as u32, t).await.expect("sim client"));
        }
        body(cluster, clients).await
    })
    .unwrap_or_else(|e| panic!("simulated run: {e}"))
}

fn assert_same_outcomes(what: &str, real: &[String], sim: &[String]) {
    eprintln!("{what}, real server:\n  {}", real.join("\n  "));
    eprintln!("{what}, simulator:\n  {}", sim.join("\n  "));
    assert_eq!(
        real, sim,
        "{what}: the simulator's outcomes differ from the real server's"
    );
}

/// (a) A reply lost after the write was applied, on both backends.
#[test]
fn fault_lost_reply_real_vs_sim() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    let mut real = Vec::new();
    run(Duration::from_secs(120), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let direct = connect(&server.connect_string(), 2000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let mut nemesis = ProxyNemesis {
            proxy: &proxy,
            mode: FaultMode::DropServerToClient,
        };
        real = faults::lost_reply(&zk, &direct, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        zk.close().await;
        direct.close().await;
    });
    let sim = on_sim(11, 1, 200, vec![2000, 2000], |mut cluster, clients| async move {
        let mut nemesis = LoseReply(clients[0].clone());
        let out = faults::lost_reply(&clients[0], &clients[1], "/lost", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("lost reply", &real, &sim);
}

/// (b) A client silenced past its session timeout, on both backends.
#[test]
fn fault_silenced_expiry_real_vs_sim() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    let mut real = Vec::new();
    run(Duration::from_secs(120), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let zk = connect(&proxy.connect_string(), 2000).await;
        let observer = connect(&server.connect_string(), 4000).await;
        let mut nemesis = ProxyNemesis {
            proxy: &proxy,
            mode: FaultMode::DropAll,
        };
        real = faults::silenced_expiry(&zk, &observer, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        observer.close().await;
    });
    let sim = on_sim(12, 1, 200, vec![2000, 4000], |mut cluster, clients| async move {
        let (zk, observer) = (clients[0].clone(), clients[1].clone());
        let mut nemesis = Isolate {
            cluster: &mut cluster,
            client: 0,
        };
        let out = faults::silenced_expiry(&zk, &observer, "/silenced", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("silenced client", &real, &sim);
}

struct KillRealLeader<'a>(&'a mut RealEnsemble);

impl Nemesis for KillRealLeader<'_> {
    fn inject(&mut self) {
        if let Some(l) = self.0.leader() {
            self.0.kill(l);
        }
    }
    fn heal(&mut self) {}
}

struct KillSimLeader<'a>(&'a mut Cluster);

impl Nemesis for KillSimLeader<'_> {
    fn inject(&mut self) {
        if let Some(l) = self.0.leader() {
            self.0.kill_server(l, false);
        }
    }
    fn heal(&mut self) {}
}

/// (c) The leader of a three-server ensemble killed, on both backends.
#[test]
fn fault_leader_failover_real_vs_sim() {
    let _serial = serial();
    let mut ensemble = RealEnsemble::start(ServerOptions {
        tick_ms: 500,
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let connect_string = ensemble.connect_string();
    let members: Vec<String> = (0..3).map(|i| ensemble.addr(i).to_string()).collect();
    let mut real = Vec::new();
    run(Duration::from_secs(180), async {
        let mut clients = Vec::new();
        for member in &members {
            clients.push(connect(&format!("{member},{connect_string}"), 8000).await);
        }
        let mut nemesis = KillRealLeader(&mut ensemble);
        real = faults::leader_failover(&clients, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        for c in &clients {
            c.close().await;
        }
    });
    let sim = on_sim(13, 3, 500, vec![8000; 3], |mut cluster, clients| async move {
        let mut nemesis = KillSimLeader(&mut cluster);
        let out = faults::leader_failover(&clients, "/failover", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("leader failover", &real, &sim);
}
