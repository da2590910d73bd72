//! The records of `zookeeper-jute/src/main/resources/zookeeper.jute` that
//! travel between a client and a server, one file per family.

pub mod data;
pub mod multi;
pub mod requests;
pub mod responses;
pub mod session;
pub mod watch;
