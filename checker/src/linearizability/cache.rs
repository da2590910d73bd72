//! Lowe's memo: every (linearized set, model state) configuration the search
//! has entered. States are named by ids ([`super::states`]), so a
//! configuration is a short row of words — the state id, then the bitset —
//! kept in one arena; it is found by the hash of the state's content, and
//! two ids are compared by the caller (equal ids, or equal states once
//! interning has stopped). Open addressing; each slot holds the entry's index and the high
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

    /// Adds (set, state) unless present; true if it was new. `state_hash`
    /// is the hash of the state's content, and `same(other)` whether the
    /// state named `other` equals it.
    #[inline]
    pub(crate) fn insert(
        &mut self,
        set: &Bitset,
        state: StateId,
        state_hash: u64,
        same: impl Fn(StateId) -> bool,
    ) -> bool {
        let words = set.words();
        debug_assert_eq!(words.len() + 1, self.stride);
        let hash = set.hash() ^ state_hash.rotate_left(29);
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
                if key[1..] == *words && (key[0] == state as u64 || same(key[0] as StateId)) {
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

    /// Inserts with states told apart by id alone (interned states).
    fn ins(c: &mut Cache, b: &Bitset, id: StateId) -> bool {
        c.insert(b, id, (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15), |_| false)
    }

    #[test]
    fn remembers_configurations() {
        let mut c = Cache::new(1);
        let mut b = Bitset::new(10);
        assert!(ins(&mut c, &b, 0));
        assert!(!ins(&mut c, &b, 0));
        b.set(1);
        assert!(ins(&mut c, &b, 0));
        assert!(ins(&mut c, &b, 1));
        assert!(!ins(&mut c, &b, 1));
        for i in 0..5000 {
            assert!(ins(&mut c, &b, i + 10));
        }
        assert!(!ins(&mut c, &b, 4000));
        assert!(!ins(&mut c, &b, 1));
        b.clear(1);
        assert!(!ins(&mut c, &b, 0));
        assert!(ins(&mut c, &b, 1));
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
            assert_eq!(ins(&mut c, b, 0), sets[..i].iter().all(|p| p != b), "{i}");
        }
        for b in &sets {
            assert!(!ins(&mut c, b, 0));
            assert!(ins(&mut c, b, 7) || sets.iter().filter(|p| *p == b).count() > 1);
        }
    }

    #[test]
    fn fresh_ids_of_equal_states_are_one_configuration() {
        // Ids 0..1000 name states by `id % 10`: ids with equal residues are
        // equal states, hashed alike.
        let mut c = Cache::new(1);
        let hash = |id: StateId| ((id % 10) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut b = Bitset::new(10);
        let mut fresh = 0;
        for round in 0..3 {
            for id in round * 100..round * 100 + 20 {
                fresh += c.insert(&b, id, hash(id), |other| other % 10 == id % 10) as usize;
            }
            b.set(round as usize);
        }
        assert_eq!(fresh, 30);
        assert_eq!(c.len(), 30);
    }
}
