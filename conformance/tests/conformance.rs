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

// The modules live in conformance/ (a crate root's `mod` looks beside it).
// Shared helpers: the process-wide lock, runtimes, servers, clients.
#[path = "conformance/support.rs"]
mod support;

#[path = "conformance/differential.rs"]
mod differential;
#[path = "conformance/fault_proxy.rs"]
mod fault_proxy;
#[path = "conformance/fault_scenarios.rs"]
mod fault_scenarios;
#[path = "conformance/known_cases.rs"]
mod known_cases;
#[path = "conformance/semantics.rs"]
mod semantics;
