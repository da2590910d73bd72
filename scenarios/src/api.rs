//! The library API for users' own seeded tests:
//!
//! ```ignore
//! #[test]
//! fn my_lock_survives_faults() {
//!     zkdst_scenarios::check("scenarios/lock.toml", 0..50).unwrap();
//! }
//! ```
//!
//! and a proptest strategy generating fault plans (which shrinks: fewer,
//! shorter, later faults) to drive `run(&scenario, seed, Some(&plan))`.

use std::ops::Range;
use std::path::Path;

use proptest::prelude::*;

use crate::plan::{Fault, FaultPlan, Node, TimedFault};
use crate::runner::{repro_line, run, RunVerdict};
use crate::scenario::{Scenario, ScenarioError};

/// Why `check` failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckFailure {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// Seeds that failed, each with its repro line and failed checks.
    #[error("{} seed(s) failed:\n{}", .0.len(), .0.join("\n"))]
    Failed(Vec<String>),
    /// A seed gave two different histories in two runs.
    #[error("nondeterminism: {0}")]
    Nondeterministic(String),
}

/// The seed count of a test: `ZKDST_SEEDS` when set, else `default`.
pub fn seed_count(default: u64) -> u64 {
    std::env::var("ZKDST_SEEDS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// Runs `scenario_path` over `seeds`; every seed runs twice and the two
/// histories must be identical (determinism is tested, not assumed).
pub fn check(scenario_path: impl AsRef<Path>, seeds: Range<u64>) -> Result<(), CheckFailure> {
    let path = scenario_path.as_ref();
    let sc = Scenario::load(path)?;
    let mut failed = Vec::new();
    for seed in seeds {
        let a = run(&sc, seed, None);
        let b = run(&sc, seed, None);
        if a.fingerprint != b.fingerprint {
            return Err(CheckFailure::Nondeterministic(format!(
                "{}: seed {seed} gave histories {:016x} and {:016x}",
                path.display(),
                a.fingerprint,
                b.fingerprint
            )));
        }
        if a.verdict == RunVerdict::Fail {
            failed.push(format!(
                "  [{}] {}",
                a.failed_checks().join(","),
                repro_line(path, &sc, seed, &a.plan)
            ));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CheckFailure::Failed(failed))
    }
}

fn client(clients: u32) -> impl Strategy<Value = u32> {
    0..clients.max(1)
}

/// A strategy for one fault against `servers` servers and `clients` clients.
pub fn fault_strategy(servers: u32, clients: u32) -> impl Strategy<Value = Fault> {
    let server = 1..=servers.max(1);
    prop_oneof![
        Just(Fault::IsolateLeader),
        any::<bool>().prop_map(|lose_unsynced| Fault::KillLeader { lose_unsynced }),
        (server.clone(), any::<bool>()).prop_map(|(server, lose_unsynced)| Fault::KillServer { server, lose_unsynced }),
        client(clients).prop_map(|client| Fault::DropConnection { client }),
        client(clients).prop_map(|client| Fault::LoseReply { client }),
        client(clients).prop_map(|client| Fault::ExpireSession { client }),
        client(clients).prop_map(|client| Fault::ExpireAfterRead { client }),
        client(clients).prop_map(|client| Fault::FlapConnection { client }),
        client(clients).prop_map(|client| Fault::LoseReplyThenFlap { client }),
        client(clients).prop_map(|c| Fault::Pause { node: Node::Client(c) }),
        server.clone().prop_map(|s| Fault::Pause { node: Node::Server(s) }),
        (client(clients), server.clone()).prop_map(|(client, s)| Fault::ClientCut {
            client,
            servers: vec![s]
        }),
        Just(Fault::MajoritiesRing {
            order: (1..=servers).collect()
        }),
        (5u64..50, 10u64..300).prop_map(|(min_ms, d)| Fault::LatencySpike {
            min_ms,
            max_ms: min_ms + d
        }),
    ]
}

/// A strategy for fault plans within `phase_ms`: up to `max_faults`
/// faults. Shrinks towards fewer faults, earlier and shorter.
pub fn fault_plan_strategy(
    servers: u32,
    clients: u32,
    phase_ms: u64,
    max_faults: usize,
) -> impl Strategy<Value = FaultPlan> {
    proptest::collection::vec(
        (0..phase_ms.max(1), 0u64..8000, fault_strategy(servers, clients)),
        0..=max_faults,
    )
    .prop_map(|v| {
        let mut faults: Vec<TimedFault> = v
            .into_iter()
            .map(|(at_ms, duration_ms, fault)| TimedFault {
                at_ms,
                duration_ms: if fault.is_instant() { 0 } else { duration_ms },
                fault,
            })
            .collect();
        faults.sort_by_key(|f| f.at_ms);
        FaultPlan {
            faults,
            max_ops_per_client: None,
        }
    })
}
