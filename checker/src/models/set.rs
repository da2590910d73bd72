//! A set of strings: add, remove, read all members. Built on the history's
//! group membership operations (join, leave, members); groups are
//! independent.

use std::collections::BTreeSet;

use super::Model;
use crate::history::{Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Set;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SetInput {
    Add { set: String, member: String },
    Remove { set: String, member: String },
    Read { set: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SetOutput {
    Done,
    Members(BTreeSet<String>),
}

impl Model for Set {
    type State = BTreeSet<String>;
    type Input = SetInput;
    type Output = SetOutput;

    fn name(&self) -> &'static str {
        "set"
    }

    fn init(&self) -> BTreeSet<String> {
        BTreeSet::new()
    }

    fn step(&self, state: &BTreeSet<String>, input: &SetInput, output: Option<&SetOutput>) -> Option<BTreeSet<String>> {
        match (input, output) {
            (SetInput::Add { member, .. }, None | Some(SetOutput::Done)) => {
                let mut s = state.clone();
                s.insert(member.clone());
                Some(s)
            }
            (SetInput::Remove { member, .. }, None | Some(SetOutput::Done)) => {
                let mut s = state.clone();
                s.remove(member);
                Some(s)
            }
            (SetInput::Read { .. }, None) => Some(state.clone()),
            (SetInput::Read { .. }, Some(SetOutput::Members(m))) => (m == state).then(|| state.clone()),
            _ => None,
        }
    }

    fn input(&self, op: &Operation) -> Result<SetInput, &'static str> {
        match &op.op {
            Op::Join { group, member } => Ok(SetInput::Add {
                set: group.clone(),
                member: member.clone(),
            }),
            Op::Leave { group, member } => Ok(SetInput::Remove {
                set: group.clone(),
                member: member.clone(),
            }),
            Op::Members { group, .. } => Ok(SetInput::Read { set: group.clone() }),
            _ => Err("join (add), leave (remove) or members (read)"),
        }
    }

    fn output(&self, input: &SetInput, value: &Value) -> Result<SetOutput, &'static str> {
        match (input, value) {
            (SetInput::Read { .. }, Value::Names { names: members } | Value::View { members, .. }) => {
                Ok(SetOutput::Members(members.iter().cloned().collect()))
            }
            (SetInput::Read { .. }, _) => Err("names or a view for a members read"),
            (_, Value::Unit) => Ok(SetOutput::Done),
            _ => Err("unit for a join or leave"),
        }
    }

    fn is_read(&self, input: &SetInput) -> bool {
        matches!(input, SetInput::Read { .. })
    }

    fn partition_key(&self, input: &SetInput) -> Option<String> {
        match input {
            SetInput::Add { set, .. } | SetInput::Remove { set, .. } | SetInput::Read { set } => Some(set.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_see_exact_membership() {
        let m = Set;
        let g = || "g".to_string();
        let s = m
            .step(
                &m.init(),
                &SetInput::Add {
                    set: g(),
                    member: "a".into(),
                },
                Some(&SetOutput::Done),
            )
            .unwrap();
        let s = m
            .step(
                &s,
                &SetInput::Add {
                    set: g(),
                    member: "b".into(),
                },
                None,
            )
            .unwrap();
        let s = m
            .step(
                &s,
                &SetInput::Remove {
                    set: g(),
                    member: "a".into(),
                },
                Some(&SetOutput::Done),
            )
            .unwrap();
        let read = SetInput::Read { set: g() };
        assert!(m
            .step(&s, &read, Some(&SetOutput::Members(["b".to_string()].into())))
            .is_some());
        assert!(m
            .step(
                &s,
                &read,
                Some(&SetOutput::Members(["a".to_string(), "b".to_string()].into()))
            )
            .is_none());
    }
}
