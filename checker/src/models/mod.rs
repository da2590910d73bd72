//! Sequential specifications of the objects a history talks about, as plain
//! pure functions (Porcupine's shape), and the mapping from a [`History`]'s
//! operations to each model's inputs and outputs.

mod counter;
mod kv;
mod mutex;
mod name;
mod queue;
mod register;
mod set;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

pub use counter::{Counter, CounterInput, CounterOutput};
pub use kv::{Kv, KvInput, KvOutput, KvState};
pub use mutex::{Mutex, MutexInput, MutexOutput, MutexState};
pub use name::ModelName;
pub use queue::{Queue, QueueInput, QueueOutput};
pub use register::{Register, RegisterInput, RegisterOutput};
pub use set::{Set, SetInput, SetOutput};

use crate::history::{History, HistoryError, Op, OpId, Operation, Outcome, Value};
use crate::linearizability::{LinOp, Partition};

/// A sequential specification.
pub trait Model: Sync {
    type State: Clone + Eq + Hash + Debug + Send;
    type Input: Clone + Eq + Hash + Debug + Send + Sync;
    type Output: Clone + Debug + Send + Sync;

    /// The model's name in reports (`cas-register`, `kv`, ...).
    fn name(&self) -> &'static str;

    fn init(&self) -> Self::State;

    /// Applies `input` to `state`; `None` if the operation cannot have
    /// returned `output` in `state`. An unknown output (`None`) is never
    /// rejected: the operation then may or may not have taken effect, and if
    /// it could not take effect in `state` it leaves `state` unchanged.
    fn step(&self, state: &Self::State, input: &Self::Input, output: Option<&Self::Output>) -> Option<Self::State>;

    /// True if `input` only observes: wherever `step` accepts it, the state
    /// after is the state before (whatever the output). The engine then
    /// linearizes such an operation as soon as it can and never tries it
    /// later instead — a promise a model must keep, or verdicts go wrong.
    fn is_read(&self, _input: &Self::Input) -> bool {
        false
    }

    /// True if every state `step` gives for `input` from a state `s` is a
    /// growth of `s` in the sense of [`Model::may_read_later`] (a read,
    /// which keeps `s`, grows it trivially). The engine uses this with
    /// `may_read_later` to drop configurations a pending read rules out.
    fn grows(&self, _input: &Self::Input) -> bool {
        false
    }

    /// For a read with a known output: false only if no state reached from
    /// `state` by steps of growing operations ([`Model::grows`]), including
    /// `state` itself, lets `step` accept the read with this output. A
    /// model must keep this promise, or verdicts go wrong; `true` is
    /// always safe.
    fn may_read_later(&self, _state: &Self::State, _read: &Self::Input, _output: &Self::Output) -> bool {
        true
    }

    /// For a read (`is_read`): whether `step` accepts it in `state`, which
    /// a model may tell without building the state after (the engine asks
    /// this instead of calling `step` for reads; debug builds check that
    /// the two agree).
    fn accepts_read(&self, state: &Self::State, input: &Self::Input, output: Option<&Self::Output>) -> bool {
        self.step(state, input, output).is_some()
    }

    /// Reads an operation of a history as an input; the error names what the
    /// model expected.
    fn input(&self, op: &Operation) -> Result<Self::Input, &'static str>;

    /// Reads a returned value as the output of `input`.
    fn output(&self, input: &Self::Input, value: &Value) -> Result<Self::Output, &'static str>;

    /// The independent object an input acts on (P-compositionality); `None`
    /// when the model is a single object.
    fn partition_key(&self, _input: &Self::Input) -> Option<String> {
        None
    }

    fn describe_operation(&self, input: &Self::Input, output: Option<&Self::Output>) -> String {
        match output {
            Some(o) => format!("{input:?} -> {o:?}"),
            None => format!("{input:?} -> ?"),
        }
    }

    fn describe_state(&self, state: &Self::State) -> String {
        format!("{state:?}")
    }
}

/// An operation of model `M`.
pub type ModelOp<M> = LinOp<<M as Model>::Input, <M as Model>::Output>;
/// The operations on one independent object of model `M`.
pub type ModelPartition<M> = Partition<<M as Model>::Input, <M as Model>::Output>;

/// Why a history cannot be checked against a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error("operation {id}: model {model} does not understand {op}; expected {expected}")]
    UnsupportedOp {
        id: OpId,
        model: &'static str,
        op: String,
        expected: &'static str,
    },
    #[error("operation {id}: model {model} cannot read the result {value} of {op}; expected {expected}")]
    UnexpectedValue {
        id: OpId,
        model: &'static str,
        op: String,
        value: String,
        expected: &'static str,
    },
}

/// Turns a history into the model's operations, one partition per
/// independent object (in key order). Operations that failed (definitely
/// did not happen) are left out; indeterminate ones have no return time and
/// an unknown output.
pub fn partitions<M: Model>(model: &M, history: &History) -> Result<Vec<ModelPartition<M>>, ModelError> {
    let mut by_key: BTreeMap<Option<String>, Vec<ModelOp<M>>> = BTreeMap::new();
    for op in history.operations()? {
        if !op.may_have_happened() {
            continue;
        }
        let input = model.input(&op).map_err(|expected| ModelError::UnsupportedOp {
            id: op.id,
            model: model.name(),
            op: op_name(&op.op),
            expected,
        })?;
        let (ret, output) = match &op.outcome {
            Some(Outcome::Ok { value }) => {
                let out = model
                    .output(&input, value)
                    .map_err(|expected| ModelError::UnexpectedValue {
                        id: op.id,
                        model: model.name(),
                        op: op_name(&op.op),
                        value: format!("{value:?}"),
                        expected,
                    })?;
                (op.completed, Some(out))
            }
            _ => (None, None),
        };
        let key = model.partition_key(&input);
        by_key.entry(key).or_default().push(LinOp {
            id: op.id,
            client: op.client,
            call: op.invoked,
            ret,
            input,
            output,
        });
    }
    Ok(by_key
        .into_iter()
        .map(|(k, ops)| Partition {
            label: k.unwrap_or_default(),
            ops,
        })
        .collect())
}

fn op_name(op: &Op) -> String {
    let s = format!("{op:?}");
    if s.len() > 80 {
        let cut = (0..=77).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
        format!("{}...", &s[..cut])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Event;

    #[test]
    fn splits_by_key_drops_failures_and_marks_unknowns() {
        let mut h = History::new();
        let put = |k: &str| Op::Put {
            key: k.into(),
            value: "v".into(),
        };
        h.events.push(Event::Invoke {
            id: 1,
            time: 1,
            client: 0,
            session: None,
            op: put("b"),
            background: false,
        });
        h.events.push(Event::Invoke {
            id: 2,
            time: 2,
            client: 1,
            session: None,
            op: put("a"),
            background: false,
        });
        h.events.push(Event::Invoke {
            id: 3,
            time: 3,
            client: 2,
            session: None,
            op: put("a"),
            background: false,
        });
        h.events.push(Event::Complete {
            id: 1,
            time: 4,
            client: 0,
            outcome: Outcome::Ok { value: Value::Unit },
            zxid: None,
        });
        h.events.push(Event::Complete {
            id: 2,
            time: 5,
            client: 1,
            outcome: Outcome::Fail { error: "x".into() },
            zxid: None,
        });
        h.events.push(Event::Complete {
            id: 3,
            time: 6,
            client: 2,
            outcome: Outcome::Info { error: "x".into() },
            zxid: None,
        });
        let parts = partitions(&Kv, &h).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].label, "a");
        assert_eq!(parts[0].ops.len(), 1);
        assert_eq!(parts[0].ops[0].id, 3);
        assert!(parts[0].ops[0].is_indeterminate());
        assert_eq!(parts[1].ops[0].ret, Some(4));
    }

    #[test]
    fn names_the_op_a_model_does_not_understand() {
        let mut h = History::new();
        h.events.push(Event::Invoke {
            id: 7,
            time: 1,
            client: 0,
            session: None,
            op: Op::Sync { path: "/".into() },
            background: false,
        });
        let err = partitions(&Register::cas(), &h).unwrap_err();
        assert!(matches!(err, ModelError::UnsupportedOp { id: 7, .. }), "{err}");
        assert!(err.to_string().contains("Sync"), "{err}");
    }
}
