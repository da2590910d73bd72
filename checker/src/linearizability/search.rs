//! The search over one partition, resumable so that a scheduler can run
//! many partitions in slices (a hard partition never starves an easy
//! refutation).
//!
//! Porcupine's loop: walk the entry list; at a call, try to linearize the
//! operation now (the model accepts it and the resulting (linearized set,
//! state) is new), lifting it out of the list; at a return, the operation
//! that returned was not linearized in time, so backtrack the last choice.

use super::bitset::Bitset;
use super::cache::{Cache, StateId};
use super::entries::{is_call, op_of, Entries, NIL};
use super::operation::LinOp;
use super::verdict::{Witness, WitnessStep};
use crate::models::Model;

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
    cache: Cache<M::State>,
    /// The linearized calls, with the state before each.
    calls: Vec<(u32, StateId)>,
    state: StateId,
    entry: u32,
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
        let mut cache = Cache::new(linearized.words().len());
        let state = cache.insert(&linearized, model.init()).unwrap_or(0);
        let entry = entries.first();
        Search {
            model,
            ops,
            entries,
            linearized,
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
                if let Some(next) = self
                    .model
                    .step(self.cache.state(self.state), &op.input, op.output.as_ref())
                {
                    self.linearized.set(i);
                    if let Some(id) = self.cache.insert(&self.linearized, next) {
                        self.calls.push((e, self.state));
                        self.state = id;
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
                }
                self.entry = self.entries.next(e);
            } else {
                if self.stuck.is_none() && self.calls.len() == self.best.len() {
                    self.stuck = Some(e);
                }
                let Some((call, before)) = self.calls.pop() else {
                    return Progress::Refuted;
                };
                self.linearized.clear(op_of(call));
                self.state = before;
                self.entries.unlift(call);
                self.entry = self.entries.next(call);
            }
        }
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
