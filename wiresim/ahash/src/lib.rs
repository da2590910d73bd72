//! ahash 0.7's `RandomState` with fixed keys.
//!
//! The real one seeds every map from a process-wide source (getrandom once,
//! then a counter), so two runs of the same seed in one process iterate
//! zookeeper-client's maps (pending requests, watched paths) in different
//! orders — which decides the order in which failed requests wake their
//! tasks after a connection loss — and the first run alone draws from
//! madsim's RNG to seed it. Here every map hashes with SipHash-1-3 under
//! fixed keys: iteration order depends only on what was inserted. Hash
//! flooding is not a concern inside a simulation.

mod fixed;

pub use fixed::{AHasher, RandomState};
