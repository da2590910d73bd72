//! ahash 0.8 with fixed hash keys: the same code as `../ahash` (0.7), for
//! the ahash 0.8 that hashbrown 0.14 (zookeeper-client's `hashlink` sets)
//! and madsim use. The real one draws its "fixed" keys from getrandom the
//! first time a process hashes: inside a simulation that draw comes from
//! madsim's RNG in the first run of a process only, so a seed fuzzed after
//! another would not replay alone.

#[path = "../../ahash/src/fixed.rs"]
mod fixed;

pub use fixed::{AHasher, RandomState};
