//! Where each operation id's invocation sits among the paired operations.
//! The simulator numbers operations 1, 2, 3, ...: a table indexed by id
//! answers those; a hash map takes the ids of third-party histories that
//! are too large for the table.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::OpId;

const EMPTY: u32 = u32::MAX;

pub struct OpIndex {
    table: Vec<u32>,
    /// Ids below this go in the table (fixed, so an id has one home).
    limit: u64,
    others: HashMap<OpId, usize>,
}

impl OpIndex {
    /// An index for about `n` operations.
    pub fn new(n: usize) -> OpIndex {
        let n = n.min(1 << 26);
        OpIndex {
            table: Vec::with_capacity(n + 2),
            // Twice the planned size, so sparse ids cannot blow the table up.
            limit: (2 * n as u64).max(1024),
            others: HashMap::new(),
        }
    }

    /// Records that `id` is operation `i`; false if `id` was already there.
    pub fn insert(&mut self, id: OpId, i: usize) -> bool {
        match self.slot(id) {
            Some(slot) if i < EMPTY as usize => {
                let s = slot as usize;
                if s >= self.table.len() {
                    self.table.resize(s + 1, EMPTY);
                }
                if self.table[s] != EMPTY {
                    return false;
                }
                self.table[s] = i as u32;
                true
            }
            _ => match self.others.entry(id) {
                Entry::Occupied(_) => false,
                Entry::Vacant(v) => {
                    v.insert(i);
                    true
                }
            },
        }
    }

    pub fn get(&self, id: OpId) -> Option<usize> {
        if let Some(s) = self.slot(id) {
            if let Some(&i) = self.table.get(s as usize) {
                if i != EMPTY {
                    return Some(i as usize);
                }
            }
        }
        self.others.get(&id).copied()
    }

    /// The table slot of `id`, if it has one.
    fn slot(&self, id: OpId) -> Option<u64> {
        (id < self.limit).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Against a map, for dense and sparse ids alike.
        #[test]
        fn answers_as_a_map_does(ids in prop::collection::vec(prop_oneof![0u64..3000, any::<u64>()], 0..400), n in 0usize..500) {
            let mut index = OpIndex::new(n);
            let mut oracle = HashMap::new();
            for (i, &id) in ids.iter().enumerate() {
                let fresh = !oracle.contains_key(&id);
                if fresh {
                    oracle.insert(id, i);
                }
                prop_assert_eq!(index.insert(id, i), fresh);
            }
            for &id in ids.iter().chain([0, 1, 5000, u64::MAX].iter()) {
                prop_assert_eq!(index.get(id), oracle.get(&id).copied());
            }
        }
    }
}
