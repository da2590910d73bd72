//! A FIFO queue: enqueue an item, dequeue the oldest (`None` when empty).
//! Queues with different names are independent.

use std::collections::VecDeque;

use super::Model;
use crate::history::{Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Queue;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueueInput {
    Enqueue { queue: String, item: String },
    Dequeue { queue: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QueueOutput {
    Enqueued,
    /// The item taken, `None` if the queue was empty.
    Dequeued(Option<String>),
}

impl Model for Queue {
    type State = VecDeque<String>;
    type Input = QueueInput;
    type Output = QueueOutput;

    fn name(&self) -> &'static str {
        "queue"
    }

    fn init(&self) -> VecDeque<String> {
        VecDeque::new()
    }

    fn step(
        &self,
        state: &VecDeque<String>,
        input: &QueueInput,
        output: Option<&QueueOutput>,
    ) -> Option<VecDeque<String>> {
        match (input, output) {
            (QueueInput::Enqueue { item, .. }, None | Some(QueueOutput::Enqueued)) => {
                let mut s = state.clone();
                s.push_back(item.clone());
                Some(s)
            }
            (QueueInput::Dequeue { .. }, None) => {
                let mut s = state.clone();
                s.pop_front();
                Some(s)
            }
            (QueueInput::Dequeue { .. }, Some(QueueOutput::Dequeued(got))) => {
                if state.front() != got.as_ref() {
                    return None;
                }
                let mut s = state.clone();
                s.pop_front();
                Some(s)
            }
            _ => None,
        }
    }

    fn input(&self, op: &Operation) -> Result<QueueInput, &'static str> {
        match &op.op {
            Op::Enqueue { queue, item, .. } => Ok(QueueInput::Enqueue {
                queue: queue.clone(),
                item: item.clone(),
            }),
            Op::Dequeue { queue } => Ok(QueueInput::Dequeue { queue: queue.clone() }),
            _ => Err("enqueue or dequeue"),
        }
    }

    fn output(&self, input: &QueueInput, value: &Value) -> Result<QueueOutput, &'static str> {
        match (input, value) {
            (QueueInput::Enqueue { .. }, Value::Unit) => Ok(QueueOutput::Enqueued),
            (QueueInput::Enqueue { .. }, _) => Err("unit for an enqueue"),
            (QueueInput::Dequeue { .. }, Value::Item { item, .. }) => Ok(QueueOutput::Dequeued(item.clone())),
            (QueueInput::Dequeue { .. }, Value::Str { value }) => Ok(QueueOutput::Dequeued(Some(value.clone()))),
            (QueueInput::Dequeue { .. }, Value::Nil) => Ok(QueueOutput::Dequeued(None)),
            (QueueInput::Dequeue { .. }, _) => Err("an item or nil for a dequeue"),
        }
    }

    fn partition_key(&self, input: &QueueInput) -> Option<String> {
        match input {
            QueueInput::Enqueue { queue, .. } | QueueInput::Dequeue { queue } => Some(queue.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dequeues_in_order_and_none_when_empty() {
        let m = Queue;
        let q = || "q".to_string();
        let enq = |i: &str| QueueInput::Enqueue {
            queue: q(),
            item: i.into(),
        };
        let deq = QueueInput::Dequeue { queue: q() };
        let s = m.step(&m.init(), &enq("a"), Some(&QueueOutput::Enqueued)).unwrap();
        let s = m.step(&s, &enq("b"), Some(&QueueOutput::Enqueued)).unwrap();
        assert!(m
            .step(&s, &deq, Some(&QueueOutput::Dequeued(Some("b".into()))))
            .is_none());
        let s = m
            .step(&s, &deq, Some(&QueueOutput::Dequeued(Some("a".into()))))
            .unwrap();
        let s = m.step(&s, &deq, None).unwrap();
        assert!(m
            .step(&s, &deq, Some(&QueueOutput::Dequeued(Some("b".into()))))
            .is_none());
        assert!(m.step(&s, &deq, Some(&QueueOutput::Dequeued(None))).is_some());
    }
}
