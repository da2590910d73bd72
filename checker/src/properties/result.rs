//! The one shape every checker returns: a verdict, the violations that
//! justify it, and measured figures that are not verdicts (e.g. the herd
//! effect's notifications per release).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::history::{ClientId, OpId, Operation, Time};

use super::ViolationKind;

/// What a checker concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every property held on this history.
    Pass,
    /// At least one property was definitely violated.
    Violation,
    /// The history does not allow a decision (malformed, or the relevant
    /// part was not observable); `notes` says why.
    Unknown,
}

/// One definite violation of a property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// What was violated (written as its name, e.g. `mutex-overlap`).
    pub kind: ViolationKind,
    /// A sentence a person can act on: which clients, which ops, which times.
    pub explanation: String,
    /// The operations involved (history op ids).
    #[serde(default)]
    pub ops: Vec<OpId>,
    /// The clients involved.
    #[serde(default)]
    pub clients: Vec<ClientId>,
    /// The instants that matter, virtual nanoseconds.
    #[serde(default)]
    pub times: Vec<Time>,
}

impl Violation {
    pub fn new(kind: ViolationKind, explanation: impl Into<String>) -> Self {
        Violation {
            kind,
            explanation: explanation.into(),
            ops: Vec::new(),
            clients: Vec::new(),
            times: Vec::new(),
        }
    }
    pub fn ops(mut self, ops: impl IntoIterator<Item = OpId>) -> Self {
        self.ops.extend(ops);
        self
    }
    pub fn clients(mut self, clients: impl IntoIterator<Item = ClientId>) -> Self {
        for c in clients {
            if !self.clients.contains(&c) {
                self.clients.push(c);
            }
        }
        self
    }
    pub fn times(mut self, times: impl IntoIterator<Item = Time>) -> Self {
        self.times.extend(times);
        self
    }

    /// A violation one operation shows by itself (a report the recipe made
    /// to its application): that op, its client, its invocation.
    pub fn of_op(kind: ViolationKind, explanation: impl Into<String>, o: &Operation) -> Self {
        Violation::new(kind, explanation)
            .ops([o.id])
            .clients([o.client])
            .times([o.invoked])
    }

    /// As [`Violation::of_op`], for an op judged by a state its client
    /// had been in since `since`: both times.
    pub fn of_op_since(kind: ViolationKind, explanation: impl Into<String>, o: &Operation, since: Time) -> Self {
        Violation::new(kind, explanation)
            .ops([o.id])
            .clients([o.client])
            .times([since, o.invoked])
    }

    /// A violation two ops of one client show together: a report `then`
    /// that contradicts an earlier one, `first`; from `from` to `to`.
    pub fn of_pair(
        kind: ViolationKind,
        explanation: impl Into<String>,
        first: &Operation,
        then: &Operation,
        from: Time,
        to: Time,
    ) -> Self {
        Violation::new(kind, explanation)
            .ops([first.id, then.id])
            .clients([then.client])
            .times([from, to])
    }
}

/// What a checker returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The registry name of the checker (`mutex`, `zk-consistency`, ...).
    pub checker: String,
    pub verdict: Verdict,
    pub violations: Vec<Violation>,
    /// Measured figures: counts, ratios. Never verdicts.
    #[serde(default)]
    pub figures: BTreeMap<String, f64>,
    /// What was not checked and why, assumptions made.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Violations beyond this many per checker are counted, not listed.
pub const MAX_LISTED_VIOLATIONS: usize = 50;

impl CheckResult {
    pub fn new(checker: &str) -> Self {
        CheckResult {
            checker: checker.to_string(),
            verdict: Verdict::Pass,
            violations: Vec::new(),
            figures: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// A result for a history the checker could not read.
    pub fn unknown(checker: &str, why: impl Into<String>) -> Self {
        let mut r = CheckResult::new(checker);
        r.verdict = Verdict::Unknown;
        r.notes.push(why.into());
        r
    }

    /// Records a violation; the verdict becomes `Violation`.
    pub fn violation(&mut self, v: Violation) {
        self.verdict = Verdict::Violation;
        if self.violations.len() < MAX_LISTED_VIOLATIONS {
            self.violations.push(v);
        } else {
            *self.figures.entry("violations_not_listed".into()).or_insert(0.0) += 1.0;
        }
    }

    /// Marks the result undecided unless a violation was already found.
    pub fn undecided(&mut self, why: impl Into<String>) {
        if self.verdict == Verdict::Pass {
            self.verdict = Verdict::Unknown;
        }
        self.notes.push(why.into());
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    pub fn figure(&mut self, name: &str, value: f64) {
        self.figures.insert(name.to_string(), value);
    }

    pub fn is_violation(&self) -> bool {
        self.verdict == Verdict::Violation
    }

    /// All violation kinds, for tests and summaries.
    pub fn kinds(&self) -> Vec<&str> {
        self.violations.iter().map(|v| v.kind.name()).collect()
    }
}

/// Formats a virtual time (ns) as milliseconds for explanations.
pub fn ms(t: Time) -> String {
    if t == Time::MAX {
        return "end of history".to_string();
    }
    let whole = t / 1_000_000;
    let frac = (t % 1_000_000) / 1_000;
    if frac == 0 {
        format!("{whole} ms")
    } else {
        format!("{whole}.{frac:03} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violation_sets_verdict_and_caps_list() {
        let mut r = CheckResult::new("x");
        assert_eq!(r.verdict, Verdict::Pass);
        for _ in 0..MAX_LISTED_VIOLATIONS + 3 {
            r.violation(Violation::new(ViolationKind::Stuck, "e"));
        }
        assert_eq!(r.verdict, Verdict::Violation);
        assert_eq!(r.violations.len(), MAX_LISTED_VIOLATIONS);
        assert_eq!(r.figures["violations_not_listed"], 3.0);
        r.undecided("late");
        assert_eq!(r.verdict, Verdict::Violation);
    }

    #[test]
    fn formats_ms() {
        assert_eq!(ms(5_000_000), "5 ms");
        assert_eq!(ms(5_250_000), "5.250 ms");
        assert_eq!(ms(Time::MAX), "end of history");
    }
}
