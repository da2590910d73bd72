//! The linearizability engine: Wing & Gong's search with Lowe's memoisation
//! of (linearized set, model state), in the shape of Porcupine's checker.
//!
//! A history is given as operations of one model ([`LinOp`]), split into
//! independent partitions (P-compositionality). Each partition is searched
//! separately; the history is linearizable iff every partition is.

mod bitset;
mod cache;
mod entries;
mod operation;
mod scheduler;
mod search;
mod states;
mod verdict;

pub use operation::LinOp;
pub use scheduler::{check_operations, check_partitions, Partition};
pub use verdict::{Budget, UnknownReason, Verdict, Witness, WitnessStep};
