//! A small deterministic 64-bit hash (FNV-1a with a splitmix64 finish) for
//! the tree digest. Independent of Rust's std hasher, whose output is not
//! guaranteed across releases.

/// Incremental FNV-1a over length-prefixed fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv64(u64);

impl Fnv64 {
    pub fn new() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }

    fn byte(&mut self, b: u8) {
        self.0 ^= u64::from(b);
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.u64(bytes.len() as u64);
        for &b in bytes {
            self.byte(b);
        }
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_field_sensitive() {
        let h = |a: &[u8], b: &[u8]| Fnv64::new().bytes(a).bytes(b).finish();
        assert_eq!(h(b"ab", b"c"), h(b"ab", b"c"));
        // length prefixes keep field boundaries apart
        assert_ne!(h(b"ab", b"c"), h(b"a", b"bc"));
        assert_ne!(Fnv64::new().i64(1).finish(), Fnv64::new().i64(2).finish());
    }
}
