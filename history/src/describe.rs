//! Operations and outcomes in words, for traces and reports: the recorder
//! logs them as it records, the checkers' reports quote them.

use crate::{Op, Outcome, Value};

impl Op {
    /// "acquire lock=/l shared=false": the op's JSON fields, compactly.
    pub fn describe(&self) -> String {
        let Ok(serde_json::Value::Object(map)) = serde_json::to_value(self) else {
            return format!("{self:?}");
        };
        let name = map.get("f").and_then(|v| v.as_str()).unwrap_or("op").to_string();
        let mut parts = vec![name];
        for (k, v) in map.iter().filter(|(k, _)| k.as_str() != "f") {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            parts.push(format!("{k}={text}"));
        }
        parts.join(" ")
    }
}

impl Outcome {
    /// "ok 5", "error reply NoNode", "unknown outcome: ConnectionLoss".
    pub fn describe(&self) -> String {
        match self {
            Outcome::Ok {
                value: Value::Error { code, .. },
            } => format!("error reply {code}"),
            Outcome::Ok { value: Value::Unit } => "ok ".to_string(),
            Outcome::Ok { value } => format!("ok {}", serde_json::to_string(value).unwrap_or_default()),
            Outcome::Fail { error } => format!("failed (not applied): {error}"),
            Outcome::Info { error } => format!("unknown outcome: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_and_outcomes_in_words() {
        let acquire = Op::Acquire {
            lock: "/l".into(),
            shared: false,
        };
        assert_eq!(acquire.describe(), "acquire lock=/l shared=false");
        assert_eq!(Outcome::Ok { value: Value::Unit }.describe(), "ok ");
        let lost = Outcome::Info {
            error: "ConnectionLoss".into(),
        };
        assert_eq!(lost.describe(), "unknown outcome: ConnectionLoss");
    }
}
