//! Recipe properties (mutual exclusion, fencing, queues, elections,
//! barriers, counters, two-phase commit, membership, configuration) and
//! liveness, each a pure `fn check(&History, &Params) -> CheckResult`, and a
//! registry that runs them by name.

mod params;
mod result;
#[cfg(test)]
pub(crate) mod testkit;

pub use params::{end_of_history, healed_at, Delivery, Params, NS_PER_MS};
pub use result::{ms, CheckResult, Verdict, Violation, MAX_LISTED_VIOLATIONS};

mod common;
pub mod fencing;
pub mod mutex;
pub mod election;
pub mod queue;
pub mod barrier;
pub mod counter;
pub mod two_phase;
pub mod membership;
pub mod liveness;
pub mod registry;

pub use registry::{lookup, names, run, run_all, CheckFn, UnknownChecker, CHECKERS};
