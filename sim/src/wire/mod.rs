//! ZooKeeper's wire protocol in the simulation: servers serve byte-stream
//! clients beside the typed ones, so unmodified client libraries (speaking
//! jute over TCP) run against the simulated ensemble.
//!
//! - [`conn`]: a server's byte-stream connection — frames to the typed
//!   server core and back, with 3.8's handshake and ordering rules;
//! - [`convert`]: jute records ⇄ the simulator's types;
//! - [`stream`]: the client's end, a futures-io byte stream over the
//!   simulated network, with the nemesis's connection faults.
//!
//! Servers listen on [`WIRE_PORT`] when the ensemble is built with
//! `wire: true`.

pub mod conn;
pub mod convert;
pub mod stream;

pub use crate::addr::WIRE_PORT;
pub use conn::{session_passwd, WireConn};
pub use stream::{connect_string, lose_next_write_reply, reset_connections, resolve, WireStream};
