//! zkdst-checker: the judge. Reads histories as data and decides whether
//! they are linearizable, consistent with ZooKeeper's guarantees, and satisfy
//! the recipes' properties.

pub mod history;
pub mod properties;
pub mod report;
pub mod zk_consistency;

pub use properties::{CheckResult, Params, Verdict, Violation};
