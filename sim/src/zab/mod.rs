//! Zab-like replication: a pure state machine per server (`Peer`), its
//! messages, and nothing else. The server shell owns I/O.

mod log;
mod msg;
mod peer;
#[cfg(test)]
mod tests;

pub use log::Entry;
pub use log::{DiskOp, Snapshot, SyncKind};
pub use msg::{counter_of, epoch_of, make_zxid, Msg, PeerState, ServerId, Vote, Zxid};
pub use peer::{Durable, NotLeader, Peer, Role, ZabConfig};
