//! The set of linearized operations: u64 words with an incrementally
//! maintained hash (an XOR of one mixed value per member).

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bitset {
    words: Vec<u64>,
    hash: u64,
}

/// splitmix64's finaliser: spreads an operation index over 64 bits.
fn mix(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Bitset {
    pub(crate) fn new(len: usize) -> Self {
        Bitset {
            words: vec![0; len.div_ceil(64).max(1)],
            hash: 0,
        }
    }

    pub(crate) fn set(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.hash ^= mix(i);
        }
    }

    pub(crate) fn clear(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & b != 0 {
            self.words[w] &= !b;
            self.hash ^= mix(i);
        }
    }

    pub(crate) fn contains(&self, i: usize) -> bool {
        self.words[i / 64] & (1u64 << (i % 64)) != 0
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_only_on_members() {
        let mut a = Bitset::new(130);
        let mut b = Bitset::new(130);
        a.set(3);
        a.set(129);
        b.set(129);
        b.set(64);
        b.set(3);
        b.clear(64);
        assert_eq!(a, b);
        assert_eq!(a.hash(), b.hash());
        a.clear(3);
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.words()[0], 0);
        assert_eq!(a.words()[2], 2);
        assert!(a.contains(129) && !a.contains(3) && !a.contains(64));
    }
}
