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
//!   second waits for the first;
//! - a configuration from which a pending read can never be satisfied is
//!   dropped as if the model had rejected the step into it. Let `r` be the
//!   determinate read not yet linearized that returned first, and suppose
//!   every operation not yet linearized that does not grow the state
//!   ([`Model::grows`]) was called after `r` returned. Any completion of
//!   the configuration places `r` (it returned, so it happened), and every
//!   operation placed before `r` was called before `r` returned (real
//!   time), so it grows the state: the state `r` sees is reached from the
//!   current one by growing steps. When [`Model::may_read_later`] says no
//!   such state lets `r` return what it returned, there is no completion,
//!   and skipping the configuration changes no verdict. (Ties: an operation
//!   called exactly when `r` returned may precede it, so only strictly
//!   later calls count.)

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
    /// Determinate reads by return time, and the position of the first one
    /// that may not be linearized (all before it are); empty when the model
    /// has no growing operations.
    reads_by_ret: Vec<u32>,
    first_read: usize,
    /// Operations that do not grow the state, by call time, and the
    /// position of the first that may not be linearized.
    resets_by_call: Vec<u32>,
    first_reset: usize,
    /// Per operation, its position in `reads_by_ret` or `resets_by_call`
    /// (`NONE` if in neither).
    order_pos: Vec<u32>,
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
        let read: Vec<bool> = ops.iter().map(|op| model.is_read(&op.input)).collect();
        let grows: Vec<bool> = ops.iter().map(|op| model.grows(&op.input)).collect();
        let mut reads_by_ret = Vec::new();
        let mut resets_by_call = Vec::new();
        if grows.iter().any(|g| *g) {
            reads_by_ret = (0..ops.len() as u32)
                .filter(|&i| read[i as usize] && ops[i as usize].output.is_some() && ops[i as usize].ret.is_some())
                .collect();
            reads_by_ret.sort_by_key(|&i| (ops[i as usize].ret, i));
            resets_by_call = (0..ops.len() as u32)
                .filter(|&i| !grows[i as usize] && !read[i as usize])
                .collect();
            resets_by_call.sort_by_key(|&i| (ops[i as usize].call, i));
        }
        let mut order_pos = vec![NONE; ops.len()];
        for (p, &i) in reads_by_ret.iter().enumerate() {
            order_pos[i as usize] = p as u32;
        }
        for (p, &i) in resets_by_call.iter().enumerate() {
            order_pos[i as usize] = p as u32;
        }
        Search {
            reads_by_ret,
            first_read: 0,
            resets_by_call,
            first_reset: 0,
            order_pos,
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
                    if !self.read[i] && !self.pending_read_possible(next) {
                        self.unset(i);
                        self.states.discard(next);
                        self.entry = self.entries.next(e);
                        continue;
                    }
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
                    self.unset(i);
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
            self.unset(i);
            self.state = before;
            self.entries.unlift(call);
            if !self.read[i] {
                self.entry = self.entries.next(call);
                return true;
            }
        }
        false
    }

    /// Takes operation `i` out of the linearized set.
    fn unset(&mut self, i: usize) {
        self.linearized.clear(i);
        let p = self.order_pos[i] as usize;
        if self.read[i] {
            if p < self.first_read {
                self.first_read = p;
            }
        } else if p < self.first_reset {
            self.first_reset = p;
        }
    }

    /// False if, with the current linearized set, the pending read that
    /// returned first can no longer be satisfied from state `next` (see
    /// the module doc).
    fn pending_read_possible(&mut self, next: StateId) -> bool {
        let linearized = &self.linearized;
        let reads = &self.reads_by_ret;
        while self.first_read < reads.len() && linearized.contains(reads[self.first_read] as usize) {
            self.first_read += 1;
        }
        let Some(&r) = reads.get(self.first_read) else {
            return true;
        };
        let resets = &self.resets_by_call;
        while self.first_reset < resets.len() && linearized.contains(resets[self.first_reset] as usize) {
            self.first_reset += 1;
        }
        let r = &self.ops[r as usize];
        let returned = r.ret.expect("a determinate read");
        if resets
            .get(self.first_reset)
            .is_some_and(|&p| self.ops[p as usize].call <= returned)
        {
            return true;
        }
        self.model.may_read_later(
            self.states.state(next),
            &r.input,
            r.output.as_ref().expect("a determinate read"),
        )
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
