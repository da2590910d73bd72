//! The project's deterministic hashes, defined once: [`Hash64`] (the
//! simulator's tree digest and replica chains, its path-keyed node map,
//! and history fingerprints) and [`fnv1a`] (scenario hashes and seed
//! streams, whose values are part of every recorded seed).
//!
//! `Hash64` is word at a time (multiply-rotate, as rustc's FxHash) with a
//! splitmix64 finish, so low bits avalanche (the HAMT of `im::HashMap`
//! indexes by them). Both are independent of Rust's std hasher, whose
//! output is not guaranteed across releases and is seeded per process.

use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x517c_c1b7_2722_0a95;

/// Incremental hash over length-prefixed fields.
#[derive(Debug, Clone, Copy)]
pub struct Hash64(u64);

impl Default for Hash64 {
    fn default() -> Self {
        Hash64::new()
    }
}

/// Builds a [`Hash64`] (for hashed maps).
pub type BuildHash64 = BuildHasherDefault<Hash64>;

impl Hash64 {
    pub fn new() -> Self {
        Hash64(0xcbf2_9ce4_8422_2325)
    }

    fn word(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.u64(bytes.len() as u64);
        self.raw(bytes);
        self
    }

    fn raw(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(last));
        }
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.word(v);
        self
    }

    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.u64(v as u64)
    }

    /// The hash, with a final avalanche so that sums of hashes mix well.
    pub fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Hasher for Hash64 {
    fn write(&mut self, bytes: &[u8]) {
        self.raw(bytes);
    }

    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }

    fn finish(&self) -> u64 {
        Hash64::finish(self)
    }
}

/// 64-bit FNV-1a over `bytes`, a byte at a time.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn stable_and_field_sensitive() {
        let h = |a: &[u8], b: &[u8]| Hash64::new().bytes(a).bytes(b).finish();
        assert_eq!(h(b"ab", b"c"), h(b"ab", b"c"));
        // length prefixes keep field boundaries apart
        assert_ne!(h(b"ab", b"c"), h(b"a", b"bc"));
        assert_ne!(Hash64::new().i64(1).finish(), Hash64::new().i64(2).finish());
        // a trailing zero byte is not the same as none
        assert_ne!(h(b"a", b""), h(b"a\0", b""));
    }

    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn low_bits_spread_over_similar_paths() {
        // Paths differing only in their last characters must not share the
        // low bits the HAMT indexes by.
        let b = BuildHash64::default();
        let low: std::collections::BTreeSet<u64> = (0..1000).map(|i| b.hash_one(format!("/w1/c{i}")) & 0x3ff).collect();
        assert!(low.len() > 500, "only {} distinct low-10-bit values", low.len());
    }
}
