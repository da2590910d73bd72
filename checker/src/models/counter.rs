//! A counter starting at 0: increment by a delta (returning the new value,
//! when known) and read. Counters with different names are independent.

use super::Model;
use crate::history::{Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counter;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CounterInput {
    Increment { counter: String, delta: i64 },
    Read { counter: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CounterOutput {
    /// The value after an increment, or the value read.
    Value(i64),
    /// An increment that did not report the new value.
    Done,
}

impl Model for Counter {
    type State = i64;
    type Input = CounterInput;
    type Output = CounterOutput;

    fn name(&self) -> &'static str {
        "counter"
    }

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, state: &i64, input: &CounterInput, output: Option<&CounterOutput>) -> Option<i64> {
        match (input, output) {
            (CounterInput::Increment { delta, .. }, None | Some(CounterOutput::Done)) => {
                Some(state.wrapping_add(*delta))
            }
            (CounterInput::Increment { delta, .. }, Some(CounterOutput::Value(v))) => {
                let next = state.wrapping_add(*delta);
                (next == *v).then_some(next)
            }
            (CounterInput::Read { .. }, None) => Some(*state),
            (CounterInput::Read { .. }, Some(CounterOutput::Value(v))) => (v == state).then_some(*state),
            (CounterInput::Read { .. }, Some(CounterOutput::Done)) => None,
        }
    }

    fn input(&self, op: &Operation) -> Result<CounterInput, &'static str> {
        match &op.op {
            Op::Increment { counter, delta } => Ok(CounterInput::Increment {
                counter: counter.clone(),
                delta: *delta,
            }),
            Op::CounterRead { counter } => Ok(CounterInput::Read {
                counter: counter.clone(),
            }),
            _ => Err("increment or counter read"),
        }
    }

    fn output(&self, input: &CounterInput, value: &Value) -> Result<CounterOutput, &'static str> {
        match (input, value) {
            (_, Value::Int { value }) => Ok(CounterOutput::Value(*value)),
            (CounterInput::Increment { .. }, Value::Unit) => Ok(CounterOutput::Done),
            _ => Err("an integer"),
        }
    }

    fn is_read(&self, input: &CounterInput) -> bool {
        matches!(input, CounterInput::Read { .. })
    }

    fn partition_key(&self, input: &CounterInput) -> Option<String> {
        match input {
            CounterInput::Increment { counter, .. } | CounterInput::Read { counter } => Some(counter.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increments_return_the_new_value() {
        let m = Counter;
        let c = || "c".to_string();
        let s = m
            .step(
                &0,
                &CounterInput::Increment { counter: c(), delta: 2 },
                Some(&CounterOutput::Value(2)),
            )
            .unwrap();
        assert!(m
            .step(
                &s,
                &CounterInput::Increment { counter: c(), delta: 1 },
                Some(&CounterOutput::Value(2))
            )
            .is_none());
        let s = m
            .step(&s, &CounterInput::Increment { counter: c(), delta: 1 }, None)
            .unwrap();
        assert_eq!(
            m.step(&s, &CounterInput::Read { counter: c() }, Some(&CounterOutput::Value(3))),
            Some(3)
        );
        assert_eq!(
            m.step(&s, &CounterInput::Read { counter: c() }, Some(&CounterOutput::Value(2))),
            None
        );
    }
}
