//! A mutex that knows its owner and its fencing tokens: acquire succeeds
//! only when free and returns a token greater than every token issued
//! before; release succeeds only for the owner. Locks with different names
//! are independent.

use super::Model;
use crate::history::{ClientId, Op, Operation, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mutex;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MutexInput {
    Acquire { lock: String, client: ClientId },
    Release { lock: String, client: ClientId },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MutexOutput {
    /// Granted, with its fencing token if the history records one.
    Acquired(Option<i64>),
    Released,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MutexState {
    pub owner: Option<ClientId>,
    /// Every token issued so far is below this: the next must be at least it.
    pub next_token: i64,
}

impl Model for Mutex {
    type State = MutexState;
    type Input = MutexInput;
    type Output = MutexOutput;

    fn name(&self) -> &'static str {
        "mutex"
    }

    fn init(&self) -> MutexState {
        MutexState {
            owner: None,
            next_token: i64::MIN,
        }
    }

    fn step(&self, state: &MutexState, input: &MutexInput, output: Option<&MutexOutput>) -> Option<MutexState> {
        match (input, output) {
            (MutexInput::Acquire { client, .. }, Some(MutexOutput::Acquired(token))) => {
                if state.owner.is_some() {
                    return None;
                }
                let next_token = match token {
                    Some(t) if *t < state.next_token => return None,
                    Some(t) => t.saturating_add(1),
                    None => state.next_token,
                };
                Some(MutexState {
                    owner: Some(*client),
                    next_token,
                })
            }
            // Unknown: granted if free (the smallest token it could have had
            // is `next_token`), otherwise no effect.
            (MutexInput::Acquire { client, .. }, None) => Some(match state.owner {
                None => MutexState {
                    owner: Some(*client),
                    next_token: state.next_token.saturating_add(1),
                },
                Some(_) => state.clone(),
            }),
            (MutexInput::Release { client, .. }, Some(MutexOutput::Released)) => (state.owner == Some(*client))
                .then_some(MutexState {
                    owner: None,
                    next_token: state.next_token,
                }),
            (MutexInput::Release { client, .. }, None) => Some(if state.owner == Some(*client) {
                MutexState {
                    owner: None,
                    next_token: state.next_token,
                }
            } else {
                state.clone()
            }),
            _ => None,
        }
    }

    fn input(&self, op: &Operation) -> Result<MutexInput, &'static str> {
        match &op.op {
            Op::Acquire { lock, shared: false } => Ok(MutexInput::Acquire {
                lock: lock.clone(),
                client: op.client,
            }),
            Op::Release { lock } => Ok(MutexInput::Release {
                lock: lock.clone(),
                client: op.client,
            }),
            Op::Acquire { shared: true, .. } => Err("an exclusive acquire (this mutex has no shared side)"),
            _ => Err("acquire or release"),
        }
    }

    fn output(&self, input: &MutexInput, value: &Value) -> Result<MutexOutput, &'static str> {
        match (input, value) {
            (MutexInput::Acquire { .. }, Value::Token { token } | Value::Int { value: token }) => {
                Ok(MutexOutput::Acquired(Some(*token)))
            }
            (MutexInput::Acquire { .. }, Value::Unit | Value::Nil) => Ok(MutexOutput::Acquired(None)),
            (MutexInput::Acquire { .. }, _) => Err("a fencing token (or unit) for an acquire"),
            (MutexInput::Release { .. }, Value::Unit | Value::Nil) => Ok(MutexOutput::Released),
            (MutexInput::Release { .. }, _) => Err("unit for a release"),
        }
    }

    fn partition_key(&self, input: &MutexInput) -> Option<String> {
        match input {
            MutexInput::Acquire { lock, .. } | MutexInput::Release { lock, .. } => Some(lock.clone()),
        }
    }

    fn describe_operation(&self, input: &MutexInput, output: Option<&MutexOutput>) -> String {
        match (input, output) {
            (MutexInput::Acquire { client, .. }, Some(MutexOutput::Acquired(Some(t)))) => {
                format!("client {client} acquires, token {t}")
            }
            (MutexInput::Acquire { client, .. }, Some(_)) => format!("client {client} acquires"),
            (MutexInput::Acquire { client, .. }, None) => {
                format!("client {client} acquires (outcome unknown)")
            }
            (MutexInput::Release { client, .. }, Some(_)) => format!("client {client} releases"),
            (MutexInput::Release { client, .. }, None) => {
                format!("client {client} releases (outcome unknown)")
            }
        }
    }

    fn describe_state(&self, state: &MutexState) -> String {
        match state.owner {
            Some(c) => format!("held by client {c}"),
            None => "free".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acq(c: ClientId) -> MutexInput {
        MutexInput::Acquire {
            lock: "l".into(),
            client: c,
        }
    }
    fn rel(c: ClientId) -> MutexInput {
        MutexInput::Release {
            lock: "l".into(),
            client: c,
        }
    }

    #[test]
    fn one_owner_at_a_time_and_tokens_increase() {
        let m = Mutex;
        let s = m
            .step(&m.init(), &acq(1), Some(&MutexOutput::Acquired(Some(5))))
            .unwrap();
        assert!(
            m.step(&s, &acq(2), Some(&MutexOutput::Acquired(Some(6)))).is_none(),
            "granted twice"
        );
        assert!(
            m.step(&s, &rel(2), Some(&MutexOutput::Released)).is_none(),
            "released by non-owner"
        );
        let s = m.step(&s, &rel(1), Some(&MutexOutput::Released)).unwrap();
        assert!(
            m.step(&s, &acq(2), Some(&MutexOutput::Acquired(Some(5)))).is_none(),
            "token reused"
        );
        let s = m.step(&s, &acq(2), None).unwrap();
        assert_eq!(s.owner, Some(2));
        let s = m.step(&s, &rel(2), Some(&MutexOutput::Released)).unwrap();
        assert!(
            m.step(&s, &acq(3), Some(&MutexOutput::Acquired(Some(6)))).is_none(),
            "unknown acquire took 6 at least"
        );
        assert!(m.step(&s, &acq(3), Some(&MutexOutput::Acquired(Some(7)))).is_some());
    }
}
