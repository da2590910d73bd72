//! zkdst-scenarios: the experiments. Scenario files, seeded fault plans,
//! workload drivers for every recipe, the runner that joins the simulated
//! ensemble (sim), the subject (recipes) and the judge (checker), fuzzing,
//! shrinking, and the library API behind the `zkdst` command and the
//! cargo-test integration.

pub mod api;
pub mod bench;
pub mod error;
pub mod fuzz;
mod hash;
pub mod judge;
pub mod junit;
pub mod nemesis;
pub mod plan;
pub mod profile;
pub mod registry;
pub mod regress;
pub mod replay;
mod resolve;
pub mod runner;
pub mod scenario;
pub mod serve;
pub mod shrink;
pub mod stats;
pub mod store;
pub mod streams;
mod swarm;
pub mod trace;
pub mod variant;
pub mod workload;

pub use api::{check, fault_plan_strategy, seed_count, CheckFailure};
pub use plan::{Fault, FaultKind, FaultPlan, Node, TimedFault};
pub use runner::{repro_line, run, RunOutcome, RunVerdict, COMMIT};
pub use scenario::{Client, Recipe, Scenario, ScenarioError};
pub use stats::Stats;
pub use variant::Variant;
