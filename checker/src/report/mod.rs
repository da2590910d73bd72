//! Reports a person can act on: a plain-text explanation of every failed
//! check (ops with client, session, times in ms, values, and a hint of what
//! the failure usually means) and a self-contained HTML timeline.

mod text;
mod timeline;

pub use text::{render_text, summary_line};
pub use timeline::render_html;

use crate::history::{Operation, Outcome};

/// "ok Token(5)", "error NoNode", "info ConnectionLoss", "pending".
pub(crate) fn outcome_text(o: &Operation) -> String {
    o.outcome
        .as_ref()
        .map(describe_outcome)
        .unwrap_or_else(|| "pending".into())
}

/// An outcome in words: "ok 5", "error reply NoNode", "unknown outcome: ConnectionLoss".
pub fn describe_outcome(outcome: &Outcome) -> String {
    outcome.describe()
}
