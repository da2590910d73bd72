//! The `zkdst` binary's larger commands (not part of the library: the
//! logic they call lives in `zkdst_scenarios`).

pub mod fuzz;
pub mod regress;
pub mod serve;

// The commands reach the binary's shared helpers through here (`super::`),
// not `crate::`: `zkdst-wire` (wiresim/) builds this same source as a
// module of its own binary.
use super::{exit_for, exit_for_campaign, load, load_plan, quiet_seed_panics, EXIT_PASS, EXIT_USAGE};
