//! Hand-written differential cases for the session fault steps: watches
//! across a reconnect (SetWatches' verdicts, the documented miss), a session
//! expired mid-sequence, persistent watches on a faulted session. Each runs
//! on the real standalone server (faults through per-client proxies) and on
//! the simulator (its fault primitives); the traces must be identical.
#![cfg(feature = "real")]

use std::time::Duration;

use zkdst_conformance::real::{fresh_root, run_real};
use zkdst_conformance::sim::run_sim;
use zkdst_conformance::{compare, ExecOptions, RealServer, ServerOptions, SimOptions, Step, Version};
use zkdst_recipes::zk::CreateMode;

fn create(client: usize, path: &str) -> Step {
    Step::Create {
        client,
        path: path.into(),
        data: vec![],
        mode: CreateMode::Persistent,
    }
}
fn ephemeral(client: usize, path: &str) -> Step {
    Step::Create {
        client,
        path: path.into(),
        data: vec![],
        mode: CreateMode::Ephemeral,
    }
}
fn delete(client: usize, path: &str) -> Step {
    Step::Delete {
        client,
        path: path.into(),
        version: Version::Any,
    }
}
fn set(client: usize, path: &str) -> Step {
    Step::SetData {
        client,
        path: path.into(),
        data: b"x".to_vec(),
        version: Version::Any,
    }
}
fn data(client: usize, path: &str) -> Step {
    Step::GetData {
        client,
        path: path.into(),
        watch: true,
    }
}
fn exists(client: usize, path: &str) -> Step {
    Step::Exists {
        client,
        path: path.into(),
        watch: true,
    }
}
fn children(client: usize, path: &str) -> Step {
    Step::GetChildren {
        client,
        path: path.into(),
        watch: true,
    }
}
fn add(client: usize, path: &str, recursive: bool) -> Step {
    Step::AddWatch {
        client,
        path: path.into(),
        recursive,
    }
}
fn read(client: usize, path: &str) -> Step {
    Step::GetData {
        client,
        path: path.into(),
        watch: false,
    }
}
fn cut(client: usize) -> Step {
    Step::Disconnect { client }
}
fn back(client: usize) -> Step {
    Step::Reconnect { client }
}
fn expire(client: usize) -> Step {
    Step::Expire { client }
}

fn cases() -> Vec<(&'static str, Vec<Step>)> {
    vec![
        (
            "watches unchanged across a reconnect fire later as usual",
            vec![
                create(0, "a"),
                data(1, "a"),
                children(1, "a"),
                exists(1, "b"),
                cut(1),
                back(1),
                set(0, "a"),
                create(0, "a/x"),
                create(0, "b"),
            ],
        ),
        (
            "changes while disconnected: SetWatches' verdicts",
            vec![
                create(0, "a"),
                create(0, "b"),
                create(0, "c"),
                data(1, "a"),
                data(1, "b"),
                children(1, "c"),
                exists(1, "d"),
                exists(1, "e"),
                children(1, "b"),
                cut(1),
                set(0, "a"),
                delete(0, "b"),
                create(0, "c/x"),
                create(0, "d"),
                back(1),
            ],
        ),
        (
            "the documented miss: created and deleted while disconnected",
            vec![
                create(0, "a"),
                exists(1, "a/x"),
                data(1, "a"),
                cut(1),
                create(0, "a/x"),
                delete(0, "a/x"),
                back(1),
                create(0, "a/x"),
            ],
        ),
        (
            "deleted and recreated while disconnected",
            vec![
                create(0, "a"),
                create(0, "a/b"),
                data(1, "a/b"),
                children(1, "a/b"),
                cut(1),
                delete(0, "a/b"),
                create(0, "a/b"),
                back(1),
                set(0, "a/b"),
            ],
        ),
        (
            "a reconnect with nothing changed, then a change",
            vec![create(0, "a"), data(1, "a"), cut(1), back(1), read(1, "a"), set(0, "a")],
        ),
        (
            "persistent watches across a reconnect",
            vec![
                create(0, "a"),
                add(1, "a", false),
                add(1, "", true),
                data(1, "a"),
                cut(1),
                set(0, "a"),
                back(1),
                set(0, "a"),
                create(0, "a/b"),
            ],
        ),
        (
            "an expired session: ephemerals go, watches fire, calls fail",
            vec![
                create(0, "a"),
                ephemeral(1, "a/e"),
                ephemeral(1, "b"),
                Step::Create {
                    client: 1,
                    path: "a/s-".into(),
                    data: vec![],
                    mode: CreateMode::EphemeralSequential,
                },
                exists(0, "b"),
                children(0, "a"),
                add(2, "", true),
                data(1, "a"),
                exists(1, "zz"),
                expire(1),
                read(1, "a"),
                create(1, "q"),
                set(0, "a"),
            ],
        ),
        (
            "an expired session's persistent watches",
            vec![
                create(0, "a"),
                add(1, "a", false),
                add(1, "", true),
                ephemeral(1, "a/e"),
                expire(1),
                set(0, "a"),
            ],
        ),
        (
            "expiry while disconnected",
            vec![
                create(0, "a"),
                ephemeral(1, "e"),
                exists(0, "e"),
                data(1, "a"),
                cut(1),
                set(0, "a"),
                expire(1),
                back(1),
                read(1, "a"),
            ],
        ),
        (
            "an expired session: an empty multi is answered locally; close, then Closed",
            vec![
                create(0, "a"),
                expire(0),
                Step::Multi { client: 0, ops: vec![] },
                read(0, "a"),
                Step::Close { client: 0 },
                Step::Multi { client: 0, ops: vec![] },
                read(0, "a"),
                Step::Close { client: 1 },
                Step::Multi { client: 1, ops: vec![] },
            ],
        ),
    ]
}

/// An expired session's ephemerals go in the order of its close
/// transaction (a Java HashSet's), seen through a recursive watch: several
/// set sizes.
fn expiry_order_cases() -> Vec<(String, Vec<Step>)> {
    [3usize, 6, 11]
        .into_iter()
        .map(|n| {
            let mut steps = vec![create(0, "a"), add(2, "", true)];
            for i in 0..n {
                steps.push(match i % 3 {
                    0 => ephemeral(1, &format!("e{i}")),
                    1 => Step::Create {
                        client: 1,
                        path: "a/s-".into(),
                        data: vec![],
                        mode: CreateMode::EphemeralSequential,
                    },
                    _ => ephemeral(1, &format!("a/x{i}")),
                });
            }
            steps.push(expire(1));
            (
                format!("an expired session's {n} ephemerals go in close-txn order"),
                steps,
            )
        })
        .collect()
}

#[test]
fn session_fault_known_cases() {
    let server = RealServer::start(ServerOptions {
        container_check_ms: Some(3_600_000),
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting ZooKeeper: {e}"));
    let connect = server.connect_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let exec = ExecOptions::default();
    let mut failures = Vec::new();
    let mut all: Vec<(String, Vec<Step>)> = cases().into_iter().map(|(n, s)| (n.to_string(), s)).collect();
    all.extend(expiry_order_cases());
    for (k, (name, steps)) in all.iter().enumerate() {
        let root = fresh_root();
        let started = std::time::Instant::now();
        let real = rt
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(90), run_real(&connect, &root, 3, steps, &exec)).await
            })
            .expect("real run timed out")
            .expect("real run");
        let real_elapsed = started.elapsed();
        let sim = run_sim(100 + k as u64, &SimOptions::default(), &root, 3, steps, &exec).expect("sim run");
        match compare(&real, &sim) {
            Ok(()) => eprintln!("fault case ok: {name} (real run {real_elapsed:?})"),
            Err(d) => {
                eprintln!("fault case DIVERGES: {name}\n(left = real, right = sim) {d}");
                failures.push(name.to_string());
            }
        }
        for op in &real.ops {
            if matches!(
                op.step,
                Step::Disconnect { .. } | Step::Reconnect { .. } | Step::Expire { .. }
            ) || matches!(op.outcome, zkdst_conformance::Outcome::Error(_))
            {
                eprintln!("  real op {}: {} -> {:?}", op.index, op.step, op.outcome);
            }
        }
        for w in &real.watches {
            let shown: Vec<String> = w
                .events
                .iter()
                .map(|e| format!("{:?} {:?} {}", e.event_type, e.state, e.path.as_deref().unwrap_or("-")))
                .collect();
            eprintln!(
                "  real watch c{} {:?} {} (op {}): {}",
                w.client,
                w.kind,
                w.path.replacen(&root, "~", 1),
                w.set_at,
                shown.join(", ")
            );
        }
    }
    assert!(failures.is_empty(), "diverging fault cases: {failures:?}");
}
