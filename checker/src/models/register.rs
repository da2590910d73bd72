//! A register of integers, absent (nil) at first: read and write, and with
//! `cas` compare-and-set. Keyed operations act on independent registers
//! (a multi-register), one partition per key.

use super::Model;
use crate::history::{Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    /// Whether compare-and-set is allowed.
    pub cas: bool,
}

impl Register {
    /// A read/write register.
    pub fn plain() -> Self {
        Register { cas: false }
    }
    /// A compare-and-set register (Jepsen's cas-register).
    pub fn cas() -> Self {
        Register { cas: true }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegisterInput {
    Read {
        key: Option<String>,
    },
    Write {
        key: Option<String>,
        value: i64,
    },
    Cas {
        key: Option<String>,
        expected: i64,
        new: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegisterOutput {
    /// What a read saw (`None`: absent).
    Read(Option<i64>),
    /// A write, or a compare-and-set that applied.
    Done,
    /// A compare-and-set that answered "not the expected value".
    CasFailed,
}

impl Model for Register {
    type State = Option<i64>;
    type Input = RegisterInput;
    type Output = RegisterOutput;

    fn name(&self) -> &'static str {
        if self.cas {
            "cas-register"
        } else {
            "register"
        }
    }

    fn init(&self) -> Option<i64> {
        None
    }

    fn step(&self, state: &Option<i64>, input: &RegisterInput, output: Option<&RegisterOutput>) -> Option<Option<i64>> {
        match (input, output) {
            (RegisterInput::Read { .. }, None) => Some(*state),
            (RegisterInput::Read { .. }, Some(RegisterOutput::Read(v))) => (v == state).then_some(*state),
            (RegisterInput::Read { .. }, Some(_)) => None,
            (RegisterInput::Write { value, .. }, _) => Some(Some(*value)),
            (RegisterInput::Cas { expected, new, .. }, out) => {
                let matches = *state == Some(*expected);
                match out {
                    None => Some(if matches { Some(*new) } else { *state }),
                    Some(RegisterOutput::Done) => matches.then_some(Some(*new)),
                    Some(RegisterOutput::CasFailed) => (!matches).then_some(*state),
                    Some(RegisterOutput::Read(_)) => None,
                }
            }
        }
    }

    fn input(&self, op: &Operation) -> Result<RegisterInput, &'static str> {
        const EXPECTED: &str = "read, write or cas of an integer register";
        match &op.op {
            Op::Read { key } => Ok(RegisterInput::Read { key: key.clone() }),
            Op::Write { key, value } => Ok(RegisterInput::Write {
                key: key.clone(),
                value: *value,
            }),
            Op::Cas { key, expected, new } if self.cas => Ok(RegisterInput::Cas {
                key: key.clone(),
                expected: *expected,
                new: *new,
            }),
            Op::Cas { .. } => Err("read or write (this register has no cas)"),
            _ => Err(EXPECTED),
        }
    }

    fn output(&self, input: &RegisterInput, value: &Value) -> Result<RegisterOutput, &'static str> {
        match (input, value) {
            (RegisterInput::Read { .. }, Value::Int { value }) => Ok(RegisterOutput::Read(Some(*value))),
            (RegisterInput::Read { .. }, Value::Nil) => Ok(RegisterOutput::Read(None)),
            (RegisterInput::Read { .. }, _) => Err("an integer or nil for a read"),
            (RegisterInput::Write { .. }, Value::Unit | Value::Bool { value: true }) => Ok(RegisterOutput::Done),
            (RegisterInput::Write { .. }, _) => Err("unit for a write"),
            (RegisterInput::Cas { .. }, Value::Unit | Value::Bool { value: true }) => Ok(RegisterOutput::Done),
            (RegisterInput::Cas { .. }, Value::Bool { value: false }) => Ok(RegisterOutput::CasFailed),
            (RegisterInput::Cas { .. }, _) => Err("unit or a boolean for a cas"),
        }
    }

    fn is_read(&self, input: &RegisterInput) -> bool {
        matches!(input, RegisterInput::Read { .. })
    }

    fn partition_key(&self, input: &RegisterInput) -> Option<String> {
        match input {
            RegisterInput::Read { key } | RegisterInput::Write { key, .. } | RegisterInput::Cas { key, .. } => {
                key.clone()
            }
        }
    }

    fn describe_operation(&self, input: &RegisterInput, output: Option<&RegisterOutput>) -> String {
        let show = |v: &Option<i64>| v.map_or("nil".to_string(), |x| x.to_string());
        match (input, output) {
            (RegisterInput::Read { .. }, Some(RegisterOutput::Read(v))) => {
                format!("read -> {}", show(v))
            }
            (RegisterInput::Read { .. }, _) => "read -> ?".to_string(),
            (RegisterInput::Write { value, .. }, o) => {
                format!("write {value}{}", if o.is_none() { " (outcome unknown)" } else { "" })
            }
            (RegisterInput::Cas { expected, new, .. }, o) => format!(
                "cas {expected} -> {new}{}",
                match o {
                    None => " (outcome unknown)",
                    Some(RegisterOutput::CasFailed) => " (failed)",
                    _ => "",
                }
            ),
        }
    }

    fn describe_state(&self, state: &Option<i64>) -> String {
        state.map_or("nil".to_string(), |v| v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cas(e: i64, n: i64) -> RegisterInput {
        RegisterInput::Cas {
            key: None,
            expected: e,
            new: n,
        }
    }

    #[test]
    fn reads_see_the_state() {
        let m = Register::cas();
        let read = RegisterInput::Read { key: None };
        assert_eq!(m.step(&None, &read, Some(&RegisterOutput::Read(None))), Some(None));
        assert_eq!(m.step(&Some(1), &read, Some(&RegisterOutput::Read(None))), None);
        assert_eq!(m.step(&Some(1), &read, None), Some(Some(1)));
    }

    #[test]
    fn cas_applies_only_when_expected() {
        let m = Register::cas();
        assert_eq!(m.step(&Some(1), &cas(1, 2), Some(&RegisterOutput::Done)), Some(Some(2)));
        assert_eq!(m.step(&Some(3), &cas(1, 2), Some(&RegisterOutput::Done)), None);
        assert_eq!(m.step(&None, &cas(1, 2), Some(&RegisterOutput::Done)), None);
        assert_eq!(
            m.step(&Some(3), &cas(1, 2), Some(&RegisterOutput::CasFailed)),
            Some(Some(3))
        );
        assert_eq!(m.step(&Some(1), &cas(1, 2), Some(&RegisterOutput::CasFailed)), None);
        // unknown outcome: applies if it can, else no effect
        assert_eq!(m.step(&Some(1), &cas(1, 2), None), Some(Some(2)));
        assert_eq!(m.step(&Some(5), &cas(1, 2), None), Some(Some(5)));
    }

    #[test]
    fn plain_register_rejects_cas() {
        let op = Operation {
            id: 1,
            client: 0,
            session: None,
            op: Op::Cas {
                key: None,
                expected: 1,
                new: 2,
            },
            invoked: 0,
            completed: None,
            outcome: None,
            zxid: None,
            background: false,
        };
        assert!(Register::plain().input(&op).is_err());
        assert!(Register::cas().input(&op).is_ok());
    }
}
