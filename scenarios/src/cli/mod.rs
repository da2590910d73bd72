//! The `zkdst` binary's larger commands (not part of the library: the
//! logic they call lives in `zkdst_scenarios`).

pub mod fuzz;
pub mod regress;
