//! Models by name, as the command line spells them.

use std::fmt;
use std::str::FromStr;

use crate::history::{History, Op};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelName {
    Register,
    CasRegister,
    MultiRegister,
    Kv,
    Queue,
    Set,
    Counter,
    Mutex,
}

impl ModelName {
    pub const ALL: [ModelName; 8] = [
        ModelName::Register,
        ModelName::CasRegister,
        ModelName::MultiRegister,
        ModelName::Kv,
        ModelName::Queue,
        ModelName::Set,
        ModelName::Counter,
        ModelName::Mutex,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::Register => "register",
            ModelName::CasRegister => "cas-register",
            ModelName::MultiRegister => "multi-register",
            ModelName::Kv => "kv",
            ModelName::Queue => "queue",
            ModelName::Set => "set",
            ModelName::Counter => "counter",
            ModelName::Mutex => "mutex",
        }
    }

    /// Guesses the model from the first operation a history holds.
    pub fn infer(history: &History) -> Option<ModelName> {
        history.events.iter().find_map(|e| match e {
            crate::history::Event::Invoke { op, .. } => match op {
                Op::Read { key: Some(_) } | Op::Write { key: Some(_), .. } | Op::Cas { key: Some(_), .. } => {
                    Some(ModelName::MultiRegister)
                }
                Op::Read { .. } | Op::Write { .. } | Op::Cas { .. } => Some(ModelName::CasRegister),
                Op::Get { .. } | Op::Put { .. } | Op::Append { .. } => Some(ModelName::Kv),
                Op::Enqueue { .. } | Op::Dequeue { .. } => Some(ModelName::Queue),
                Op::Join { .. } | Op::Leave { .. } | Op::Members { .. } => Some(ModelName::Set),
                Op::Increment { .. } | Op::CounterRead { .. } => Some(ModelName::Counter),
                Op::Acquire { .. } | Op::Release { .. } => Some(ModelName::Mutex),
                _ => None,
            },
            _ => None,
        })
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model {0:?}; expected one of register, cas-register, multi-register, kv, queue, set, counter, mutex")]
pub struct UnknownModel(pub String);

impl FromStr for ModelName {
    type Err = UnknownModel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ModelName::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownModel(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in ModelName::ALL {
            assert_eq!(m.as_str().parse::<ModelName>(), Ok(m));
        }
        assert!("lock".parse::<ModelName>().is_err());
    }
}
