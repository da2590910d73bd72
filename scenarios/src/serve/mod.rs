//! `zkdst serve`: a scenario's simulated ensemble on real loopback sockets,
//! in real time, so that any ZooKeeper client in any language can be put
//! under the scenario's faults and judged from the servers' side.
//!
//! - [`sockets`]: listeners on 127.0.0.1, one per (application client,
//!   server), and a reader and a writer thread per connection;
//! - [`bridge`]: inside the simulation, a pump paced to the wall clock
//!   hands what the sockets delivered to a proxy per connection, which
//!   speaks to its server over the simulated network from the client's
//!   simulated node (so client faults reach it);
//! - [`pace`]: one simulated second per real second, and the worst lag;
//! - [`frames`]: the arrival log, from which [`replay`] re-runs the
//!   server side bit for bit;
//! - [`run`]: one served run (ensemble, nemesis, bridge).

pub mod bridge;
pub mod external;
pub mod frames;
pub mod pace;
pub mod record;
pub mod run;
pub mod sockets;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkdst_checker::history::{Encoding, History};
use zkdst_checker::properties::{self, CheckResult};

pub use crate::judge::verdict_of;
use crate::judge::RunVerdict;
use crate::plan::FaultPlan;
use crate::scenario::Scenario;
use frames::Arrival;
use run::{Feed, Served};
use sockets::Sockets;

/// The checkers that judge the servers' side of every served run.
pub const SERVER_CHECKERS: &[&str] = &["replicas", "client-protocol"];

/// How to serve.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Ports from here (client c, server s at `base + c × servers + s − 1`);
    /// None: free ports.
    pub port_base: Option<u16>,
    /// A fault plan in place of the seed's own.
    pub plan: Option<FaultPlan>,
}

/// A served run, judged.
#[derive(Debug)]
pub struct ServeOutcome {
    pub seed: u64,
    pub plan: FaultPlan,
    pub served: Served,
    /// One connect string per application client.
    pub connect: Vec<String>,
    pub results: Vec<CheckResult>,
    pub verdict: RunVerdict,
    /// Real time the run took.
    pub wall: Duration,
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Set by Ctrl-C (once asked for: the first call installs the handler):
/// a served run ends at its next tick and writes its record.
pub fn interrupt_flag() -> &'static AtomicBool {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // SAFETY: the handler only stores to an atomic, which is
        // async-signal-safe.
        unsafe {
            libc::signal(
                libc::SIGINT,
                on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    });
    &INTERRUPTED
}

/// Serves `sc`'s ensemble under `seed` on 127.0.0.1 for `length` of
/// simulated (= real) time (or until Ctrl-C). `on_ready` gets the connect
/// strings once the ensemble has a leader and takes connections, and the
/// monotonic clock's reading (ns) at simulated time zero.
pub fn serve(
    sc: &Scenario,
    seed: u64,
    opts: &ServeOptions,
    interrupt: &'static AtomicBool,
    length: Duration,
    on_ready: impl FnOnce(&[String], u64),
) -> std::io::Result<ServeOutcome> {
    let started = Instant::now();
    let plan = opts.plan.clone().unwrap_or_else(|| FaultPlan::generate(sc, seed));
    let mut sockets = Sockets::open(sc.ensemble.clients, sc.ensemble.servers, opts.port_base)?;
    let connect: Vec<String> = (0..sc.ensemble.clients).map(|c| sockets.connect_string(c)).collect();
    let feed = Feed::Live {
        inbound: sockets.inbound.take().expect("taken once"),
        writers: sockets.writers.clone(),
        interrupt,
    };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let served = std::thread::scope(|s| {
        let sim = s.spawn(|| run::simulate(sc, seed, &plan, feed, Some(ready_tx), length));
        // A run that fails before it is ready drops the sender.
        if let Ok(t0_ns) = ready_rx.recv() {
            on_ready(&connect, t0_ns);
        }
        sim.join()
    });
    sockets.stop();
    let served = served.map_err(|_| std::io::Error::other("the simulation thread panicked"))?;
    Ok(judge(sc, seed, plan, served, connect, started.elapsed()))
}

/// Re-runs a served seed's server side from its arrival log.
pub fn replay(
    sc: &Scenario,
    seed: u64,
    plan: Option<&FaultPlan>,
    arrivals: Vec<Arrival>,
) -> Result<ServeOutcome, String> {
    validate_arrivals(sc, &arrivals)?;
    let started = Instant::now();
    let plan = plan.cloned().unwrap_or_else(|| FaultPlan::generate(sc, seed));
    // The log's end line ends the replay; the length only bounds it.
    let length = Duration::from_nanos(arrivals.last().map_or(0, |a| a.at_ns)) + Duration::from_secs(1);
    let served = run::simulate(sc, seed, &plan, Feed::Replay(arrivals), None, length);
    Ok(judge(sc, seed, plan, served, Vec::new(), started.elapsed()))
}

/// An arrival log fits `sc`: its clients and servers exist, it ends.
fn validate_arrivals(sc: &Scenario, arrivals: &[Arrival]) -> Result<(), String> {
    for (i, a) in arrivals.iter().enumerate() {
        if a.input == frames::Input::End {
            if i + 1 != arrivals.len() {
                return Err(format!("line {}: kind \"end\" before the last line", i + 1));
            }
            continue;
        }
        if a.client >= sc.ensemble.clients {
            return Err(format!(
                "line {}: field client: {} but the scenario has {} clients",
                i + 1,
                a.client,
                sc.ensemble.clients
            ));
        }
        if a.server == 0 || a.server > sc.ensemble.servers {
            return Err(format!(
                "line {}: field server: {} but the scenario has servers 1..={}",
                i + 1,
                a.server,
                sc.ensemble.servers
            ));
        }
    }
    if arrivals.last().map(|a| &a.input) != Some(&frames::Input::End) {
        return Err("the log has no \"end\" line: it was cut short".into());
    }
    Ok(())
}

/// Runs the server-side checkers (and `extra`) over a served history.
pub fn check(history: &History, sc: &Scenario, extra: &[String]) -> Vec<CheckResult> {
    let mut params = sc.check.params.clone();
    params.min_progress = sc.check.min_progress;
    let mut names: Vec<String> = SERVER_CHECKERS.iter().map(|s| s.to_string()).collect();
    for e in extra {
        if !names.contains(e) {
            names.push(e.clone());
        }
    }
    match properties::run_all(&names, history, &params) {
        Ok(r) => r,
        Err(e) => vec![CheckResult::unknown("serve", e.to_string())],
    }
}

fn judge(
    sc: &Scenario,
    seed: u64,
    plan: FaultPlan,
    served: Served,
    connect: Vec<String>,
    wall: Duration,
) -> ServeOutcome {
    let results = if served.error.is_none() {
        check(&served.history, sc, &[])
    } else {
        Vec::new()
    };
    let verdict = verdict_of(served.error.is_some(), &results);
    ServeOutcome {
        seed,
        plan,
        served,
        connect,
        results,
        verdict,
        wall,
    }
}

/// The files a served run leaves in its record directory.
pub struct RecordPaths {
    pub dir: PathBuf,
    /// The servers' record (what `replay --frames` reproduces).
    pub history: PathBuf,
    pub frames: PathBuf,
    pub plan: PathBuf,
}

impl RecordPaths {
    pub fn in_dir(dir: &Path) -> RecordPaths {
        RecordPaths {
            dir: dir.to_path_buf(),
            history: dir.join("server-history.jsonl.gz"),
            frames: dir.join("frames.jsonl"),
            plan: dir.join("plan.json"),
        }
    }
}

/// Writes a served run's record into `dir` (created).
pub fn write_record(dir: &Path, o: &ServeOutcome) -> std::io::Result<RecordPaths> {
    let paths = RecordPaths::in_dir(dir);
    std::fs::create_dir_all(dir)?;
    let f = std::fs::File::create(&paths.history)?;
    o.served.history.write_to(Encoding::JsonLinesGz, f)?;
    frames::write(&paths.frames, &o.served.pumped.arrivals)?;
    std::fs::write(
        &paths.plan,
        serde_json::to_string_pretty(&o.plan).map_err(std::io::Error::other)?,
    )?;
    Ok(paths)
}
