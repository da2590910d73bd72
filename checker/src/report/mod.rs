//! Reports a person can act on: a plain-text explanation of every failed
//! check (ops with client, session, times in ms, values, and a hint of what
//! the failure usually means) and a self-contained HTML timeline.

mod text;
mod timeline;

pub use text::{render_text, summary_line};
pub use timeline::render_html;

use crate::history::{Operation, Outcome, Value};

/// "ok Token(5)", "error NoNode", "info ConnectionLoss", "pending".
pub(crate) fn outcome_text(o: &Operation) -> String {
    o.outcome
        .as_ref()
        .map(describe_outcome)
        .unwrap_or_else(|| "pending".into())
}

/// An outcome in words: "ok 5", "error reply NoNode", "unknown outcome: ConnectionLoss".
pub fn describe_outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ok {
            value: Value::Error { code, .. },
        } => format!("error reply {code}"),
        Outcome::Ok { value } => format!("ok {}", value_text(value)),
        Outcome::Fail { error } => format!("failed (not applied): {error}"),
        Outcome::Info { error } => format!("unknown outcome: {error}"),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Unit => String::new(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
