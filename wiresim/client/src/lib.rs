//! zookeeper-client inside zkdst's simulation.
//!
//! zookeeper-client 0.11 needs a runtime only through `asyncs`/`spawns`
//! (spawning), async-io (`Timer`), async-net (`TcpStream`), async-select
//! (`select!`) and `fastrand`. This workspace patches the middle three with
//! stand-ins on madsim (see its Cargo.toml); [`enter`] does the rest once
//! per simulation: spawning onto madsim and seeding fastrand from the seed.

pub mod library;
mod lock;
pub mod runtime;

pub use library::install;
pub use runtime::enter;
