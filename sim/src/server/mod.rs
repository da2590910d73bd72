//! A simulated ZooKeeper server: a pure core and the madsim node around it.

mod conn;
mod core;
pub mod node;

pub use self::core::{Outputs, ServerConfig, ServerCore, EPOCH_MS};
pub use conn::ConnId;
