//! The plain-text report.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::history::{History, OpId, Operation};
use crate::properties::{ms, CheckResult, Verdict};

use super::outcome_text;

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Violation => "VIOLATION",
        Verdict::Unknown => "unknown",
    }
}

/// One line: "mutex: VIOLATION (2), queue: pass, liveness: unknown".
pub fn summary_line(results: &[CheckResult]) -> String {
    results
        .iter()
        .map(|r| match r.verdict {
            Verdict::Violation => format!("{}: VIOLATION ({})", r.checker, r.violations.len()),
            v => format!("{}: {}", r.checker, verdict_word(v)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The full text report: run facts, then per checker its verdict, each
/// violation with its ops (client, session, times, outcome) and a hint,
/// figures and notes.
pub fn render_text(history: &History, results: &[CheckResult]) -> String {
    let ops: BTreeMap<OpId, Operation> = history
        .operations()
        .map(|v| v.into_iter().map(|o| (o.id, o)).collect())
        .unwrap_or_default();
    let mut s = String::new();
    let _ = writeln!(s, "zkdst check report");
    for (k, v) in &history.meta {
        let _ = writeln!(s, "  {k}: {v}");
    }
    let _ = writeln!(s, "summary: {}", summary_line(results));
    for r in results {
        let _ = writeln!(s, "\n== {}: {}", r.checker, verdict_word(r.verdict));
        for (i, v) in r.violations.iter().enumerate() {
            let _ = writeln!(s, "  {}. [{}] {}", i + 1, v.kind, v.explanation);
            for id in &v.ops {
                if let Some(o) = ops.get(id) {
                    let session = o.session.map(|x| format!(" session {x:#x}")).unwrap_or_default();
                    let done = o.completed.map(ms).unwrap_or_else(|| "pending".into());
                    let zxid = o.zxid.map(|z| format!(" zxid {z:#x}")).unwrap_or_default();
                    let _ = writeln!(
                        s,
                        "       op {id}: client {}{session}  {}  {} → {}  {}{zxid}",
                        o.client,
                        crate::properties::describe_op(&o.op),
                        ms(o.invoked),
                        done,
                        outcome_text(o)
                    );
                }
            }
            let h = v.kind.hint();
            if !h.is_empty() {
                let _ = writeln!(s, "     hint: {h}");
            }
        }
        for (k, v) in &r.figures {
            let _ = writeln!(s, "  figure {k} = {v:.2}");
        }
        for n in &r.notes {
            let _ = writeln!(s, "  note: {n}");
        }
    }
    s
}
