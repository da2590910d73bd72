//! Lowe's memo: every (linearized set, model state) configuration the search
//! has entered. Open addressing over an arena of bitset words and states, so
//! an entry costs no allocation of its own, and the states double as the
//! search's state storage (the search refers to states by index).

use std::hash::{Hash, Hasher};

use super::bitset::Bitset;

/// FxHash's multiply-rotate hasher: fast, deterministic, good enough for
/// small keys (the states of the models).
#[derive(Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        for b in chunks.remainder() {
            self.write_u64(*b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn write_u64(&mut self, i: u64) {
        self.hash = (self.hash.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub(crate) fn hash_state<S: Hash>(s: &S) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// Index of a state in the cache's arena.
pub(crate) type StateId = u32;

pub(crate) struct Cache<S> {
    words_per_entry: usize,
    words: Vec<u64>,
    states: Vec<S>,
    hashes: Vec<u64>,
    /// Open-addressing slots: entry index + 1, 0 when empty.
    slots: Vec<u32>,
}

impl<S: Eq + Hash> Cache<S> {
    pub(crate) fn new(words_per_entry: usize) -> Self {
        Cache {
            words_per_entry,
            words: Vec::new(),
            states: Vec::new(),
            hashes: Vec::new(),
            slots: vec![0; 1024],
        }
    }

    pub(crate) fn state(&self, id: StateId) -> &S {
        &self.states[id as usize]
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.states.len()
    }

    /// Adds (bitset, state) unless present; returns its id if it was new.
    pub(crate) fn insert(&mut self, set: &Bitset, state: S) -> Option<StateId> {
        let hash = set.hash() ^ hash_state(&state).rotate_left(17);
        let mask = self.slots.len() - 1;
        let mut slot = (hash as usize) & mask;
        loop {
            let e = self.slots[slot];
            if e == 0 {
                break;
            }
            let i = (e - 1) as usize;
            if self.hashes[i] == hash
                && self.words[i * self.words_per_entry..(i + 1) * self.words_per_entry] == *set.words()
                && self.states[i] == state
            {
                return None;
            }
            slot = (slot + 1) & mask;
        }
        let id = self.states.len();
        self.slots[slot] = id as u32 + 1;
        self.words.extend_from_slice(set.words());
        self.states.push(state);
        self.hashes.push(hash);
        if self.states.len() * 2 > self.slots.len() {
            self.grow();
        }
        Some(id as StateId)
    }

    fn grow(&mut self) {
        let mut slots = vec![0u32; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for (i, h) in self.hashes.iter().enumerate() {
            let mut slot = (*h as usize) & mask;
            while slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            slots[slot] = i as u32 + 1;
        }
        self.slots = slots;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_configurations() {
        let mut c: Cache<Option<i64>> = Cache::new(1);
        let mut b = Bitset::new(10);
        assert_eq!(c.insert(&b, None), Some(0));
        assert_eq!(c.insert(&b, None), None);
        b.set(1);
        assert_eq!(c.insert(&b, None), Some(1));
        assert_eq!(c.insert(&b, Some(1)), Some(2));
        assert_eq!(c.insert(&b, Some(1)), None);
        for i in 0..5000 {
            assert!(c.insert(&b, Some(i + 10)).is_some());
        }
        assert_eq!(c.insert(&b, Some(4000)), None);
        assert_eq!(c.state(2), &Some(1));
        assert_eq!(c.len(), 5003);
    }
}
