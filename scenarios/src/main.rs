//! `zkdst`: run, fuzz, replay and shrink scenarios; check recorded
//! histories; list shipped scenarios; merge sharded fuzz results; keep
//! regression seeds.

mod cli;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use zkdst_scenarios::replay;
use zkdst_scenarios::{run, shrink, FaultPlan, RunOutcome, RunVerdict, Scenario};

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
    /// Run many seeds on all cores; store every failing seed's files.
    Fuzz(cli::fuzz::FuzzArgs),
    /// Replay one seed bit for bit, writing its history and timeline.
    Replay {
        scenario: PathBuf,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        plan: Option<PathBuf>,
        /// Write the history. By name: `*.jsonl.gz` gzipped JSON lines
        /// (as the store keeps it, ~20x smaller), `*.jsonl` JSON lines,
        /// anything else one pretty JSON document.
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
        /// A served run's arrival log (`zkdst serve` writes it as
        /// frames.jsonl): re-run that run's server side from it.
        #[arg(long, conflicts_with = "html")]
        frames: Option<PathBuf>,
    },
    /// Serve the scenario's ensemble on 127.0.0.1 in real time, under its
    /// fault plan, for any ZooKeeper client: prints one connect string per
    /// application client, writes the servers' record when it ends.
    Serve(cli::serve::ServeArgs),
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
        /// jepsen-etcd, porcupine-kv, edn or zkdst (any of its encodings:
        /// JSON, JSON lines, gzipped JSON lines).
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
        /// Also write the merged campaign as a JUnit XML report.
        #[arg(long)]
        junit: Option<PathBuf>,
    },
    /// Regression seeds: seeds that once failed and must pass from now on
    /// (scenarios/regressions.toml; `cargo test --test regressions` runs them).
    Regress {
        #[command(subcommand)]
        what: cli::regress::RegressCmd,
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

pub fn main() -> ExitCode {
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
    // Checked once here: a bad value is a usage error, not the failure of
    // every seed it would otherwise bound.
    if let Err(e) = zkdst_sim::runner::wall_limit() {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
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
    print!("{}", replay::report_text(path, sc, o));
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
            frames,
        } => {
            let sc = load(&scenario)?;
            let plan = plan.as_deref().map(load_plan).transpose()?;
            if let Some(f) = frames {
                return cli::serve::replay(&sc, seed, plan.as_ref(), &f, history.as_deref());
            }
            quiet_seed_panics();
            zkdst_scenarios::trace::init(trace);
            let o = run(&sc, seed, plan.as_ref());
            report(&scenario, &sc, &o);
            if let Some(p) = history {
                replay::write_history(&o, &p).map_err(anyhow::Error::msg)?;
                println!("history written to {}", p.display());
            }
            if let Some(p) = html {
                replay::write_timeline(&o, &p).map_err(anyhow::Error::msg)?;
                println!("timeline written to {}", p.display());
            }
            Ok(exit_for(o.verdict))
        }
        Cmd::Fuzz(args) => cli::fuzz::fuzz(args),
        Cmd::Serve(args) => cli::serve::serve(args),
        Cmd::Regress { what } => cli::regress::regress(what),
        Cmd::Shrink { scenario, seed, out } => {
            let sc = load(&scenario)?;
            quiet_seed_panics();
            let r = match shrink::shrink(&sc, seed, |msg| eprintln!("{msg}")) {
                Ok(r) => r,
                Err(shrink::Unshrunk::Passes) => {
                    println!("seed {seed} does not fail: nothing to shrink");
                    return Ok(ExitCode::SUCCESS);
                }
                Err(shrink::Unshrunk::Hung) => {
                    println!("seed {seed} hung: not shrunk (`zkdst run` shows the error)");
                    return Ok(ExitCode::FAILURE);
                }
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
            println!("{}", replay::plan_repro_line(&scenario, &sc, seed, &out, &r.plan));
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
                        s.workload.recipe,
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
        Cmd::Merge { files, json, junit } => cli::fuzz::merge(files, json, junit),
    }
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
    let params = zkdst_checker::properties::Params::recorded(&history)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let results =
        zkdst_checker::properties::registry::run_all(&names, &history, &params).map_err(|e| anyhow::anyhow!("{e}"))?;
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
