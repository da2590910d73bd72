//! External workloads: a scenario whose `[workload] external` names a
//! command is run by serving its ensemble and running the command against
//! it, once per seed. The command gets, in its environment:
//!
//! | variable | meaning |
//! |---|---|
//! | `ZKDST_CLIENTS` | the number of application clients, N |
//! | `ZKDST_CONNECT_0` … `ZKDST_CONNECT_{N-1}` | each client's connect string |
//! | `ZKDST_RECORD` | where to write the operation record (see [`record`](super::record)) |
//! | `ZKDST_T0_NS` | `CLOCK_MONOTONIC` (ns) at simulated time zero |
//! | `ZKDST_STOP_MS` | ms after time zero: start no operation after it |
//! | `ZKDST_FAULT_MS` | ms after time zero: the faults end, everything heals |
//! | `ZKDST_SEED` | the seed (for the workload's own choices) |
//! | `ZKDST_SESSION_TIMEOUT_MS` | the scenario's session timeout |
//!
//! The ensemble serves until `ZKDST_STOP_MS` plus [`STOP_GRACE`]; the
//! command must exit 0 by then (it is killed [`KILL_AFTER`] later). Its
//! record is validated and merged into the servers' record, and the
//! scenario's checkers judge the result as they judge a Rust workload's.
//! A seed that does not pass keeps its files (record, output, arrival
//! log, merged history): the history's meta `external_dir` names the
//! folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use zkdst_checker::properties::{CheckResult, Verdict};

use super::record;
use super::{frames, ServeOptions};
use crate::judge::{finish, RunOutcome, RunVerdict, SimResult};
use crate::plan::FaultPlan;
use crate::profile::Phases;
use crate::scenario::Scenario;
use crate::stats::Stats;

/// How long the ensemble keeps serving after `ZKDST_STOP_MS`: the last
/// operations finish, sessions close.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long after the ensemble stopped a command may take to exit.
pub const KILL_AFTER: Duration = Duration::from_secs(10);

/// Fuzzed runs are not interrupted one by one.
static NEVER: AtomicBool = AtomicBool::new(false);

fn work_dir(sc: &Scenario, seed: u64) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "zkdst-external-{}-{}-{seed}-{}",
        sc.name,
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

struct Spawn<'a> {
    command: &'a str,
    seed: u64,
    stop_ms: u64,
    fault_ms: u64,
    session_timeout_ms: u32,
    record: &'a Path,
    output: &'a Path,
}

impl Spawn<'_> {
    fn start(&self, connect: &[String], t0_ns: u64) -> std::io::Result<Child> {
        let out = std::fs::File::create(self.output)?;
        let err = out.try_clone()?;
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(self.command)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .env("ZKDST_CLIENTS", connect.len().to_string())
            .env("ZKDST_RECORD", self.record)
            .env("ZKDST_T0_NS", t0_ns.to_string())
            .env("ZKDST_STOP_MS", self.stop_ms.to_string())
            .env("ZKDST_FAULT_MS", self.fault_ms.to_string())
            .env("ZKDST_SEED", self.seed.to_string())
            .env("ZKDST_SESSION_TIMEOUT_MS", self.session_timeout_ms.to_string());
        for (i, s) in connect.iter().enumerate() {
            c.env(format!("ZKDST_CONNECT_{i}"), s);
        }
        c.spawn()
    }
}

/// Waits for `child` until `deadline`, then kills it.
fn wait(child: &mut Child, deadline: Instant) -> Result<(), String> {
    loop {
        match child.try_wait() {
            Ok(Some(st)) if st.success() => return Ok(()),
            Ok(Some(st)) => return Err(format!("the workload command exited with {st}")),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the workload command was still running {} s after the ensemble stopped: killed",
                    KILL_AFTER.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for the workload command: {e}")),
        }
    }
}

/// The name of the pace result every external run carries.
pub const PACE: &str = "served-pace";

/// A served run is judged on the premise that simulated time kept up with
/// the wall clock, which the real client's timers run on. One that fell
/// behind by more than a third of the session timeout (ZooKeeper's ping
/// interval: a client library gives up on a silent connection at about
/// two thirds) cannot be judged: its violations stay listed, undecided,
/// and the run is unknown (an overloaded machine, not a finding).
fn judge_pace(mut o: RunOutcome, lag_ms: Option<u128>, session_timeout_ms: u32) -> RunOutcome {
    let Some(lag) = lag_ms else { return o };
    pace(&mut o.results, lag, session_timeout_ms);
    o.verdict = super::verdict_of(o.error.is_some(), &o.results);
    o
}

/// Adds the pace result to `results`, and undecides their violations if
/// the lag passed the bound.
fn pace(results: &mut Vec<CheckResult>, lag: u128, session_timeout_ms: u32) {
    let bound = u128::from(session_timeout_ms / 3);
    let mut pace = CheckResult::new(PACE);
    pace.figure("max_lag_ms", lag as f64);
    pace.figure("bound_ms", bound as f64);
    if lag > bound {
        let why = format!(
            "the simulation fell {lag} ms behind the wall clock (bound: a third of the session timeout, {bound} ms): \
             time-based judgements are not decisive; rerun the seed on a quieter machine"
        );
        for r in results.iter_mut().filter(|r| r.verdict == Verdict::Violation) {
            r.verdict = Verdict::Unknown;
            r.note(format!("judged while {why}"));
        }
        pace.verdict = Verdict::Unknown;
        pace.note(why);
    }
    results.push(pace);
}

/// The last `n` lines of the command's output, for an error message.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs `sc` under `seed` with `command` as its workload.
pub fn run(sc: &Scenario, command: &str, seed: u64, plan: Option<&FaultPlan>) -> RunOutcome {
    let started = Instant::now();
    let plan = plan.cloned().unwrap_or_else(|| FaultPlan::generate(sc, seed));
    let dir = work_dir(sc, seed);
    let record_path = dir.join("record.jsonl");
    let output_path = dir.join("output.txt");
    let fault_ms = sc.fault_phase_ms();
    let stop_ms = fault_ms + sc.workload.liveness_s * 1000;
    let spawn = Spawn {
        command,
        seed,
        stop_ms,
        fault_ms,
        session_timeout_ms: sc.ensemble.session_timeout_ms,
        record: &record_path,
        output: &output_path,
    };
    let mut child: Option<std::io::Result<Child>> = None;
    let mut t0 = 0;
    let opts = ServeOptions {
        port_base: None,
        plan: Some(plan.clone()),
    };
    let length = Duration::from_millis(stop_ms) + STOP_GRACE;
    let served = std::fs::create_dir_all(&dir)
        .and_then(|()| {
            super::serve(sc, seed, &opts, &NEVER, length, |connect, t0_ns| {
                t0 = t0_ns;
                child = Some(spawn.start(connect, t0_ns));
            })
        })
        .map_err(|e| format!("cannot serve: {e}"));
    let mut phases = Phases::default();
    let mut mark = started;
    phases.lap("serve", &mut mark);
    let mut lag_ms = None;
    let (history, stats, mut error) = match served {
        Ok(o) => {
            let _ = frames::write(&dir.join("frames.jsonl"), &o.served.pumped.arrivals);
            lag_ms = Some(o.served.pumped.max_lag.as_millis());
            (o.served.history, o.served.stats, o.served.error)
        }
        Err(e) => (Default::default(), Stats::default(), Some(e)),
    };
    let mut history = history;
    // What `zkdst replay --frames` reproduces, before the client's record joins it.
    let server_fingerprint = format!("{:016x}", history.fingerprint());
    if error.is_none() {
        error = match child {
            None => Some("the ensemble never became ready: the workload command did not run".into()),
            Some(Err(e)) => Some(format!("cannot start the workload command {command:?}: {e}")),
            Some(Ok(mut c)) => wait(&mut c, Instant::now() + KILL_AFTER).err(),
        };
        if let Some(e) = &mut error {
            e.push_str(&format!("; its output ends:\n{}", tail(&output_path, 20)));
        }
    }
    if error.is_none() {
        let start_sim: u64 = history
            .meta
            .get("workload_start")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        match std::fs::File::open(&record_path)
            .map_err(|e| format!("{}: {e}", record_path.display()))
            .and_then(|f| {
                record::parse(std::io::BufReader::new(f), sc.ensemble.clients)
                    .map_err(|e| format!("{}: {e}", record_path.display()))
            }) {
            Ok(r) => record::merge(&mut history, r, t0, start_sim),
            Err(e) => error = Some(format!("the workload's record is not valid: {e}")),
        }
    }
    history.meta.insert("external".into(), command.to_string());
    history.meta.insert("server_fingerprint".into(), server_fingerprint);
    if let Some(l) = lag_ms {
        // How far the simulation ever fell behind the wall clock: a large
        // lag stretches the servers' time against the client's.
        history.meta.insert("served_max_lag_ms".into(), l.to_string());
    }
    // The record holds the recipe's operations, not its ZooKeeper calls
    // (those are in the servers' record, unpaired): checks that need the
    // calls as operations stand aside.
    history.meta.insert(
        zkdst_checker::properties::gave_up::RECIPE_CALLS.into(),
        "unrecorded".into(),
    );
    history.meta.insert("external_dir".into(), dir.display().to_string());
    let sim = SimResult { history, stats, error };
    let outcome = judge_pace(
        finish(sc, seed, plan, sim, started, phases, mark),
        lag_ms,
        sc.ensemble.session_timeout_ms,
    );
    if outcome.verdict == RunVerdict::Pass {
        let _ = std::fs::remove_dir_all(&dir);
    } else if let Ok(f) = std::fs::File::create(dir.join("history.jsonl.gz")) {
        let _ = outcome
            .history
            .write_to(zkdst_checker::history::Encoding::JsonLinesGz, f);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkdst_checker::properties::{Violation, ViolationKind};

    fn judged() -> Vec<CheckResult> {
        let mut m = CheckResult::new("mutex");
        m.violation(Violation::new(ViolationKind::MutexOverlap, "two holders"));
        vec![m, CheckResult::new("fencing")]
    }

    #[test]
    fn a_run_that_kept_pace_keeps_its_verdicts() {
        let mut r = judged();
        pace(&mut r, 1333, 4000);
        assert_eq!(r[0].verdict, Verdict::Violation);
        assert_eq!(r[2].checker, PACE);
        assert_eq!(r[2].verdict, Verdict::Pass);
        assert_eq!(crate::serve::verdict_of(false, &r), RunVerdict::Fail);
    }

    #[test]
    fn a_run_that_fell_behind_is_undecided() {
        let mut r = judged();
        pace(&mut r, 1334, 4000);
        assert_eq!(r[0].verdict, Verdict::Unknown);
        assert_eq!(r[0].violations.len(), 1, "the violation stays listed");
        assert!(r[0].notes[0].contains("1334 ms behind"), "{:?}", r[0].notes);
        assert_eq!(r[1].verdict, Verdict::Pass);
        assert_eq!(r[2].verdict, Verdict::Unknown);
        assert_eq!(crate::serve::verdict_of(false, &r), RunVerdict::Unknown);
    }
}
