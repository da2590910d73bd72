//! The test command of `scripts/mutants.sh` (cargo-mutants runs it once per
//! mutant of a recipe file): fuzz the scenarios that exercise that file with
//! the `zkdst` binary built from the mutated tree, in chunks of seeds, in
//! seed order, and fail at the first chunk in which a seed fails.
//!
//! Environment (set by the script; without `ZKDST_MUTANTS_SCENARIOS` this
//! test does nothing, so a plain `cargo test` passes it in no time):
//! - `ZKDST_MUTANTS_SCENARIOS`: scenario files, space-separated, relative to
//!   the workspace root (`scenarios/election.toml ...`)
//! - `ZKDST_MUTANTS_SEEDS`: seeds 0..N of each scenario (default 200)
//! - `ZKDST_MUTANTS_CHUNK`: seeds per `zkdst fuzz` run (default 10)
//! - `ZKDST_MUTANTS_JOBS`: `zkdst fuzz --jobs` (default 2)
//!
//! A mutant is killed if any seed's verdict is `fail`, or if once every seed
//! passed a scenario's campaign minimums (`[expect.min]`, summed over all N
//! seeds) are not met: the mutant stopped the workload reaching a path, and
//! the campaign fails as `zkdst fuzz` would (reported as the last seed,
//! `checks=unmet:COUNTER`). `unknown` (a checker could not decide) does not
//! kill it. The last line says which, for the report: `zkdst-mutants:
//! killed first_seed=S scenario=F checks=C seeds_run=R` or `zkdst-mutants:
//! survived seeds=N seeds_run=R`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use zkdst_scenarios::stats::Stats;
use zkdst_scenarios::Scenario;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected an integer")),
        Err(_) => default,
    }
}

struct Failure {
    seed: u64,
    file: String,
    checks: String,
}

/// Runs seeds `a..b` of every scenario; the lowest failing seed, if any.
/// Adds each scenario's counters to `totals`.
fn fuzz_chunk(
    zkdst: &Path,
    root: &Path,
    scenarios: &[String],
    (a, b): (u64, u64),
    jobs: u64,
    totals: &mut BTreeMap<String, Stats>,
) -> Option<Failure> {
    let out = Command::new(zkdst)
        .current_dir(root)
        .arg("fuzz")
        .args(scenarios)
        .args([
            "--seeds",
            &format!("{a}..{b}"),
            "--jobs",
            &jobs.to_string(),
            "--json",
            "--no-store",
        ])
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", zkdst.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut first: Option<Failure> = None;
    let mut seen = 0u64;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(sums) = v.get("summary").and_then(|s| s.as_object()) {
            for (file, sum) in sums {
                if let Some(stats) = sum
                    .get("stats")
                    .and_then(|s| serde_json::from_value::<Stats>(s.clone()).ok())
                {
                    totals.entry(file.clone()).or_default().merge(&stats);
                }
            }
            continue;
        }
        let Some(seed) = v.get("seed").and_then(|s| s.as_u64()) else {
            continue;
        };
        seen += 1;
        let verdict = v.get("verdict").and_then(|s| s.as_str()).unwrap_or("");
        if verdict.eq_ignore_ascii_case("fail") && first.as_ref().is_none_or(|f| seed < f.seed) {
            let checks = v
                .get("failed")
                .and_then(|c| c.as_array())
                .map(|c| c.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(","))
                .unwrap_or_default();
            first = Some(Failure {
                seed,
                file: v.get("file").and_then(|s| s.as_str()).unwrap_or("?").to_string(),
                checks: if checks.is_empty() { "run".into() } else { checks },
            });
        }
    }
    let want = (b - a) * scenarios.len() as u64;
    if first.is_none() && seen != want {
        // zkdst itself broke (bad scenario, crash of the binary): that is a
        // failure of the mutant too, but say so plainly.
        eprintln!(
            "zkdst-mutants: zkdst fuzz exited {:?} after {seen} of {want} seed records",
            out.status.code()
        );
        return Some(Failure {
            seed: a,
            file: scenarios.join(" "),
            checks: format!("zkdst-exit-{:?}", out.status.code()),
        });
    }
    first
}

fn main() -> ExitCode {
    let Ok(list) = std::env::var("ZKDST_MUTANTS_SCENARIOS") else {
        println!("zkdst-mutants: ZKDST_MUTANTS_SCENARIOS not set, nothing to do (see scripts/mutants.sh)");
        return ExitCode::SUCCESS;
    };
    let scenarios: Vec<String> = list.split_whitespace().map(str::to_string).collect();
    assert!(!scenarios.is_empty(), "ZKDST_MUTANTS_SCENARIOS is empty");
    let seeds = env_u64("ZKDST_MUTANTS_SEEDS", 200);
    let chunk = env_u64("ZKDST_MUTANTS_CHUNK", 10).max(1);
    let jobs = env_u64("ZKDST_MUTANTS_JOBS", 2).max(1);
    let zkdst = PathBuf::from(env!("CARGO_BIN_EXE_zkdst"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let mut totals = BTreeMap::new();
    let mut a = 0;
    while a < seeds {
        let b = (a + chunk).min(seeds);
        if let Some(f) = fuzz_chunk(&zkdst, &root, &scenarios, (a, b), jobs, &mut totals) {
            println!(
                "zkdst-mutants: killed first_seed={} scenario={} checks={} seeds_run={}",
                f.seed, f.file, f.checks, b
            );
            return ExitCode::FAILURE;
        }
        a = b;
    }
    for file in &scenarios {
        let sc = Scenario::load(&root.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let got = totals.get(file).cloned().unwrap_or_default();
        if let Some((k, want, n)) = got.unmet(&sc.expect.min).first() {
            println!(
                "zkdst-mutants: killed first_seed={} scenario={file} checks=unmet:{k}>={want}(got-{n}) seeds_run={seeds}",
                seeds - 1
            );
            return ExitCode::FAILURE;
        }
    }
    println!("zkdst-mutants: survived seeds={seeds} seeds_run={seeds}");
    ExitCode::SUCCESS
}
