//! A string key/value store with get, put and append (Porcupine's kv
//! model); a get of an absent key returns "". Keys are independent.

use super::Model;
use crate::history::{Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kv;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvInput {
    Get { key: String },
    Put { key: String, value: String },
    Append { key: String, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvOutput {
    Got(String),
    Done,
}

impl Model for Kv {
    type State = String;
    type Input = KvInput;
    type Output = KvOutput;

    fn name(&self) -> &'static str {
        "kv"
    }

    fn init(&self) -> String {
        String::new()
    }

    fn step(&self, state: &String, input: &KvInput, output: Option<&KvOutput>) -> Option<String> {
        match (input, output) {
            (KvInput::Get { .. }, Some(KvOutput::Got(v))) => (v == state).then(|| state.clone()),
            (KvInput::Get { .. }, None) => Some(state.clone()),
            (KvInput::Get { .. }, Some(KvOutput::Done)) => None,
            (KvInput::Put { value, .. }, _) => Some(value.clone()),
            (KvInput::Append { value, .. }, _) => {
                let mut s = String::with_capacity(state.len() + value.len());
                s.push_str(state);
                s.push_str(value);
                Some(s)
            }
        }
    }

    fn input(&self, op: &Operation) -> Result<KvInput, &'static str> {
        match &op.op {
            Op::Get { key } => Ok(KvInput::Get { key: key.clone() }),
            Op::Put { key, value } => Ok(KvInput::Put {
                key: key.clone(),
                value: value.clone(),
            }),
            Op::Append { key, value } => Ok(KvInput::Append {
                key: key.clone(),
                value: value.clone(),
            }),
            _ => Err("get, put or append on a string key"),
        }
    }

    fn output(&self, input: &KvInput, value: &Value) -> Result<KvOutput, &'static str> {
        match (input, value) {
            (KvInput::Get { .. }, Value::Str { value }) => Ok(KvOutput::Got(value.clone())),
            (KvInput::Get { .. }, Value::Nil) => Ok(KvOutput::Got(String::new())),
            (KvInput::Get { .. }, _) => Err("a string for a get"),
            (_, Value::Unit | Value::Str { .. } | Value::Nil) => Ok(KvOutput::Done),
            _ => Err("unit for a put or append"),
        }
    }

    fn is_read(&self, input: &KvInput) -> bool {
        matches!(input, KvInput::Get { .. })
    }

    fn partition_key(&self, input: &KvInput) -> Option<String> {
        match input {
            KvInput::Get { key } | KvInput::Put { key, .. } | KvInput::Append { key, .. } => Some(key.clone()),
        }
    }

    fn describe_operation(&self, input: &KvInput, output: Option<&KvOutput>) -> String {
        match (input, output) {
            (KvInput::Get { key }, Some(KvOutput::Got(v))) => format!("get({key:?}) -> {v:?}"),
            (KvInput::Get { key }, _) => format!("get({key:?}) -> ?"),
            (KvInput::Put { key, value }, _) => format!("put({key:?}, {value:?})"),
            (KvInput::Append { key, value }, _) => format!("append({key:?}, {value:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_concatenates_and_get_sees_it() {
        let m = Kv;
        let k = || "k".to_string();
        let s = m
            .step(
                &String::new(),
                &KvInput::Append {
                    key: k(),
                    value: "x".into(),
                },
                Some(&KvOutput::Done),
            )
            .unwrap();
        let s = m
            .step(
                &s,
                &KvInput::Append {
                    key: k(),
                    value: "y".into(),
                },
                Some(&KvOutput::Done),
            )
            .unwrap();
        assert_eq!(s, "xy");
        assert!(m
            .step(&s, &KvInput::Get { key: k() }, Some(&KvOutput::Got("x".into())))
            .is_none());
        assert!(m
            .step(&s, &KvInput::Get { key: k() }, Some(&KvOutput::Got("xy".into())))
            .is_some());
        assert_eq!(
            m.step(
                &s,
                &KvInput::Put {
                    key: k(),
                    value: "z".into()
                },
                None
            )
            .unwrap(),
            "z"
        );
    }
}
