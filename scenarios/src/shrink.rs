//! Shrinking a failing run: delta debugging (ddmin) over the fault plan's
//! faults, then halving the workload size, keeping every step that still
//! fails the same check. The result is an explicit plan for `replay --plan`.

use crate::plan::FaultPlan;
use crate::runner::{run, RunOutcome, RunVerdict};
use crate::scenario::Scenario;

/// A shrunk plan.
#[derive(Debug, Clone)]
pub struct Shrunk {
    pub plan: FaultPlan,
    pub original_faults: usize,
    /// The violation kinds (`checker:kind`, or `run`) the shrunk plan
    /// still shows.
    pub checks: Vec<String>,
    /// Runs spent.
    pub runs: usize,
}

/// Why a seed was not shrunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unshrunk {
    /// It does not fail.
    Passes,
    /// It hung (met the real-time limit): every run of a smaller plan
    /// could take the limit again.
    Hung,
}

/// Shrinks the failure of `seed`.
pub fn shrink(scenario: &Scenario, seed: u64, mut log: impl FnMut(String)) -> Result<Shrunk, Unshrunk> {
    let first = run(scenario, seed, None);
    if first.verdict != RunVerdict::Fail {
        return Err(Unshrunk::Passes);
    }
    if first.hung {
        log(format!(
            "seed {seed} hung; not shrunk: every run of it could take the real-time limit again"
        ));
        return Err(Unshrunk::Hung);
    }
    // The same failure: every violation kind (checker:kind) of the first
    // run, so that a smaller plan failing some other way is not taken.
    let target = failure_kinds(&first);
    let original_faults = first.plan.faults.len();
    log(format!(
        "seed {seed} fails {}; {} faults",
        target.join(","),
        original_faults
    ));
    let mut runs = 1;
    let mut fails = |p: &FaultPlan| {
        runs += 1;
        let o = run(scenario, seed, Some(p));
        let kinds = failure_kinds(&o);
        o.verdict == RunVerdict::Fail && target.iter().all(|c| kinds.contains(c))
    };
    let mut plan = first.plan.clone();
    // ddmin over the faults.
    let mut n = 2usize;
    while plan.faults.len() >= 2 {
        let len = plan.faults.len();
        let chunk = len.div_ceil(n);
        let mut reduced = false;
        for i in 0..n {
            let (a, b) = (i * chunk, ((i + 1) * chunk).min(len));
            if a >= b {
                continue;
            }
            // Try the complement of chunk i.
            let mut cand = plan.clone();
            cand.faults = plan.faults[..a].iter().chain(&plan.faults[b..]).cloned().collect();
            if fails(&cand) {
                log(format!("  {} -> {} faults", len, cand.faults.len()));
                plan = cand;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if n >= len {
                break;
            }
            n = (n * 2).min(len);
        }
    }
    if plan.faults.len() == 1 {
        let mut cand = plan.clone();
        cand.faults.clear();
        if fails(&cand) {
            plan = cand;
        }
    }
    // Shrink the workload: halve the per-client op cap while it still fails.
    let mut cap = plan.max_ops_per_client.unwrap_or(256);
    while cap > 1 {
        let mut cand = plan.clone();
        cand.max_ops_per_client = Some(cap / 2);
        if fails(&cand) {
            log(format!("  workload capped at {} ops per client", cap / 2));
            plan = cand;
            cap /= 2;
        } else {
            break;
        }
    }
    Ok(Shrunk {
        plan,
        original_faults,
        checks: target,
        runs,
    })
}

/// The violation kinds of a run, and `run` when the run itself failed.
fn failure_kinds(o: &RunOutcome) -> Vec<String> {
    let mut v = o.violation_kinds();
    if o.error.is_some() {
        v.push("run".into());
    }
    v
}
