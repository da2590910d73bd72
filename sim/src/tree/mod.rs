//! The pure core of the simulated ZooKeeper server: the data tree, request
//! preparation (validation → txn), txn application and the server-side watch
//! manager. No I/O, no clock, no randomness: plain deterministic functions
//! that the replication protocol and server loop drive.
//!
//! The flow of a write: the leader `prep`s the request against its
//! speculative tree (committed state plus every proposal in flight) and
//! applies the txn there at once; once committed, every server `apply`s it to
//! its own tree at the same zxid, and feeds the triggers to its
//! `WatchManager`.

mod apply;
mod children;
mod data_tree;
mod digest;
mod ephemeral;
mod node;
mod prep;
mod request;
mod txn;
mod undo;
mod watch;

#[cfg(test)]
mod tests;

pub use data_tree::{DataTree, SPECIAL_PATHS};
pub(crate) use digest::Hash64;
pub use ephemeral::EphemeralType;
pub use prep::{prep, sequence_suffix, PrepConfig};
pub use request::{WriteRequest, JUTE_MAX_BUFFER};
pub use txn::{Applied, Trigger, Txn, TxnResult};
pub use watch::{WatchKind, WatchManager};
