// The fixed-key hasher both ahash stand-ins export (see lib.rs).

use std::collections::hash_map::DefaultHasher;
use std::hash::{BuildHasher, Hasher};

/// A hasher with fixed keys (`DefaultHasher::new()` is SipHash-1-3 with
/// zero keys).
#[derive(Debug, Clone)]
pub struct AHasher(DefaultHasher);

impl Default for AHasher {
    fn default() -> Self {
        AHasher(DefaultHasher::new())
    }
}

impl Hasher for AHasher {
    fn finish(&self) -> u64 {
        self.0.finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes)
    }
}

/// Builds [`AHasher`]s; every instance is the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RandomState;

impl RandomState {
    pub fn new() -> RandomState {
        RandomState
    }

    pub fn with_seed(_key: usize) -> RandomState {
        RandomState
    }

    pub fn with_seeds(_k0: u64, _k1: u64, _k2: u64, _k3: u64) -> RandomState {
        RandomState
    }

    /// Hashes one value (ahash 0.8's inherent method).
    pub fn hash_one<T: std::hash::Hash>(&self, x: T) -> u64 {
        let mut h = self.build_hasher();
        x.hash(&mut h);
        h.finish()
    }
}

impl BuildHasher for RandomState {
    type Hasher = AHasher;

    fn build_hasher(&self) -> AHasher {
        AHasher::default()
    }
}
