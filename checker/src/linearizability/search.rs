//! The search over one partition, resumable so that a scheduler can run
//! many partitions in slices (a hard partition never starves an easy
//! refutation).
//!
//! Porcupine's loop: walk the entry list; at a call, try to linearize the
//! operation now (the model accepts it and the resulting (linearized set,
//! state) is new), lifting it out of the list; at a return, the operation
//! that returned was not linearized in time, so backtrack the last choice.
//!
//! Two reductions prune orders that cannot matter, each justified by
//! rearranging any linearization that exists:
//! - a read ([`Model::is_read`]) that can be linearized now is linearized
//!   now, and never tried later instead: moving a read that leaves the state
//!   as it found it to the front of a linearization keeps it one (every
//!   operation still pending returned after the read was called);
//! - operations of unknown outcome with the same input are interchangeable
//!   once called, so they are linearized in the order of their calls: the
//!   second waits for the first.

use std::collections::HashMap;
use std::hash::Hash;

use super::bitset::Bitset;
use super::cache::Cache;
use super::entries::{is_call, op_of, Entries, NIL};
use super::operation::LinOp;
use super::states::{StateId, States};
use super::verdict::{Witness, WitnessStep};
use crate::models::Model;

const NONE: u32 = u32::MAX;

/// For each operation of unknown outcome, the previous one (by call, as the
/// entry list orders them) with an equal input; `NONE` for the rest.
fn interchangeable<I: Eq + Hash, O>(ops: &[LinOp<I, O>]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].output.is_none()).collect();
    order.sort_by_key(|&i| (ops[i].call, i));
    let mut last: HashMap<&I, u32> = HashMap::new();
    let mut after = vec![NONE; ops.len()];
    for i in order {
        if let Some(prev) = last.insert(&ops[i].input, i as u32) {
            after[i] = prev;
        }
    }
    after
}

pub(crate) enum Progress {
    Linearizable,
    Refuted,
    Pending,
}

pub(crate) struct Search<'a, M: Model> {
    model: &'a M,
    ops: &'a [LinOp<M::Input, M::Output>],
    entries: Entries,
    linearized: Bitset,
    states: States<M::State>,
    cache: Cache,
    /// The linearized calls, with the state before each.
    calls: Vec<(u32, StateId)>,
    state: StateId,
    entry: u32,
    /// Per operation: whether it is a read of the model.
    read: Vec<bool>,
    /// Per operation of unknown outcome: the one with the same input called
    /// just before it, which must be linearized first; `NONE` otherwise.
    after: Vec<u32>,
    /// Calls of the longest linearized prefix seen.
    best: Vec<u32>,
    /// The entry at which the search first got stuck after `best`.
    stuck: Option<u32>,
    steps: u64,
}

impl<'a, M: Model> Search<'a, M> {
    pub(crate) fn new(model: &'a M, ops: &'a [LinOp<M::Input, M::Output>]) -> Self {
        let entries = Entries::new(ops);
        let linearized = Bitset::new(ops.len());
        let mut states = States::new(ops.len());
        let state = states.intern(model.init());
        let mut cache = Cache::new(linearized.words().len());
        cache.insert(&linearized, state, states.hash(state), |_| false);
        let entry = entries.first();
        let read = ops.iter().map(|op| model.is_read(&op.input)).collect();
        Search {
            model,
            ops,
            entries,
            linearized,
            read,
            after: interchangeable(ops),
            states,
            cache,
            calls: Vec::new(),
            state,
            entry,
            best: Vec::new(),
            stuck: None,
            steps: 0,
        }
    }

    pub(crate) fn steps(&self) -> u64 {
        self.steps
    }

    /// Runs at most `max_steps` steps.
    pub(crate) fn run(&mut self, max_steps: u64) -> Progress {
        let mut left = max_steps;
        loop {
            if self.entries.first() == NIL {
                return Progress::Linearizable;
            }
            if left == 0 {
                return Progress::Pending;
            }
            left -= 1;
            self.steps += 1;
            let e = self.entry;
            if e != NIL && is_call(e) {
                let i = op_of(e);
                let op = &self.ops[i];
                let first = self.after[i];
                if first != NONE && !self.linearized.contains(first as usize) {
                    self.entry = self.entries.next(e);
                    continue;
                }
                if let Some(next) = self.states.step(self.model, self.state, i, op) {
                    self.linearized.set(i);
                    let states = &self.states;
                    if self.cache.insert(&self.linearized, next, states.hash(next), |other| {
                        states.same(next, other)
                    }) {
                        self.calls.push((e, self.state));
                        self.state = next;
                        self.entries.lift(e);
                        self.entry = self.entries.first();
                        if self.calls.len() > self.best.len() {
                            self.best.clear();
                            self.best.extend(self.calls.iter().map(|c| c.0));
                            self.stuck = None;
                        }
                        continue;
                    }
                    self.linearized.clear(i);
                    self.states.discard(next);
                    if self.read[i] {
                        // Linearizing the read now was already refuted, so
                        // is every order from here.
                        if !self.backtrack() {
                            return Progress::Refuted;
                        }
                        continue;
                    }
                }
                self.entry = self.entries.next(e);
            } else {
                if self.stuck.is_none() && self.calls.len() == self.best.len() {
                    self.stuck = Some(e);
                }
                if !self.backtrack() {
                    return Progress::Refuted;
                }
            }
        }
    }

    /// Undoes the last choice that had alternatives (a read had none) and
    /// moves on to the next; false when there is none left.
    fn backtrack(&mut self) -> bool {
        while let Some((call, before)) = self.calls.pop() {
            let i = op_of(call);
            self.linearized.clear(i);
            self.state = before;
            self.entries.unlift(call);
            if !self.read[i] {
                self.entry = self.entries.next(call);
                return true;
            }
        }
        false
    }

    fn describe(&self, i: usize, note: String) -> WitnessStep {
        let op = &self.ops[i];
        WitnessStep {
            id: op.id,
            client: op.client,
            operation: self.model.describe_operation(&op.input, op.output.as_ref()),
            note,
        }
    }

    /// The evidence after `run` returned `Refuted`: the longest prefix,
    /// replayed through the model, and the operations that could not follow.
    pub(crate) fn witness(&self, partition: String) -> Witness {
        let init = self.model.init();
        let initial_state = self.model.describe_state(&init);
        let mut state = init;
        let mut prefix = Vec::with_capacity(self.best.len());
        let mut in_prefix = vec![false; self.ops.len()];
        for &call in &self.best {
            let i = op_of(call);
            in_prefix[i] = true;
            let op = &self.ops[i];
            if let Some(next) = self.model.step(&state, &op.input, op.output.as_ref()) {
                state = next;
            }
            prefix.push(self.describe(i, self.model.describe_state(&state)));
        }
        let overdue_op = self.stuck.filter(|&e| e != NIL).map(op_of);
        let horizon = overdue_op.and_then(|i| self.ops[i].ret.filter(|_| self.ops[i].output.is_some()));
        let mut blocked = Vec::new();
        for (i, op) in self.ops.iter().enumerate() {
            if in_prefix[i] || horizon.is_some_and(|t| op.call > t) {
                continue;
            }
            let note = match self.model.step(&state, &op.input, op.output.as_ref()) {
                None => "the model rejects it in this state".to_string(),
                Some(s) => format!(
                    "leads to {}, from which every order was already refuted",
                    self.model.describe_state(&s)
                ),
            };
            blocked.push(self.describe(i, note));
        }
        let overdue = overdue_op.map(|i| self.describe(i, String::new()));
        Witness {
            partition,
            initial_state,
            prefix,
            state: self.model.describe_state(&state),
            overdue,
            blocked,
        }
    }
}
