//! The model states a search has met, each stored once and named by a small
//! integer, and a memo of the model's transitions between them.
//!
//! The search then never clones, hashes or compares a model state in its hot
//! loop: its memo of configurations is keyed by (linearized set, state id),
//! and `step` on a (state, operation) pair it has seen before is an array
//! read. The model is a pure function, so remembering it changes nothing.

use std::hash::{Hash, Hasher};

use super::operation::LinOp;
use crate::models::Model;

/// Index of an interned state.
pub(crate) type StateId = u32;

/// Transition table entries: not computed yet, and rejected by the model.
const UNKNOWN: u32 = u32::MAX;
const REJECTED: u32 = u32::MAX - 1;
/// The index half of a slot.
const INDEX: u64 = 0xffff_ffff;
/// Marks a state without a row in the transition table.
const NO_ROW: u32 = u32::MAX;

/// Budget for the transition table, in entries (4 bytes each): beyond it,
/// new states get no row and their transitions are recomputed each time.
/// Small on purpose: the table pays off for models with few states (a
/// register), where it serves nearly every step; a model whose states are
/// mostly new (a kv store's appended strings) would only fill it.
const TABLE_ENTRIES: usize = 1 << 16;

/// FxHash's multiply-rotate hasher: fast, deterministic, good enough for
/// model states. Long byte strings (a kv store's values) go through four
/// independent lanes, so hashing them is not one long multiply chain.
#[derive(Default)]
struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

fn word(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(c);
    u64::from_le_bytes(w)
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut blocks = bytes.chunks_exact(32);
        if bytes.len() >= 32 {
            let mut lanes = [self.hash, SEED, SEED.rotate_left(16), SEED.rotate_left(32)];
            for b in &mut blocks {
                for (l, c) in lanes.iter_mut().zip(b.chunks_exact(8)) {
                    *l = (l.rotate_left(5) ^ word(c)).wrapping_mul(SEED);
                }
            }
            self.hash = lanes[0] ^ lanes[1].rotate_left(16) ^ lanes[2].rotate_left(32) ^ lanes[3].rotate_left(48);
        }
        let mut chunks = blocks.remainder().chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(word(c));
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

/// The state's hash, finalised (splitmix64) so that its low bits, which
/// pick the slot, depend on every input bit.
fn hash_state<S: Hash>(s: &S) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    let mut z = h.finish();
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(crate) struct States<S> {
    states: Vec<S>,
    hashes: Vec<u64>,
    /// Open addressing over `states`: the high half of the hash, then
    /// index + 1 in the low half; 0 when empty.
    slots: Vec<u64>,
    /// Operations in the partition: the width of a row.
    ops: usize,
    /// Per state, the offset of its row in `table`, or `NO_ROW`.
    rows: Vec<u32>,
    /// Rows of `ops` entries: the state after each operation, `UNKNOWN`
    /// or `REJECTED`.
    table: Vec<u32>,
}

impl<S: Clone + Eq + Hash> States<S> {
    pub(crate) fn new(ops: usize) -> Self {
        States {
            states: Vec::new(),
            hashes: Vec::new(),
            slots: vec![0; 64],
            ops,
            rows: Vec::new(),
            table: Vec::new(),
        }
    }

    #[cfg(test)]
    pub(crate) fn get(&self, id: StateId) -> &S {
        &self.states[id as usize]
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.states.len()
    }

    /// The id of `state`, storing it if it is new.
    pub(crate) fn intern(&mut self, state: S) -> StateId {
        let hash = hash_state(&state);
        let tag = hash & !INDEX;
        let mask = self.slots.len() - 1;
        let mut slot = (hash as usize) & mask;
        loop {
            let e = self.slots[slot];
            if e == 0 {
                break;
            }
            if e & !INDEX == tag {
                let i = ((e & INDEX) - 1) as usize;
                if self.states[i] == state {
                    return i as StateId;
                }
            }
            slot = (slot + 1) & mask;
        }
        let id = self.states.len();
        self.slots[slot] = tag | (id as u64 + 1);
        self.states.push(state);
        self.hashes.push(hash);
        let row = if self.table.len() + self.ops <= TABLE_ENTRIES {
            let at = self.table.len();
            self.table.resize(at + self.ops, UNKNOWN);
            at as u32
        } else {
            NO_ROW
        };
        self.rows.push(row);
        if self.states.len() * 2 > self.slots.len() {
            self.grow();
        }
        id as StateId
    }

    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for (i, h) in self.hashes.iter().enumerate() {
            let mut slot = (*h as usize) & mask;
            while slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            slots[slot] = (h & !INDEX) | (i as u64 + 1);
        }
        self.slots = slots;
    }

    /// The state after operation `index` (that is `op`) in state `from`, or
    /// `None` if the model rejects it there.
    #[inline]
    pub(crate) fn step<M: Model<State = S>>(
        &mut self,
        model: &M,
        from: StateId,
        index: usize,
        op: &LinOp<M::Input, M::Output>,
    ) -> Option<StateId> {
        let row = self.rows[from as usize];
        if row != NO_ROW {
            match self.table[row as usize + index] {
                UNKNOWN => {}
                REJECTED => return None,
                to => return Some(to),
            }
        }
        let next = model.step(&self.states[from as usize], &op.input, op.output.as_ref());
        let to = if model.is_read(&op.input) {
            debug_assert!(
                next.as_ref().is_none_or(|s| *s == self.states[from as usize]),
                "{} says {:?} is a read, but it changed the state",
                model.name(),
                op.input
            );
            next.map(|_| from)
        } else {
            next.map(|next| self.intern(next))
        };
        if row != NO_ROW {
            self.table[row as usize + index] = to.unwrap_or(REJECTED);
        }
        to
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{Register, RegisterInput, RegisterOutput};

    #[test]
    fn interns_each_state_once() {
        let mut s: States<String> = States::new(3);
        let a = s.intern("a".to_string());
        let b = s.intern("b".to_string());
        assert_ne!(a, b);
        assert_eq!(s.intern("a".to_string()), a);
        for i in 0..1000 {
            s.intern(format!("x{i}"));
        }
        assert_eq!(s.intern("b".to_string()), b);
        assert_eq!(s.get(b), "b");
        assert_eq!(s.len(), 1002);
    }

    fn op(input: RegisterInput, output: RegisterOutput) -> LinOp<RegisterInput, RegisterOutput> {
        LinOp {
            id: 0,
            client: 0,
            call: 0,
            ret: Some(1),
            input,
            output: Some(output),
        }
    }

    #[test]
    fn remembered_transitions_agree_with_the_model() {
        let m = Register::cas();
        let ops = [
            op(RegisterInput::Write { key: None, value: 1 }, RegisterOutput::Done),
            op(RegisterInput::Read { key: None }, RegisterOutput::Read(Some(1))),
            op(
                RegisterInput::Cas {
                    key: None,
                    expected: 1,
                    new: 2,
                },
                RegisterOutput::Done,
            ),
        ];
        let mut s = States::new(ops.len());
        let nil = s.intern(None);
        for _ in 0..2 {
            let one = s.step(&m, nil, 0, &ops[0]);
            assert_eq!(one.map(|id| *s.get(id)), Some(Some(1)));
            let one = one.unwrap();
            assert_eq!(s.step(&m, nil, 1, &ops[1]), None);
            assert_eq!(s.step(&m, one, 1, &ops[1]), Some(one));
            let two = s.step(&m, one, 2, &ops[2]).unwrap();
            assert_eq!(s.get(two), &Some(2));
            assert_eq!(s.step(&m, two, 2, &ops[2]), None);
        }
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn states_past_the_table_budget_still_step() {
        let m = Register::plain();
        let ops = 1 << 14;
        let mut s: States<Option<i64>> = States::new(ops);
        let ids: Vec<_> = (0..6).map(|v| s.intern(Some(v))).collect();
        assert_eq!(s.rows.iter().filter(|r| **r == NO_ROW).count(), 2);
        let write = op(RegisterInput::Write { key: None, value: 3 }, RegisterOutput::Done);
        for &id in &ids {
            assert_eq!(s.step(&m, id, ops - 1, &write), Some(ids[3]));
        }
    }
}
