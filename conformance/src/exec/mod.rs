//! Runs a [`Step`](crate::ops::Step) sequence on any
//! [`ZkClient`](zkdst_recipes::zk::ZkClient) implementation and records a
//! [`Trace`]: every call's result and every one-shot watch's event.
//!
//! Steps run strictly one after another (each call is awaited before the
//! next). Watches are collected without spawning anything: each watch's
//! events are drained by a [`Collector`] that is its own waker (so events
//! are logged in the order the client delivers them) and polled after every
//! step; the executor is runtime-agnostic, and time passes only through the
//! injected `sleep`, which the simulator implements with virtual time.
//!
//! Files: `trace` (what a run records), `run` (the step loop), `fault`
//! (the fault steps), `collector` (watch events in delivery order).

mod collector;
mod fault;
mod run;
mod trace;

use std::time::Duration;

pub use collector::Collector;
pub use run::run_sequence;
pub use trace::{OpRecord, Outcome, Trace, WatchKind, WatchRecord};

/// Pacing of a run.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Pause after every step before polling watches.
    pub step_pause: Duration,
    /// Pause at the end (after a `sync` on every open client, which makes
    /// every notification of earlier writes reach its client) before the
    /// watches are read for the last time.
    pub settle: Duration,
    /// `sync` before every read and every `add_watch` (and before reading
    /// a version to resolve one): a follower then answers, and registers
    /// watches, as fresh as the leader.
    pub sync_before_reads: bool,
    /// Bound of each wait for a fault's effect (a session state).
    pub fault_wait: Duration,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            step_pause: Duration::from_millis(2),
            settle: Duration::from_millis(200),
            sync_before_reads: false,
            fault_wait: Duration::from_secs(30),
        }
    }
}
