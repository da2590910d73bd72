//! The model states a search has met, each stored once and named by a small
//! integer, and a memo of the model's transitions between them.
//!
//! The search then never clones, hashes or compares a model state in its hot
//! loop: its memo of configurations is keyed by (linearized set, state id),
//! and `step` on a (state, operation) pair it has seen before is an array
//! read. The model is a pure function, so remembering it changes nothing.
//!
//! Interning pays when states recur (a register's few values); when nearly
//! every state is new (a kv store's appended strings) it is one more table
//! lookup per step, a cache miss for nothing. So a partition stops
//! interning once `PROBE` states have been looked up and fewer than one in
//! `MIN_HIT_RATE` was found: from then on each new state gets a fresh id,
//! and two ids may name equal states. [`States::same`] tells them apart by
//! content (ids below `fresh_from` are interned, so two of them are equal
//! only if they are the same id), and every id carries the hash of its
//! state, so the memo of configurations still finds (set, state) by the
//! state's content — exactly the memo of the engine without interning. A
//! fresh state the memo already had is dropped again at once
//! ([`States::discard`]), and no transition to a fresh state is remembered,
//! so the transition table only ever names kept states.

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

/// Lookups after which a partition decides whether to go on interning.
const PROBE: u32 = 1 << 12;
/// Interning goes on while at least one lookup in this many finds a state
/// already there.
const MIN_HIT_RATE: u32 = 8;

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
    /// The first id not interned; `StateId::MAX` while interning.
    fresh_from: StateId,
    /// Interning lookups so far, and how many found their state.
    lookups: u32,
    hits: u32,
    /// The fresh state the last `step` made, if it made one.
    made: Option<StateId>,
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
            fresh_from: StateId::MAX,
            lookups: 0,
            hits: 0,
            made: None,
        }
    }

    /// Whether new states are still interned.
    pub(crate) fn interning(&self) -> bool {
        self.fresh_from == StateId::MAX
    }

    /// The hash of state `id`'s content.
    #[inline]
    pub(crate) fn hash(&self, id: StateId) -> u64 {
        self.hashes[id as usize]
    }

    /// Whether ids `a` and `b` name equal states.
    #[inline]
    pub(crate) fn same(&self, a: StateId, b: StateId) -> bool {
        a == b
            || ((a >= self.fresh_from || b >= self.fresh_from)
                && self.hashes[a as usize] == self.hashes[b as usize]
                && self.states[a as usize] == self.states[b as usize])
    }

    /// Forgets state `id` if the last `step` made it fresh (the caller had
    /// no use for it); no other id is ever in use then.
    pub(crate) fn discard(&mut self, id: StateId) {
        if self.made == Some(id) {
            debug_assert_eq!(id as usize + 1, self.states.len());
            self.states.pop();
            self.hashes.pop();
            self.rows.pop();
            self.made = None;
        }
    }

    /// Stores `state` under a fresh id, without looking for it.
    fn push_fresh(&mut self, state: S) -> StateId {
        let hash = hash_state(&state);
        let id = self.states.len() as StateId;
        self.states.push(state);
        self.hashes.push(hash);
        self.rows.push(NO_ROW);
        self.made = Some(id);
        id
    }

    /// Interns `state`, counting the lookup; stops interning when lookups
    /// seldom find anything.
    fn lookup(&mut self, state: S) -> StateId {
        let before = self.states.len();
        let id = self.intern(state);
        self.lookups += 1;
        if self.states.len() == before {
            self.hits += 1;
        }
        if self.lookups == PROBE && self.hits * MIN_HIT_RATE < self.lookups {
            self.fresh_from = self.states.len() as StateId;
        }
        id
    }

    #[cfg(test)]
    pub(crate) fn get(&self, id: StateId) -> &S {
        &self.states[id as usize]
    }

    pub(crate) fn state(&self, id: StateId) -> &S {
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
        self.made = None;
        let row = self.rows[from as usize];
        if row != NO_ROW {
            match self.table[row as usize + index] {
                UNKNOWN => {}
                REJECTED => return None,
                to => return Some(to),
            }
        }
        let state = &self.states[from as usize];
        let to = if model.is_read(&op.input) {
            let accepted = model.accepts_read(state, &op.input, op.output.as_ref());
            debug_assert!(
                {
                    let next = model.step(state, &op.input, op.output.as_ref());
                    next.is_some() == accepted && next.as_ref().is_none_or(|s| s == state)
                },
                "{} says {:?} is a read, but step disagrees with accepts_read or changed the state",
                model.name(),
                op.input
            );
            accepted.then_some(from)
        } else {
            let next = model.step(state, &op.input, op.output.as_ref());
            if self.interning() {
                next.map(|next| self.lookup(next))
            } else {
                next.map(|next| self.push_fresh(next))
            }
        };
        if row != NO_ROW && self.made.is_none() {
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

    #[test]
    fn stops_interning_when_states_are_new_and_still_tells_them_apart() {
        // A register whose every write is new: interning finds nothing.
        let m = Register::plain();
        let ops: Vec<_> = (0..PROBE as i64 + 10)
            .map(|v| op(RegisterInput::Write { key: None, value: v }, RegisterOutput::Done))
            .collect();
        let mut s: States<Option<i64>> = States::new(ops.len());
        let nil = s.intern(None);
        for (i, o) in ops.iter().enumerate().take(PROBE as usize) {
            assert!(s.interning());
            s.step(&m, nil, i, o).unwrap();
        }
        assert!(!s.interning());
        // Equal states now get fresh ids, which `same` and `hash` equate.
        let write0 = s.step(&m, nil, 0, &ops[0]).unwrap();
        let fresh = s.step(&m, nil, PROBE as usize, &ops[0]).unwrap();
        assert_ne!(write0, fresh);
        assert!(s.same(write0, fresh) && s.same(fresh, write0));
        assert_eq!(s.hash(write0), s.hash(fresh));
        assert!(!s.same(fresh, nil));
        // A fresh state nobody kept is dropped; a remembered one is not.
        let len = s.len();
        s.discard(fresh);
        assert_eq!(s.len(), len - 1);
        s.discard(write0);
        assert_eq!(s.len(), len - 1);
        let again = s.step(&m, nil, PROBE as usize + 1, &ops[PROBE as usize + 1]).unwrap();
        assert_eq!(s.get(again), &Some(PROBE as i64 + 1));
    }
}
