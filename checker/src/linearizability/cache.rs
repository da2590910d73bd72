//! Lowe's memo: every (linearized set, model state) configuration the search
//! has entered. States are interned ([`super::states`]), so a configuration
//! is a short row of words — the state id, then the bitset — kept in one
//! arena. Open addressing; each slot holds the entry's index and the high
//! half of its hash, so a probe that misses touches only the slot array.

use super::bitset::Bitset;
use super::states::StateId;

pub(crate) struct Cache {
    /// Words per entry: the state id, then the bitset's words.
    stride: usize,
    keys: Vec<u64>,
    entries: usize,
    /// The low half of each entry's hash (the slot tags hold the high
    /// half), read only to grow.
    low: Vec<u32>,
    /// `(hash >> 32) << 32 | (index + 1)`; 0 when empty.
    slots: Vec<u64>,
}

/// splitmix64's finaliser, for the state id's share of the hash.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const INDEX: u64 = 0xffff_ffff;

impl Cache {
    pub(crate) fn new(bitset_words: usize) -> Self {
        Cache {
            stride: bitset_words + 1,
            keys: Vec::new(),
            entries: 0,
            low: Vec::new(),
            slots: vec![0; 1024],
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries
    }

    /// Adds (set, state) unless present; true if it was new.
    #[inline]
    pub(crate) fn insert(&mut self, set: &Bitset, state: StateId) -> bool {
        let words = set.words();
        debug_assert_eq!(words.len() + 1, self.stride);
        let hash = set.hash() ^ mix(state as u64 | 1 << 40);
        let tag = hash & !INDEX;
        let mask = self.slots.len() - 1;
        let mut slot = (hash as usize) & mask;
        loop {
            let e = self.slots[slot];
            if e == 0 {
                break;
            }
            if e & !INDEX == tag {
                let at = ((e & INDEX) - 1) as usize * self.stride;
                let key = &self.keys[at..at + self.stride];
                if key[0] == state as u64 && key[1..] == *words {
                    return false;
                }
            }
            slot = (slot + 1) & mask;
        }
        self.entries += 1;
        self.slots[slot] = tag | self.entries as u64;
        self.keys.push(state as u64);
        self.keys.extend_from_slice(words);
        self.low.push(hash as u32);
        if self.entries * 2 > self.slots.len() {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for e in self.slots.iter().copied().filter(|&e| e != 0) {
            let hash = (e & !INDEX) | self.low[((e & INDEX) - 1) as usize] as u64;
            let mut slot = (hash as usize) & mask;
            while slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            slots[slot] = e;
        }
        self.slots = slots;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_configurations() {
        let mut c = Cache::new(1);
        let mut b = Bitset::new(10);
        assert!(c.insert(&b, 0));
        assert!(!c.insert(&b, 0));
        b.set(1);
        assert!(c.insert(&b, 0));
        assert!(c.insert(&b, 1));
        assert!(!c.insert(&b, 1));
        for i in 0..5000 {
            assert!(c.insert(&b, i + 10));
        }
        assert!(!c.insert(&b, 4000));
        assert!(!c.insert(&b, 1));
        b.clear(1);
        assert!(!c.insert(&b, 0));
        assert!(c.insert(&b, 1));
        assert_eq!(c.len(), 5004);
    }

    #[test]
    fn wide_sets_are_told_apart_by_every_word() {
        let mut c = Cache::new(3);
        let mut sets = Vec::new();
        for i in 0..150 {
            let mut b = Bitset::new(150);
            b.set(i);
            b.set((i * 7) % 150);
            sets.push(b);
        }
        for (i, b) in sets.iter().enumerate() {
            assert_eq!(c.insert(b, 0), sets[..i].iter().all(|p| p != b), "{i}");
        }
        for b in &sets {
            assert!(!c.insert(b, 0));
            assert!(c.insert(b, 7) || sets.iter().filter(|p| *p == b).count() > 1);
        }
    }
}
