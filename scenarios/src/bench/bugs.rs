//! `zkdst bench bugs`: the harness's bug-finding power on the planted bugs
//! (`scenarios/planted/*.toml`). For each planted scenario: ten disjoint
//! seed ranges are each hunted to the first detection (all cores, a fresh
//! thread per seed, through `fuzz::hunt_jobs`); seeds and wall time to the
//! first detection (median and worst over the ranges); the first range's
//! failure shrunk (`shrink::shrink`) to its fault count; and the correct
//! twin (the same file without `variant`) run on every detecting seed.
//!
//! A detection is a failed run — or, for a scenario with a `[measure]`
//! figure (the herd effect), a run whose figure is above `flag_above`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::fuzz::{hunt_jobs, Job};
use crate::runner::{repro_line, run, RunOutcome, RunVerdict};
use crate::scenario::{Scenario, ScenarioError};
use crate::shrink;

/// How to bench.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Disjoint seed ranges hunted.
    pub ranges: u64,
    /// Seeds per range (the hunt gives up after these).
    pub seeds_per_range: u64,
    pub threads: usize,
    /// Shrink the first range's failure.
    pub shrink: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ranges: 10,
            seeds_per_range: 500,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            shrink: true,
        }
    }
}

/// One range's hunt.
#[derive(Debug, Clone)]
pub struct Hunt {
    pub start: u64,
    /// Seeds run up to and including the first detection (None: none in
    /// the range).
    pub seeds_to_detect: Option<u64>,
    pub seed: Option<u64>,
    pub wall_s: f64,
    /// What the detecting run found (failed checks, or the figure).
    pub found: String,
}

/// One planted bug's figures.
#[derive(Debug, Clone)]
pub struct BugBench {
    pub file: PathBuf,
    pub bug: String,
    pub class: String,
    pub hunts: Vec<Hunt>,
    /// The first detection's replay line.
    pub repro: Option<String>,
    /// (faults before, faults after) shrinking the first detection.
    pub shrunk: Option<(usize, usize)>,
    /// Detecting seeds on which the correct twin failed too.
    pub correct_failed: Vec<u64>,
}

/// The JSON line of one bug.
#[derive(Debug, Serialize)]
pub struct BugLine {
    pub bug: String,
    pub class: String,
    pub caught: bool,
    pub seeds_to_detect: Spread<Option<u64>>,
    pub wall_s_to_detect: f64,
    pub shrunk_faults: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct Spread<T> {
    pub median: T,
    pub worst: T,
}

/// The upper median and the maximum; a range without a detection counts
/// as worse than any (None).
fn spread(mut v: Vec<Option<u64>>) -> Spread<Option<u64>> {
    v.sort_by_key(|x| x.unwrap_or(u64::MAX));
    Spread {
        median: v.get(v.len() / 2).copied().flatten(),
        worst: v.last().copied().flatten(),
    }
}

fn spread_f(mut v: Vec<f64>) -> Spread<f64> {
    v.sort_by(f64::total_cmp);
    Spread {
        median: v.get(v.len() / 2).copied().unwrap_or(0.0),
        worst: v.last().copied().unwrap_or(0.0),
    }
}

impl BugBench {
    /// Detected in every range.
    pub fn caught(&self) -> bool {
        !self.hunts.is_empty() && self.hunts.iter().all(|h| h.seed.is_some())
    }

    pub fn seeds(&self) -> Spread<Option<u64>> {
        spread(self.hunts.iter().map(|h| h.seeds_to_detect).collect())
    }

    pub fn wall(&self) -> Spread<f64> {
        spread_f(self.hunts.iter().map(|h| h.wall_s).collect())
    }

    pub fn line(&self) -> BugLine {
        BugLine {
            bug: self.bug.clone(),
            class: self.class.clone(),
            caught: self.caught(),
            seeds_to_detect: self.seeds(),
            wall_s_to_detect: (self.wall().median * 100.0).round() / 100.0,
            shrunk_faults: self.shrunk.map(|(_, after)| after),
        }
    }
}

/// The run counts as a detection of the planted bug.
pub fn detects(sc: &Scenario, o: &RunOutcome) -> bool {
    match &sc.measure {
        Some(m) => sc.measured(&o.results).is_some_and(|f| f > m.flag_above),
        None => o.verdict == RunVerdict::Fail,
    }
}

fn found(sc: &Scenario, o: &RunOutcome) -> String {
    match (&sc.measure, sc.measured(&o.results)) {
        (Some(m), Some(f)) => format!("{} = {f:.2}", m.figure),
        _ => o.violation_kinds().join(","),
    }
}

/// Benches one planted scenario; `log` sees progress lines.
pub fn bench(file: &Path, opts: Options, mut log: impl FnMut(String)) -> Result<BugBench, ScenarioError> {
    let sc = Arc::new(Scenario::load(file)?);
    let (bug, class) = match (sc.workload.variant, sc.ensemble.planted) {
        (Some(v), _) => (v.name().to_string(), v.class().to_string()),
        (None, Some(b)) => (b.name().to_string(), b.class().to_string()),
        (None, None) => {
            return Err(ScenarioError::Field {
                file: file.display().to_string(),
                field: "workload.variant".into(),
                message: "expected a planted variant or ensemble.planted (zkdst bench bugs runs planted scenarios)"
                    .into(),
            })
        }
    };
    let mut hunts = Vec::new();
    for r in 0..opts.ranges {
        let start = sc.seeds.start + r * opts.seeds_per_range;
        let jobs: Vec<Job> = (start..start + opts.seeds_per_range)
            .map(|seed| Job {
                file: file.to_path_buf(),
                scenario: sc.clone(),
                seed,
            })
            .collect();
        let sc2 = sc.clone();
        let t0 = Instant::now();
        let first = hunt_jobs(jobs, opts.threads, move |_, o| detects(&sc2, o));
        let wall_s = t0.elapsed().as_secs_f64();
        let hunt = match first {
            Some((i, o)) => Hunt {
                start,
                seeds_to_detect: Some(i as u64 + 1),
                seed: Some(o.seed),
                wall_s,
                found: found(&sc, &o),
            },
            None => Hunt {
                start,
                seeds_to_detect: None,
                seed: None,
                wall_s,
                found: String::new(),
            },
        };
        log(format!(
            "{}: range {start}..: {} in {wall_s:.2} s {}",
            bug,
            hunt.seed.map_or("not detected".into(), |s| format!("seed {s}")),
            hunt.found
        ));
        hunts.push(hunt);
    }
    let first_seed = hunts.iter().find_map(|h| h.seed);
    let repro = first_seed.map(|seed| {
        let o = run(&sc, seed, None);
        repro_line(file, &sc, seed, &o.plan)
    });
    let shrunk = match first_seed {
        Some(seed) if opts.shrink && sc.measure.is_none() => {
            shrink::shrink(&sc, seed, |m| log(format!("{bug}: shrink {m}")))
                .ok()
                .map(|s| (s.original_faults, s.plan.faults.len()))
        }
        Some(seed) => Some({
            let n = run(&sc, seed, None).plan.faults.len();
            (n, n)
        }),
        None => None,
    };
    let twin = sc.correct_twin();
    let correct_failed = hunts
        .iter()
        .filter_map(|h| h.seed)
        .filter(|seed| detects(&twin, &run(&twin, *seed, None)))
        .collect();
    Ok(BugBench {
        file: file.to_path_buf(),
        bug,
        class,
        hunts,
        repro,
        shrunk,
        correct_failed,
    })
}

/// The table for people.
pub fn render(results: &[BugBench], opts: &Options) -> String {
    let mut t = format!(
        "{:<26} {:<25} {:>6} {:>13} {:>15} {:>14} {:>8}\n",
        "bug", "class", "caught", "seeds med/max", "wall s med/max", "faults shrunk", "correct"
    );
    let opt = |x: Option<u64>| x.map_or("-".to_string(), |n| n.to_string());
    for b in results {
        let (s, w) = (b.seeds(), b.wall());
        let shrunk = b.shrunk.map_or("-".into(), |(a, z)| format!("{a} -> {z}"));
        let correct = if b.correct_failed.is_empty() {
            "passes".to_string()
        } else {
            format!("FAILS {}", b.correct_failed.len())
        };
        t.push_str(&format!(
            "{:<26} {:<25} {:>6} {:>13} {:>15} {:>14} {:>8}\n",
            b.bug,
            b.class,
            if b.caught() { "yes" } else { "NO" },
            format!("{}/{}", opt(s.median), opt(s.worst)),
            format!("{:.2}/{:.2}", w.median, w.worst),
            shrunk,
            correct
        ));
    }
    t.push_str(&format!(
        "\n{} ranges of {} seeds per bug, {} threads; seeds and wall time to the first detection in each range\n",
        opts.ranges, opts.seeds_per_range, opts.threads
    ));
    for b in results {
        if let Some(r) = &b.repro {
            t.push_str(&format!("{r}\n"));
        }
        if !b.correct_failed.is_empty() {
            t.push_str(&format!(
                "  the correct twin of {} FAILS seeds {:?}\n",
                b.bug, b.correct_failed
            ));
        }
    }
    t
}
