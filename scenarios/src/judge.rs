//! Judging a recorded run: the scenario's checkers over its history, the
//! verdict, and everything a run produced (`RunOutcome`) — shared by the
//! simulated runs (`runner`) and the served ones (`serve::external`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use zkdst_checker::history::History;
use zkdst_checker::properties::{self, progress, CheckResult, Verdict, PARAMS_META_KEY};

use crate::plan::FaultPlan;
use crate::profile::Phases;
use crate::scenario::Scenario;
use crate::stats::{self, Stats};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    Pass,
    /// A checker found a violation, or the run itself failed (panic,
    /// deadlock, no leader).
    Fail,
    /// No violation, but some checker could not decide.
    Unknown,
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub scenario: String,
    pub seed: u64,
    pub history: History,
    pub results: Vec<CheckResult>,
    pub verdict: RunVerdict,
    /// Failure of the run itself (panic, no initial leader), if any.
    pub error: Option<String>,
    /// The run met its real-time limit (a task spinning): its error says
    /// so, and re-running it (to shrink) would only meet the limit again.
    pub hung: bool,
    pub plan: FaultPlan,
    pub stats: Stats,
    pub fingerprint: u64,
    pub wall: Duration,
    /// Where `wall` went (for `zkdst fuzz --profile`).
    pub phases: Phases,
}

impl RunOutcome {
    /// The checkers (or `run`) that failed, sorted.
    pub fn failed_checks(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .results
            .iter()
            .filter(|r| r.verdict == Verdict::Violation)
            .map(|r| r.checker.clone())
            .collect();
        if self.error.is_some() {
            v.push(if self.hung { "hung" } else { "run" }.into());
        }
        v.sort();
        v
    }

    /// The violation kinds found.
    pub fn violation_kinds(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .results
            .iter()
            .flat_map(|r| r.violations.iter().map(move |x| format!("{}:{}", r.checker, x.kind)))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

pub(crate) struct SimResult {
    pub history: History,
    pub stats: Stats,
    pub error: Option<String>,
}

pub(crate) fn finish(
    scenario: &Scenario,
    seed: u64,
    plan: FaultPlan,
    sim: SimResult,
    started: std::time::Instant,
    mut phases: Phases,
    mut mark: std::time::Instant,
) -> RunOutcome {
    let SimResult {
        mut history,
        mut stats,
        error,
    } = sim;
    let mut params = scenario.check.params.clone();
    params.min_progress = scenario.check.min_progress;
    params.permits = Some(scenario.workload.permits);
    // Recorded so that `zkdst check` judges the stored history as this run did.
    history.meta.insert(PARAMS_META_KEY.into(), params.to_meta());
    let mut results = Vec::new();
    if error.is_none() {
        let params = &params;
        let ops = history.operations().unwrap_or_default();
        phases.lap("pair", &mut mark);
        stats::analyse(&history, &ops, &mut stats);
        phases.lap("stats", &mut mark);
        for name in &scenario.check.checkers {
            // Over the operations already paired (a malformed history
            // still gets its progress judged, as an empty one).
            let r = match properties::run_ops(name, &history, &ops, params) {
                Ok(r) => r,
                Err(e) => CheckResult::unknown(name, e.to_string()),
            };
            results.push(r);
            phases.lap(format!("check:{name}"), &mut mark);
        }
        if !scenario.check.checkers.iter().any(|c| c == "progress") {
            results.push(progress::check_ops(&history, &ops, params));
            phases.lap("check:progress", &mut mark);
        }
    }
    let verdict = verdict_of(error.is_some(), &results);
    let fingerprint = history.fingerprint();
    phases.lap("fingerprint", &mut mark);
    RunOutcome {
        scenario: scenario.name.clone(),
        seed,
        fingerprint,
        history,
        results,
        verdict,
        error,
        hung: false,
        plan,
        stats,
        wall: started.elapsed(),
        phases,
    }
}

/// A run's verdict: Fail on a run error or any violation; Unknown if a
/// checker could not decide; else Pass.
pub fn verdict_of(error: bool, results: &[CheckResult]) -> RunVerdict {
    if error || results.iter().any(|r| r.verdict == Verdict::Violation) {
        RunVerdict::Fail
    } else if results.iter().any(|r| r.verdict == Verdict::Unknown) {
        RunVerdict::Unknown
    } else {
        RunVerdict::Pass
    }
}
