//! zkdst-conformance: checking the simulator against a real ZooKeeper.
//!
//! - [`server`]: real ZooKeeper 3.8 servers (standalone, 3-member ensemble)
//!   on loopback, started and killed from Rust.
//! - [`proxy`]: a loopback TCP proxy that drops bytes on command, to make
//!   ConnectionLoss (with or without the write applied) and session expiry.
//! - [`ops`]: operation sequences over a few sessions, and their proptest
//!   generator.
//! - [`faults`]: fault scenarios over any client, run on both backends.
//! - [`cutoff`]: session faults as steps (a client cut off and let back,
//!   a session expired), over either backend: [`real_cutoff`] through the
//!   fault proxy, [`sim_cutoff`] with the simulator's own faults.
//! - [`ensemble`]: differential runs on three servers, sessions pinned to
//!   different members ([`pinning`]), reads after `sync`.
//! - [`exec`]: runs a sequence on any `ZkClient` and records a [`Trace`].
//! - [`normalize`]: removes what legitimately differs between runs, and
//!   [`compare`]s two traces.
//! - [`real`]: running a sequence on a real server with `RealClient`s.
//! - [`throughput`]: the real-vs-simulated benchmark's closed-loop workload.
//! - [`sim`]: running a sequence on a fresh simulated ensemble with
//!   `SimClient`s.

pub mod cutoff;
#[cfg(feature = "real")]
pub mod ensemble;
pub mod exec;
pub mod faults;
pub mod normalize;
pub mod ops;
pub mod pinning;
#[cfg(feature = "real")]
pub mod proxy;
#[cfg(feature = "real")]
pub mod real;
#[cfg(feature = "real")]
pub mod real_cutoff;
pub mod seeded;
#[cfg(feature = "real")]
pub mod server;
pub mod sim;
pub mod sim_cutoff;
pub mod throughput;

pub use cutoff::{NoFaults, SessionFaults};
pub use exec::{run_sequence, ExecOptions, OpRecord, Outcome, Trace, WatchKind, WatchRecord};
pub use normalize::{compare, compare_with, normalize, Divergence, NormalizeOptions};
pub use ops::{sequence, step, GenConfig, MultiStep, Step, Version};
#[cfg(feature = "real")]
pub use proxy::{FaultMode, FaultProxy, ProxyStats};
#[cfg(feature = "real")]
pub use server::{RealEnsemble, RealServer, ServerError, ServerOptions};
pub use sim::{connect_sim_clients, run_sim, SimOptions, SimRunError};
