//! Recipe properties (mutual exclusion, fencing, queues, elections,
//! barriers, counters, two-phase commit, membership, configuration) and
//! liveness, each a pure `fn check(&History, &Params) -> CheckResult`, and a
//! registry that runs them by name.

mod kind;
#[cfg(test)]
pub(crate) mod member_fixtures;
mod params;
mod result;
#[cfg(test)]
pub(crate) mod testkit;

pub use kind::ViolationKind;
pub use params::{
    end_of_history, healed_at, Delivery, Params, RecordedParamsError, META_KEY as PARAMS_META_KEY, NS_PER_MS,
};
pub use result::{ms, CheckResult, Verdict, Violation, MAX_LISTED_VIOLATIONS};

pub mod barrier;
mod barrier_wait;
mod busy_wait;
mod change_wait;
pub mod client_protocol;
mod client_states;
mod common;
mod conditional_set;
mod config_wait;
pub mod counter;
pub mod election;
pub mod fencing;
pub mod gave_up;
mod group_view;
mod held_after_end;
mod hold_node;
mod hold_polls;
mod hold_state;
pub mod latch_quit;
mod leader_query;
pub mod leadership;
pub mod liveness;
mod member_act;
mod member_polls;
mod member_session;
pub mod membership;
pub mod missed_claim;
pub mod mutex;
pub mod needless_ambiguity;
mod node_reads;
pub mod progress;
pub mod queue;
pub mod queue_len;
pub mod recipe_errors;
pub mod registry;
pub mod replicas;
pub mod retry_budget;
mod revoke_state;
pub mod semaphore;
pub mod session_lost;
mod sessions;
pub mod two_phase;

pub use common::{with_operations, OpsCheckFn};
pub use registry::{lookup, names, run, run_all, run_ops, CheckFn, UnknownChecker, CHECKERS};

/// "acquire lock=/l shared=false": an op, compactly, for reports.
pub fn describe_op(op: &crate::history::Op) -> String {
    common::short_op(op)
}
