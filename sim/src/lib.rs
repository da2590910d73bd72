//! zkdst-sim: a simulated ZooKeeper 3.8 ensemble under madsim.
//!
//! Pure cores — the data tree (`tree`), the replication protocol (`zab`),
//! the session tracker (`session`), a server (`server::ServerCore`) — and
//! thin madsim shells around them: server nodes, the client, the fault
//! controls and the history recorder.

pub mod addr;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod disk;
pub mod net;
pub mod planted;
pub mod proto;
pub mod recorder;
pub mod replicas;
pub mod runner;
pub mod runtime;
pub mod server;
pub mod session;
pub mod tree;
pub mod wire;
pub mod zab;
