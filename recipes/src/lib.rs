//! zkdst-recipes: ZooKeeper coordination recipes written against one client
//! interface ([`zk::ZkClient`]), so that they run unchanged on the simulated
//! ensemble of `zkdst-sim` and on a real ZooKeeper.

pub mod zk;

/// The interface over a real ZooKeeper (`zookeeper-client`), feature `real`.
#[cfg(feature = "real")]
pub mod real;
