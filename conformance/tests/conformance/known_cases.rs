//! Hand-written differential cases, simulator against real server.

use std::time::Duration;

use zkdst_conformance::real::{fresh_root, run_real};
use zkdst_conformance::sim::run_sim;
use zkdst_conformance::{compare, ExecOptions, ServerOptions, SimOptions, Step};
use zkdst_recipes::zk::CreateMode;

use crate::support::{serial, sim_seed, standalone};

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
