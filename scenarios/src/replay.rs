//! What `zkdst run`, `replay` and `shrink` print and write about one run,
//! shared with `fuzz --store` (which writes the same files for every
//! failing seed): the report, the history and timeline files, the replay
//! lines, and a replay with its trace collected.

use std::path::Path;

use zkdst_checker::history::Encoding;
use zkdst_checker::report::{render_html, render_text, summary_line};

use crate::error::WriteError;
use crate::plan::FaultPlan;
use crate::runner::{repro_line, run, RunOutcome, RunVerdict, COMMIT};
use crate::scenario::Scenario;
use crate::trace::{self, TraceLevel};

/// The verdict line, the checkers' summary, what was exercised and, for a
/// run that did not pass, the violations, the fault plan and (on failure)
/// the replay line.
pub fn report_text(path: &Path, sc: &Scenario, o: &RunOutcome) -> String {
    let verdict = match o.verdict {
        RunVerdict::Pass => "PASS",
        RunVerdict::Fail => "FAIL",
        RunVerdict::Unknown => "UNKNOWN",
    };
    let mut t = format!(
        "{verdict}  {} seed {}  ({} events, fingerprint {:016x}, {:.2} s)\n",
        sc.name,
        o.seed,
        o.history.events.len(),
        o.fingerprint,
        o.wall.as_secs_f64()
    );
    if !o.results.is_empty() {
        t.push_str(&format!("{}\n", summary_line(&o.results)));
    }
    if let (Some(m), Some(f)) = (&sc.measure, sc.measured(&o.results)) {
        t.push_str(&format!(
            "measured: {} = {f:.2} (flagged above {})\n",
            m.figure, m.flag_above
        ));
    }
    let stats: Vec<String> = o.stats.iter().map(|(k, v)| format!("{k}={v}")).collect();
    t.push_str(&format!("exercised: {}\n", stats.join(" ")));
    if let Some(e) = &o.error {
        t.push_str(&format!("run failed: {e}\n"));
    }
    if o.verdict != RunVerdict::Pass {
        t.push_str(&format!("{}\n", render_text(&o.history, &o.results)));
        t.push_str(&format!("fault plan:\n{}\n", o.plan));
    }
    if o.verdict == RunVerdict::Fail {
        t.push_str(&format!("{}\n", repro_line(path, sc, o.seed, &o.plan)));
    }
    t
}

/// The line that replays `seed` under an explicit plan file (a shrunk one).
pub fn plan_repro_line(path: &Path, sc: &Scenario, seed: u64, plan_file: &Path, plan: &FaultPlan) -> String {
    format!(
        "{} replay {} --seed {seed} --plan {}  # commit {COMMIT}, scenario {}, plan {}",
        zkdst_sim::client::library::command(),
        path.display(),
        plan_file.display(),
        sc.hash(),
        plan.hash()
    )
}

/// Writes the run's history (`replay --history`).
/// The encoding follows the file name: `*.jsonl.gz` gzipped JSON lines
/// (what the store keeps), `*.jsonl` JSON lines, else one pretty JSON
/// document.
pub fn write_history(o: &RunOutcome, path: &Path) -> Result<(), WriteError> {
    let file = std::fs::File::create(path).map_err(WriteError::at(path))?;
    o.history
        .write_to(Encoding::for_path(path), file)
        .map_err(WriteError::at(path))
}

/// Writes the run's HTML timeline (`replay --html`).
pub fn write_timeline(o: &RunOutcome, path: &Path) -> Result<(), WriteError> {
    std::fs::write(path, render_html(&o.history, &o.results)).map_err(WriteError::at(path))
}

/// Replays `seed` with its trace at `level` collected, not printed: the
/// text `zkdst replay --trace LEVEL` prints before its report. No other
/// simulation may run meanwhile (see `trace::capture`).
pub fn replay_with_trace(
    sc: &Scenario,
    seed: u64,
    plan: Option<&FaultPlan>,
    level: TraceLevel,
) -> (RunOutcome, String) {
    trace::capture(level, || run(sc, seed, plan))
}
