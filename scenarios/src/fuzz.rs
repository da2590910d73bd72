//! Many seeds on all cores: each seed on a fresh thread (through
//! `runner::run`), results as JSON lines, a summary with what was
//! exercised, and shard/merge for campaigns spread over machines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use serde::{Deserialize, Serialize};

use crate::error::SeedArgError;
use crate::runner::{repro_line, run, RunOutcome, RunVerdict};
use crate::scenario::Scenario;
use crate::stats::Stats;

/// One seed's result, as a JSON line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    pub scenario: String,
    pub file: String,
    pub seed: u64,
    pub verdict: RunVerdict,
    #[serde(default)]
    pub failed: Vec<String>,
    #[serde(default)]
    pub violations: Vec<String>,
    #[serde(default)]
    pub error: Option<String>,
    pub stats: Stats,
    pub fingerprint: String,
    pub plan: String,
    pub wall_ms: u64,
    #[serde(default)]
    pub repro: Option<String>,
}

impl SeedRecord {
    pub fn from_outcome(file: &Path, scenario: &Scenario, o: &RunOutcome) -> SeedRecord {
        SeedRecord {
            scenario: o.scenario.clone(),
            file: file.display().to_string(),
            seed: o.seed,
            verdict: o.verdict,
            failed: o.failed_checks(),
            violations: o.violation_kinds(),
            error: o.error.clone(),
            stats: o.stats.clone(),
            fingerprint: format!("{:016x}", o.fingerprint),
            plan: o.plan.hash(),
            wall_ms: o.wall.as_millis() as u64,
            repro: (o.verdict == RunVerdict::Fail).then(|| repro_line(file, scenario, o.seed, &o.plan)),
        }
    }
}

/// A seed range `a..b` and an optional shard `i/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedSet {
    pub start: u64,
    pub end: u64,
    pub shard: Option<(u64, u64)>,
}

impl SeedSet {
    pub fn seeds(&self) -> Vec<u64> {
        (self.start..self.end)
            .filter(|s| self.shard.is_none_or(|(i, n)| (s - self.start) % n == i))
            .collect()
    }
}

/// Parses `A..B` (or a single seed `A`).
pub fn parse_range(s: &str) -> Result<(u64, u64), SeedArgError> {
    let bad = || SeedArgError::Range(s.to_string());
    match s.split_once("..") {
        Some((a, b)) => {
            let a: u64 = a.trim().parse().map_err(|_| bad())?;
            let b: u64 = b.trim().parse().map_err(|_| bad())?;
            if b <= a {
                return Err(SeedArgError::EmptyRange(s.to_string()));
            }
            Ok((a, b))
        }
        None => {
            let a: u64 = s.trim().parse().map_err(|_| bad())?;
            Ok((a, a + 1))
        }
    }
}

/// Parses `I/N` with I < N.
pub fn parse_shard(s: &str) -> Result<(u64, u64), SeedArgError> {
    let bad = || SeedArgError::Shard(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// A job: one seed of one scenario file.
#[derive(Debug, Clone)]
pub struct Job {
    pub file: PathBuf,
    pub scenario: Arc<Scenario>,
    pub seed: u64,
}

/// Runs the jobs on `jobs` threads; `on_done` sees every outcome as it
/// arrives (in completion order). Returns the records in job order.
pub fn run_jobs(
    jobs: Vec<Job>,
    threads: usize,
    deadline: Option<std::time::Instant>,
    mut on_done: impl FnMut(&Job, &RunOutcome),
) -> Vec<SeedRecord> {
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel::<(usize, RunOutcome)>();
    let mut handles = Vec::new();
    for _ in 0..threads.max(1) {
        let (jobs, next, tx) = (jobs.clone(), next.clone(), tx.clone());
        handles.push(std::thread::spawn(move || loop {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return;
            }
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(j) = jobs.get(i) else { return };
            let o = run(&j.scenario, j.seed, None);
            if tx.send((i, o)).is_err() {
                return;
            }
        }));
    }
    drop(tx);
    let mut out: BTreeMap<usize, SeedRecord> = BTreeMap::new();
    for (i, o) in rx {
        let j = &jobs[i];
        on_done(j, &o);
        out.insert(i, SeedRecord::from_outcome(&j.file, &j.scenario, &o));
    }
    for h in handles {
        let _ = h.join();
    }
    out.into_values().collect()
}

/// Hunts `jobs` in order on `threads` threads until `found` accepts an
/// outcome: no job after the earliest accepted one is started, every job
/// before it is finished. Returns the index of the earliest accepted job
/// and its outcome (`None` if none was accepted).
pub fn hunt_jobs(
    jobs: Vec<Job>,
    threads: usize,
    found: impl Fn(&Job, &RunOutcome) -> bool + Send + Sync + 'static,
) -> Option<(usize, RunOutcome)> {
    let jobs = Arc::new(jobs);
    let found = Arc::new(found);
    let next = Arc::new(AtomicUsize::new(0));
    let best = Arc::new(AtomicUsize::new(usize::MAX));
    let (tx, rx) = mpsc::channel::<(usize, RunOutcome)>();
    let mut handles = Vec::new();
    for _ in 0..threads.max(1) {
        let (jobs, found, next, best, tx) = (jobs.clone(), found.clone(), next.clone(), best.clone(), tx.clone());
        handles.push(std::thread::spawn(move || loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(j) = jobs.get(i) else { return };
            if i > best.load(Ordering::SeqCst) {
                return;
            }
            let o = run(&j.scenario, j.seed, None);
            if found(j, &o) {
                best.fetch_min(i, Ordering::SeqCst);
                if tx.send((i, o)).is_err() {
                    return;
                }
            }
        }));
    }
    drop(tx);
    let first = rx.into_iter().min_by_key(|(i, _)| *i);
    for h in handles {
        let _ = h.join();
    }
    first
}

/// Totals of a campaign, per scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub seeds: u64,
    pub pass: u64,
    pub fail: u64,
    pub unknown: u64,
    pub stats: Stats,
    pub failures: Vec<String>,
    pub wall_ms: u64,
}

pub fn summarize(records: &[SeedRecord]) -> BTreeMap<String, Summary> {
    let mut out: BTreeMap<String, Summary> = BTreeMap::new();
    for r in records {
        let s = out.entry(r.file.clone()).or_default();
        s.seeds += 1;
        match r.verdict {
            RunVerdict::Pass => s.pass += 1,
            RunVerdict::Fail => s.fail += 1,
            RunVerdict::Unknown => s.unknown += 1,
        }
        s.stats.merge(&r.stats);
        s.wall_ms += r.wall_ms;
        if let Some(line) = &r.repro {
            s.failures
                .push(format!("{} [{}]\n    {line}", r.seed, r.failed.join(",")));
        }
    }
    out
}

/// The summary as a table.
pub fn render_summary(sums: &BTreeMap<String, Summary>) -> String {
    let mut t = String::new();
    t.push_str(&format!(
        "{:<36} {:>7} {:>7} {:>7} {:>7}\n",
        "scenario", "seeds", "pass", "fail", "unknown"
    ));
    for (file, s) in sums {
        t.push_str(&format!(
            "{:<36} {:>7} {:>7} {:>7} {:>7}\n",
            file, s.seeds, s.pass, s.fail, s.unknown
        ));
    }
    for (file, s) in sums {
        t.push_str(&format!("\nexercised in {file} (totals over {} seeds):\n", s.seeds));
        let mut line = String::new();
        for (k, v) in s.stats.iter() {
            let item = format!("{k}={v}  ");
            if line.len() + item.len() > 100 {
                t.push_str(&format!("  {}\n", line.trim_end()));
                line.clear();
            }
            line.push_str(&item);
        }
        if !line.is_empty() {
            t.push_str(&format!("  {}\n", line.trim_end()));
        }
        if !s.failures.is_empty() {
            t.push_str("failures:\n");
            for f in s.failures.iter().take(20) {
                t.push_str(&format!("  seed {f}\n"));
            }
            if s.failures.len() > 20 {
                t.push_str(&format!("  ... and {} more\n", s.failures.len() - 20));
            }
        }
    }
    t
}

/// Why a file of `fuzz --json` records could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("{file}: cannot read: {message}")]
    Io { file: String, message: String },
    #[error("{file}:{line}: expected a zkdst fuzz JSON line: {message}")]
    Line { file: String, line: usize, message: String },
}

/// Reads JSON lines written by `fuzz --json` (blank lines and lines that
/// are not records are errors naming the file and line).
pub fn read_records(path: &Path) -> Result<Vec<SeedRecord>, RecordsError> {
    let file = || path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RecordsError::Io {
        file: file(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // Summary lines from `fuzz --json` carry "summary": skip them.
        if line.starts_with("{\"summary\"") {
            continue;
        }
        let r: SeedRecord = serde_json::from_str(line).map_err(|e| RecordsError::Line {
            file: file(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_shards() {
        assert_eq!(parse_range("0..10"), Ok((0, 10)));
        assert_eq!(parse_range("5"), Ok((5, 6)));
        assert!(parse_range("10..5").is_err());
        assert!(parse_range("a..b").is_err());
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("4/4").is_err());
        let all: Vec<u64> = (0..4)
            .flat_map(|i| {
                SeedSet {
                    start: 10,
                    end: 30,
                    shard: Some((i, 4)),
                }
                .seeds()
            })
            .collect();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (10..30).collect::<Vec<_>>());
    }
}
