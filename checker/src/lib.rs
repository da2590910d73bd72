//! zkdst-checker: the judge. Reads histories as data and decides whether
//! they are linearizable, consistent with ZooKeeper's guarantees, and satisfy
//! the recipes' properties.

mod check;
pub mod formats;
pub mod linearizability;
pub mod models;
pub mod properties;
pub mod report;
pub mod zk_consistency;

/// The history the checkers read, and the project's hashes: their own
/// crate (`zkdst-history`), below the simulator and the checkers alike.
pub use zkdst_history::{self as history, hash};

pub use check::{check_file, check_history, CheckError, Report};
pub use properties::{CheckResult, Params, Verdict, Violation};
