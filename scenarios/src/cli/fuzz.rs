//! `zkdst fuzz` and `zkdst merge`: a campaign over seeds on all cores,
//! its summary, the store of its failing seeds and its JUnit report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use zkdst_scenarios::fuzz::{self, Job, SeedRecord, SeedSet};
use zkdst_scenarios::junit;
use zkdst_scenarios::profile::Profile;
use zkdst_scenarios::store::Store;
use zkdst_scenarios::{repro_line, RunVerdict};

use super::{exit_for_campaign, load, quiet_seed_panics};

#[derive(clap::Args)]
pub struct FuzzArgs {
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// Seed range A..B (default: the scenario's own).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard I of N (seeds with (seed - A) % N == I).
    #[arg(long)]
    pub shard: Option<String>,
    /// Stop starting new seeds after this many seconds of wall time.
    #[arg(long)]
    pub time: Option<u64>,
    /// One JSON line per seed on stdout (and a summary line), no table.
    #[arg(long)]
    pub json: bool,
    /// Where failing seeds are stored, one folder each
    /// (DIR/<scenario>/<seed>-<plan hash>/: history.jsonl.gz, timeline.html,
    /// plan.json, trace.txt, summary.txt, replay.txt, shrunk-plan.json).
    #[arg(long, default_value = "store", value_name = "DIR")]
    pub store: PathBuf,
    /// Store nothing.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
    /// Shrink the first K stored failures of each scenario (0: none).
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub shrink: usize,
    /// Write a JUnit XML report (one testsuite per scenario).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print where the seeds' wall time went: simulation, pairing,
    /// stats, each checker, fingerprint.
    #[arg(long)]
    pub profile: bool,
}

/// `zkdst fuzz`.
pub fn fuzz(args: FuzzArgs) -> Result<ExitCode> {
    let FuzzArgs {
        scenarios: files,
        seeds,
        jobs,
        shard,
        time,
        json,
        store,
        no_store,
        shrink,
        junit,
        profile,
    } = args;
    let range = seeds
        .as_deref()
        .map(fuzz::parse_range)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let shard = shard
        .as_deref()
        .map(fuzz::parse_shard)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    let threads = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let mut all_jobs = Vec::new();
    let mut scenarios = Vec::new();
    for f in &files {
        let sc = Arc::new(load(f)?);
        let (start, end) = range.unwrap_or((sc.seeds.start, sc.seeds.start + sc.seeds.count));
        for seed in (SeedSet { start, end, shard }).seeds() {
            all_jobs.push(Job {
                file: f.clone(),
                scenario: sc.clone(),
                seed,
            });
        }
        scenarios.push((f.clone(), sc));
    }
    quiet_seed_panics();
    let bar = if json {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(all_jobs.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} seeds  {per_sec}  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b
    };
    let deadline = time.map(|t| std::time::Instant::now() + Duration::from_secs(t));
    let started = std::time::Instant::now();
    let mut failures = 0u64;
    let mut store = (!no_store).then(|| Store::new(store, shrink));
    let mut store_errors = Vec::new();
    let mut phases = Profile::default();
    let records = fuzz::run_jobs(all_jobs, threads, deadline, |job, o| {
        phases.add(&o.phases);
        if o.verdict == RunVerdict::Fail {
            failures += 1;
            let line = repro_line(&job.file, &job.scenario, o.seed, &o.plan);
            bar.suspend(|| eprintln!("FAIL [{}] {line}", o.failed_checks().join(",")));
            if let Some(s) = store.as_mut() {
                if let Err(e) = s.record(&job.file, &job.scenario, o) {
                    bar.suspend(|| eprintln!("error: {e}"));
                    store_errors.push(e);
                }
            }
        }
        if json {
            let rec = SeedRecord::from_outcome(&job.file, &job.scenario, o);
            println!("{}", serde_json::to_string(&rec).unwrap_or_default());
        }
        bar.set_message(format!("{failures} failed"));
        bar.inc(1);
    });
    bar.finish();
    let wall = started.elapsed();
    if let Some(s) = store.as_mut().filter(|s| !s.stored().is_empty()) {
        eprintln!(
            "storing {} failing seed(s) in {}: replaying each with its trace, shrinking the first {shrink} per scenario",
            s.stored().len(),
            s.root().display()
        );
        if let Err(e) = s.finish(|m| eprintln!("{m}")) {
            eprintln!("error: {e}");
            store_errors.push(e);
        }
    }
    let sums = fuzz::summarize(&records);
    let mut unmet_any = false;
    let mut unmet_text = String::new();
    let mut extra = junit::Extra::default();
    for (f, sc) in &scenarios {
        let file = f.display().to_string();
        if let Some(s) = sums.get(&file) {
            let mut unmet = Vec::new();
            for (k, want, got) in s.stats.unmet(&sc.expect.min) {
                unmet.push(format!("{file}: expected {k} >= {want} over the campaign, got {got}"));
            }
            for u in &unmet {
                unmet_text.push_str(&format!("{u}\n"));
            }
            unmet_any |= !unmet.is_empty();
            if !sc.expect.min.is_empty() {
                extra.minimums.insert(file, unmet);
            }
        }
    }
    if let Some(s) = &store {
        for st in s.stored() {
            extra
                .stored
                .insert((st.file.display().to_string(), st.seed), st.dir.display().to_string());
        }
    }
    if let Some(p) = &junit {
        write_junit(p, &records, &extra)?;
    }
    let n = records.len() as f64;
    if json {
        println!(
            "{}",
            serde_json::to_string(
                &serde_json::json!({ "summary": sums, "unmet": unmet_text, "wall_s": wall.as_secs_f64() })
            )?
        );
    } else {
        print!("{}", fuzz::render_summary(&sums));
        print!("{unmet_text}");
        if let Some(s) = &store {
            print!("{}", s.render());
        }
        println!(
            "\n{} seeds in {:.1} s on {threads} threads: {:.0} seeds/min",
            records.len(),
            wall.as_secs_f64(),
            n / wall.as_secs_f64().max(1e-9) * 60.0
        );
        if profile {
            print!("{}", phases.render());
        }
    }
    if !store_errors.is_empty() {
        eprintln!(
            "error: {} file(s) of the store could not be written",
            store_errors.len()
        );
    }
    let failed = sums.values().any(|s| s.fail > 0);
    let unknown = sums.values().any(|s| s.unknown > 0);
    Ok(exit_for_campaign(failed || unmet_any, unknown))
}

fn write_junit(path: &Path, records: &[SeedRecord], extra: &junit::Extra) -> Result<()> {
    std::fs::write(path, junit::render(records, extra)).with_context(|| format!("{}: cannot write", path.display()))
}

/// `zkdst merge`: the shards' JSON lines as one campaign.
pub fn merge(files: Vec<PathBuf>, json: bool, junit: Option<PathBuf>) -> Result<ExitCode> {
    let mut all: Vec<SeedRecord> = Vec::new();
    for f in &files {
        all.extend(fuzz::read_records(f)?);
    }
    all.sort_by(|a, b| (&a.file, a.seed).cmp(&(&b.file, b.seed)));
    all.dedup_by(|a, b| a.file == b.file && a.seed == b.seed);
    let sums = fuzz::summarize(&all);
    if let Some(p) = &junit {
        write_junit(p, &all, &junit::Extra::default())?;
    }
    if json {
        println!("{}", serde_json::to_string(&serde_json::json!({ "summary": sums }))?);
    } else {
        print!("{}", fuzz::render_summary(&sums));
    }
    let failed = sums.values().any(|s| s.fail > 0);
    let unknown = sums.values().any(|s| s.unknown > 0);
    Ok(exit_for_campaign(failed, unknown))
}
