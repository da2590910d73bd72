//! Zab-like replication: a pure state machine per server (`Peer`), its
//! messages, and nothing else. The server shell owns I/O.

mod msg;
mod peer;
#[cfg(test)]
mod tests;

pub use msg::{counter_of, epoch_of, make_zxid, Entry, Msg, PeerState, ServerId, Vote, Zxid};
pub use peer::{DiskOp, Durable, NotLeader, Peer, Role, ZabConfig};
