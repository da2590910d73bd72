//! `zkdst`: run, fuzz, replay and shrink scenarios; check recorded
//! histories; list shipped scenarios; merge sharded fuzz results.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use zkdst_checker::report::{render_html, render_text, summary_line};
use zkdst_scenarios::fuzz::{self, Job, SeedRecord, SeedSet};
use zkdst_scenarios::{repro_line, run, shrink, FaultPlan, RunOutcome, RunVerdict, Scenario};

// A simulation allocates and frees small objects at a high rate (messages,
// persistent-tree chunks); mimalloc is markedly faster at it than glibc's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes, the same for every command.
const EXIT_PASS: u8 = 0;
const EXIT_VIOLATION: u8 = 1;
const EXIT_UNKNOWN: u8 = 2;
const EXIT_USAGE: u8 = 3;

const EXIT_CODES_HELP: &str = "\
Exit codes (every command):
  0  pass: linearizable, every checker passed, every seed passed
  1  violation: NOT linearizable, a checker found a violation, a seed failed
     (fuzz, merge: or a campaign minimum was not met; shrink: the seed fails
     and a plan was written; bench bugs: a bug escaped or a correct twin failed)
  2  unknown: a checker could not decide and nothing failed
  3  usage or input error: bad arguments, an unreadable or malformed file";

#[derive(Parser)]
#[command(
    name = "zkdst",
    version,
    about = "Deterministic simulation testing for ZooKeeper recipes",
    after_help = EXIT_CODES_HELP
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one seed of a scenario: verdict, and on failure the report.
    Run {
        scenario: PathBuf,
        #[arg(long)]
        seed: Option<u64>,
        /// An explicit fault plan (JSON, as `shrink` writes).
        #[arg(long)]
        plan: Option<PathBuf>,
    },
    /// Run many seeds on all cores.
    Fuzz {
        #[arg(required = true)]
        scenarios: Vec<PathBuf>,
        /// Seed range A..B (default: the scenario's own).
        #[arg(long)]
        seeds: Option<String>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only shard I of N (seeds with (seed - A) % N == I).
        #[arg(long)]
        shard: Option<String>,
        /// Stop starting new seeds after this many seconds of wall time.
        #[arg(long)]
        time: Option<u64>,
        /// One JSON line per seed on stdout (and a summary line), no table.
        #[arg(long)]
        json: bool,
    },
    /// Replay one seed bit for bit, writing its history and timeline.
    Replay {
        scenario: PathBuf,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        plan: Option<PathBuf>,
        /// Write the history as JSON.
        #[arg(long)]
        history: Option<PathBuf>,
        /// Write an HTML timeline.
        #[arg(long)]
        html: Option<PathBuf>,
        /// The trace printed while replaying, stamped with virtual time and
        /// node: off, info (faults, sessions, recipe operations), debug
        /// (+ every ZooKeeper call, commit and watch event) or trace (+ every
        /// message a server handles).
        #[arg(long, default_value = "info")]
        trace: zkdst_scenarios::trace::TraceLevel,
    },
    /// Minimise a failing seed's fault plan and workload; writes a plan file.
    Shrink {
        scenario: PathBuf,
        #[arg(long)]
        seed: u64,
        /// Where to write the plan (default: <scenario>-<seed>.plan.json).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check a recorded or third-party history: linearizability against a
    /// model, or the named checkers. First line: the verdict
    /// (`linearizable`, `NOT linearizable`, `unknown`; or per checker
    /// `NAME: pass`, `NAME: violation`, `NAME: unknown`).
    #[command(after_help = EXIT_CODES_HELP)]
    Check {
        file: PathBuf,
        /// jepsen-etcd, porcupine-kv, edn or zkdst.
        #[arg(long)]
        format: String,
        /// register, cas-register, multi-register, kv, queue, set, counter, mutex.
        #[arg(long, conflicts_with = "checkers")]
        model: Option<String>,
        /// The checkers to run (repeatable; `zkdst list` names them). A zkdst
        /// history without --model or --checker is judged by zk-consistency
        /// (ZooKeeper's model: writes linearizable, reads sequentially
        /// consistent).
        #[arg(long = "checker")]
        checkers: Vec<String>,
    },
    /// The shipped scenarios and what they check.
    List,
    /// Combine `fuzz --json` outputs of shards into one summary.
    Merge {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks of the harness (release builds).
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// For each planted bug: seeds and wall time to the first detection
    /// (median and worst over disjoint seed ranges), shrunk plan size.
    Bugs {
        /// Planted scenario files (default: every scenarios/planted/*.toml).
        files: Vec<PathBuf>,
        /// One JSON line per bug on stdout, no table.
        #[arg(long)]
        json: bool,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Disjoint seed ranges per bug.
        #[arg(long, default_value_t = 10)]
        ranges: u64,
        /// Seeds per range.
        #[arg(long, default_value_t = 500)]
        seeds: u64,
        /// Skip shrinking.
        #[arg(long)]
        no_shrink: bool,
    },
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors; every usage error is 3
            // (clap's own default is 2, which here means "unknown").
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_PASS });
        }
    };
    match dispatch(cli.cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn load(path: &Path) -> Result<Scenario> {
    Ok(Scenario::load(path)?)
}

fn load_plan(path: &Path) -> Result<FaultPlan> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    FaultPlan::from_json(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}

/// Silences the default panic message of simulation threads (the runner
/// reports the panic itself).
fn quiet_seed_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let seed_thread = std::thread::current().name().is_some_and(|n| n.starts_with("seed-"));
        if !seed_thread {
            default(info);
        }
    }));
}

fn report(path: &Path, sc: &Scenario, o: &RunOutcome) {
    let verdict = match o.verdict {
        RunVerdict::Pass => "PASS",
        RunVerdict::Fail => "FAIL",
        RunVerdict::Unknown => "UNKNOWN",
    };
    println!(
        "{verdict}  {} seed {}  ({} events, fingerprint {:016x}, {:.2} s)",
        sc.name,
        o.seed,
        o.history.events.len(),
        o.fingerprint,
        o.wall.as_secs_f64()
    );
    if !o.results.is_empty() {
        println!("{}", summary_line(&o.results));
    }
    if let (Some(m), Some(f)) = (&sc.measure, sc.measured(&o.results)) {
        println!("measured: {} = {f:.2} (flagged above {})", m.figure, m.flag_above);
    }
    let stats: Vec<String> = o.stats.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("exercised: {}", stats.join(" "));
    if let Some(e) = &o.error {
        println!("run failed: {e}");
    }
    if o.verdict != RunVerdict::Pass {
        println!("{}", render_text(&o.history, &o.results));
        println!("fault plan:\n{}", o.plan);
    }
    if o.verdict == RunVerdict::Fail {
        println!("{}", repro_line(path, sc, o.seed, &o.plan));
    }
}

fn exit_for(v: RunVerdict) -> ExitCode {
    ExitCode::from(match v {
        RunVerdict::Pass => EXIT_PASS,
        RunVerdict::Fail => EXIT_VIOLATION,
        RunVerdict::Unknown => EXIT_UNKNOWN,
    })
}

/// A campaign's exit code: any failure beats any undecided seed.
fn exit_for_campaign(failed: bool, unknown: bool) -> ExitCode {
    ExitCode::from(if failed {
        EXIT_VIOLATION
    } else if unknown {
        EXIT_UNKNOWN
    } else {
        EXIT_PASS
    })
}

/// `zkdst replay ... | head` should end quietly when the reader goes away,
/// as other Unix tools do, rather than panic on a closed stdout (Rust
/// ignores SIGPIPE by default).
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cmd: Cmd) -> Result<ExitCode> {
    match cmd {
        Cmd::Run { scenario, seed, plan } => {
            let sc = load(&scenario)?;
            let plan = plan.as_deref().map(load_plan).transpose()?;
            quiet_seed_panics();
            let o = run(&sc, seed.unwrap_or(sc.seeds.start), plan.as_ref());
            report(&scenario, &sc, &o);
            Ok(exit_for(o.verdict))
        }
        Cmd::Replay {
            scenario,
            seed,
            plan,
            history,
            html,
            trace,
        } => {
            let sc = load(&scenario)?;
            let plan = plan.as_deref().map(load_plan).transpose()?;
            quiet_seed_panics();
            zkdst_scenarios::trace::init(trace);
            let o = run(&sc, seed, plan.as_ref());
            report(&scenario, &sc, &o);
            if let Some(p) = history {
                std::fs::write(&p, o.history.to_json()).with_context(|| format!("{}: cannot write", p.display()))?;
                println!("history written to {}", p.display());
            }
            if let Some(p) = html {
                std::fs::write(&p, render_html(&o.history, &o.results))
                    .with_context(|| format!("{}: cannot write", p.display()))?;
                println!("timeline written to {}", p.display());
            }
            Ok(exit_for(o.verdict))
        }
        Cmd::Fuzz {
            scenarios,
            seeds,
            jobs,
            shard,
            time,
            json,
        } => fuzz_cmd(scenarios, seeds, jobs, shard, time, json),
        Cmd::Shrink { scenario, seed, out } => {
            let sc = load(&scenario)?;
            quiet_seed_panics();
            let r = shrink::shrink(&sc, seed, |msg| eprintln!("{msg}"));
            let Some(r) = r else {
                println!("seed {seed} does not fail: nothing to shrink");
                return Ok(ExitCode::SUCCESS);
            };
            let out = out.unwrap_or_else(|| PathBuf::from(format!("{}-{seed}.plan.json", sc.name)));
            std::fs::write(&out, r.plan.to_json()).with_context(|| format!("{}: cannot write", out.display()))?;
            println!(
                "shrunk from {} to {} faults ({} runs); still fails {}",
                r.original_faults,
                r.plan.faults.len(),
                r.runs,
                r.checks.join(", ")
            );
            println!("{}", r.plan);
            println!(
                "zkdst replay {} --seed {seed} --plan {}  # commit {}, scenario {}, plan {}",
                scenario.display(),
                out.display(),
                zkdst_scenarios::COMMIT,
                sc.hash(),
                r.plan.hash()
            );
            Ok(ExitCode::from(EXIT_VIOLATION))
        }
        Cmd::Check {
            file,
            format,
            model,
            checkers,
        } => {
            let format: zkdst_checker::formats::Format = format.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
            if !checkers.is_empty() || (format == zkdst_checker::formats::Format::Zkdst && model.is_none()) {
                return check_with_checkers(&file, format, &checkers);
            }
            let model = model
                .map(|m| m.parse::<zkdst_checker::models::ModelName>())
                .transpose()
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let r = zkdst_checker::check_file(&file, format, model, Default::default())?;
            print!("{}", r.text);
            Ok(ExitCode::from(match r.verdict {
                zkdst_checker::linearizability::Verdict::Linearizable => EXIT_PASS,
                zkdst_checker::linearizability::Verdict::NotLinearizable(_) => EXIT_VIOLATION,
                zkdst_checker::linearizability::Verdict::Unknown(_) => EXIT_UNKNOWN,
            }))
        }
        Cmd::List => {
            for p in zkdst_scenarios::scenario::shipped() {
                match Scenario::load(&p) {
                    Ok(s) => println!(
                        "{:<40} {:<18} checks {:<40} {}",
                        p.strip_prefix(std::env::current_dir().unwrap_or_default())
                            .unwrap_or(&p)
                            .display(),
                        serde_json::to_value(s.workload.recipe)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        s.check.checkers.join(","),
                        s.description
                    ),
                    Err(e) => println!("{e}"),
                }
            }
            println!("\nplanted bugs (expected to FAIL; `zkdst bench bugs` hunts them):");
            for p in zkdst_scenarios::scenario::planted() {
                match Scenario::load(&p) {
                    Ok(s) => println!(
                        "{:<52} {:<26} checks {:<24} {}",
                        p.strip_prefix(std::env::current_dir().unwrap_or_default())
                            .unwrap_or(&p)
                            .display(),
                        s.workload.variant.map(|v| v.name()).unwrap_or_default(),
                        s.check.checkers.join(","),
                        s.workload.variant.map(|v| v.class()).unwrap_or_default()
                    ),
                    Err(e) => println!("{e}"),
                }
            }
            println!("\ncheckers: {}", zkdst_checker::properties::names().join(", "));
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            what:
                BenchCmd::Bugs {
                    files,
                    json,
                    jobs,
                    ranges,
                    seeds,
                    no_shrink,
                },
        } => bench_bugs(files, json, jobs, ranges, seeds, no_shrink),
        Cmd::Merge { files, json } => {
            let mut all: Vec<SeedRecord> = Vec::new();
            for f in &files {
                all.extend(fuzz::read_records(f).map_err(anyhow::Error::msg)?);
            }
            all.sort_by(|a, b| (&a.file, a.seed).cmp(&(&b.file, b.seed)));
            all.dedup_by(|a, b| a.file == b.file && a.seed == b.seed);
            let sums = fuzz::summarize(&all);
            if json {
                println!("{}", serde_json::to_string(&serde_json::json!({ "summary": sums }))?);
            } else {
                print!("{}", fuzz::render_summary(&sums));
            }
            let failed = sums.values().any(|s| s.fail > 0);
            let unknown = sums.values().any(|s| s.unknown > 0);
            Ok(exit_for_campaign(failed, unknown))
        }
    }
}

fn fuzz_cmd(
    files: Vec<PathBuf>,
    seeds: Option<String>,
    jobs: Option<usize>,
    shard: Option<String>,
    time: Option<u64>,
    json: bool,
) -> Result<ExitCode> {
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
    let records = fuzz::run_jobs(all_jobs, threads, deadline, |job, o| {
        if o.verdict == RunVerdict::Fail {
            failures += 1;
            let line = repro_line(&job.file, &job.scenario, o.seed, &o.plan);
            bar.suspend(|| eprintln!("FAIL [{}] {line}", o.failed_checks().join(",")));
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
    let sums = fuzz::summarize(&records);
    let mut unmet_any = false;
    let mut unmet_text = String::new();
    for (f, sc) in &scenarios {
        if let Some(s) = sums.get(&f.display().to_string()) {
            for (k, want, got) in s.stats.unmet(&sc.expect.min) {
                unmet_any = true;
                unmet_text.push_str(&format!(
                    "{}: expected {k} >= {want} over the campaign, got {got}\n",
                    f.display()
                ));
            }
        }
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
        println!(
            "\n{} seeds in {:.1} s on {threads} threads: {:.0} seeds/min",
            records.len(),
            wall.as_secs_f64(),
            n / wall.as_secs_f64().max(1e-9) * 60.0
        );
    }
    let failed = sums.values().any(|s| s.fail > 0);
    let unknown = sums.values().any(|s| s.unknown > 0);
    Ok(exit_for_campaign(failed || unmet_any, unknown))
}

/// `zkdst bench bugs`: the logic lives in `zkdst_scenarios::bench::bugs`.
fn bench_bugs(
    files: Vec<PathBuf>,
    json: bool,
    jobs: Option<usize>,
    ranges: u64,
    seeds: u64,
    no_shrink: bool,
) -> Result<ExitCode> {
    use zkdst_scenarios::bench::bugs;
    if jobs == Some(0) || ranges == 0 || seeds == 0 {
        bail!("--jobs, --ranges and --seeds must be at least 1");
    }
    let mut opts = bugs::Options {
        ranges,
        seeds_per_range: seeds,
        shrink: !no_shrink,
        ..Default::default()
    };
    if let Some(j) = jobs {
        opts.threads = j;
    }
    let files = if files.is_empty() {
        let here = std::env::current_dir().unwrap_or_default();
        let rel = |p: PathBuf| p.strip_prefix(&here).map(Path::to_path_buf).unwrap_or(p);
        zkdst_scenarios::scenario::planted().into_iter().map(rel).collect()
    } else {
        files
    };
    quiet_seed_panics();
    let mut results = Vec::new();
    for f in &files {
        let b = bugs::bench(f, opts, |m| eprintln!("{m}"))?;
        if json {
            println!("{}", serde_json::to_string(&b.line())?);
        }
        results.push(b);
    }
    if !json {
        print!("{}", bugs::render(&results, &opts));
    }
    let ok = results.iter().all(|b| b.caught() && b.correct_failed.is_empty());
    Ok(ExitCode::from(if ok { EXIT_PASS } else { EXIT_VIOLATION }))
}

/// `zkdst check FILE --format F --checker C...`, or a zkdst history
/// without a model (judged by zk-consistency): the first line gives each
/// checker's verdict, `NAME: pass`, `NAME: violation` or `NAME: unknown`;
/// exit 1 if any found a violation, else 2 if any could not decide.
fn check_with_checkers(
    file: &Path,
    format: zkdst_checker::formats::Format,
    checkers: &[String],
) -> anyhow::Result<ExitCode> {
    use zkdst_checker::Verdict;
    let history = format.read(file)?;
    let names: Vec<&str> = if checkers.is_empty() {
        vec![zkdst_checker::zk_consistency::NAME]
    } else {
        checkers.iter().map(String::as_str).collect()
    };
    let results = zkdst_checker::properties::registry::run_all(&names, &history, &Default::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let words: Vec<String> = results
        .iter()
        .map(|r| {
            let word = match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Violation => "violation",
                Verdict::Unknown => "unknown",
            };
            format!("{}: {word}", r.checker)
        })
        .collect();
    println!("{}", words.join(", "));
    print!("{}", zkdst_checker::report::render_text(&history, &results));
    let violation = results.iter().any(|r| r.verdict == Verdict::Violation);
    let unknown = results.iter().any(|r| r.verdict == Verdict::Unknown);
    Ok(exit_for_campaign(violation, unknown))
}
