//! One run of a scenario under one seed: start the ensemble, run the
//! workload on client nodes while the nemesis carries out the fault plan,
//! heal everything, keep the workload going for the liveness phase, then
//! check the history.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zkdst_model::{Exercised, FaultKind, Situation};

use zkdst_checker::zk_consistency::watches::{WATCH_EVENTS, WATCH_EVENTS_WIRE};
use zkdst_sim::client::ClientKind;
use zkdst_sim::cluster::Cluster;
use zkdst_sim::recorder::{HistoryTap, Recorder};
use zkdst_sim::runner::{run_seed_within, wall_limit, SeedError};

use crate::judge::{finish, SimResult};
pub use crate::judge::{RunOutcome, RunVerdict};
use crate::nemesis::{self, ClientRegistry, DEFAULT_LATENCY};
use crate::plan::FaultPlan;
use crate::profile::Phases;
use crate::scenario::{Client, Recipe, Scenario};
use crate::stats::Stats;
use crate::streams::stream_key;
use crate::workload::{self, Shared};

/// The commit this binary was built from.
pub const COMMIT: &str = env!("ZKDST_COMMIT");

/// The one line that replays a run.
pub fn repro_line(path: &Path, scenario: &Scenario, seed: u64, plan: &FaultPlan) -> String {
    format!(
        "{} replay {} --seed {seed}  # commit {COMMIT}, scenario {}, plan {}",
        zkdst_sim::client::library::command(),
        path.display(),
        scenario.hash(),
        plan.hash()
    )
}

/// Runs `scenario` under `seed`, with `plan` or the seed's own plan.
pub fn run(scenario: &Scenario, seed: u64, plan: Option<&FaultPlan>) -> RunOutcome {
    if let Some(command) = &scenario.workload.external {
        return crate::serve::external::run(scenario, command, seed, plan);
    }
    let started = std::time::Instant::now();
    let plan = plan.cloned().unwrap_or_else(|| FaultPlan::generate(scenario, seed));
    let sc = Arc::new(scenario.clone());
    let (s2, p2) = (sc.clone(), plan.clone());
    // What a run that hangs recorded, for its report and stored history.
    let tap: Arc<Mutex<Option<HistoryTap>>> = Arc::default();
    let t2 = tap.clone();
    let limit = Duration::from_secs(
        60 + scenario.workload.duration_s
            + scenario.workload.liveness_s
            + scenario.check.params.liveness_bound_ms / 1000
            + 300,
    );
    let sim = match wall_limit() {
        Ok(wall) => run_seed_within(stream_key(seed, "scheduler"), Some(limit), Some(wall), move || {
            simulate(s2, seed, p2, t2)
        }),
        Err(message) => Err(SeedError::Panicked { seed, message }),
    };
    let mut phases = Phases::default();
    let mut mark = started;
    phases.lap("simulate", &mut mark);
    let hung = matches!(sim, Err(SeedError::Hung { .. }));
    let sim = match sim {
        Ok(s) => s,
        Err(e) => SimResult {
            // A hung run keeps what it recorded up to the hang.
            history: tap
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .filter(|_| hung)
                .and_then(HistoryTap::snapshot)
                .unwrap_or_default(),
            stats: Stats::default(),
            // Named by the user's seed, not the scheduler's stream key.
            error: Some(
                match e {
                    SeedError::Panicked { message, .. } => SeedError::Panicked { seed, message },
                    SeedError::Hung { limit, .. } => SeedError::Hung { seed, limit },
                }
                .to_string(),
            ),
        },
    };
    let mut outcome = finish(scenario, seed, plan, sim, started, phases, mark);
    outcome.hung = hung;
    outcome
}

async fn simulate(sc: Arc<Scenario>, seed: u64, plan: FaultPlan, tap: Arc<Mutex<Option<HistoryTap>>>) -> SimResult {
    let rec = Recorder::new();
    *tap.lock().unwrap_or_else(|e| e.into_inner()) = Some(rec.tap());
    rec.set_meta("scenario", sc.name.clone());
    rec.set_meta("seed", seed.to_string());
    rec.set_meta("plan", plan.hash());
    let mut cfg = sc.ensemble_config(&rec);
    let kind = match sc.client() {
        Client::Sim => {
            // The simulated client records each notification as it reads
            // it off its connection, in order with the replies.
            rec.set_meta(WATCH_EVENTS, WATCH_EVENTS_WIRE.to_string());
            ClientKind::Sim
        }
        Client::Wire => {
            let Some(library) = zkdst_sim::client::library::library() else {
                return SimResult {
                    history: rec.take_history(),
                    stats: Stats::default(),
                    error: Some("client = \"wire\" needs the zkdst-wire build (see README)".into()),
                };
            };
            (library.enter)();
            rec.set_meta("client", library.name.to_string());
            cfg.wire = true;
            ClientKind::Library(library)
        }
    };
    let mut c = Cluster::start(cfg, rec.clone(), stream_key(seed, "topology"));
    let mut stats = Stats::default();
    if c.wait_for_leader(Duration::from_secs(60)).await.is_none() {
        c.shutdown();
        madsim::time::sleep(Duration::from_millis(1)).await;
        return SimResult {
            history: rec.take_history(),
            stats,
            error: Some("no leader elected within 60 s of the start".into()),
        };
    }
    let t0 = madsim::time::Instant::now();
    rec.set_meta("workload_start", rec.now_ns().to_string());
    let fault_ms = sc.fault_phase_ms();
    let stop = t0 + Duration::from_millis(fault_ms + sc.workload.liveness_s * 1000);
    let registry: ClientRegistry = Arc::new(Mutex::new(BTreeMap::new()));
    let shared = Arc::new(Shared::default());
    let client = crate::registry::client(sc.workload.recipe, sc.workload.variant);
    let workers = workload::spawn(
        client,
        kind,
        &mut c,
        &sc,
        seed,
        plan.max_ops_per_client,
        stop,
        &registry,
        &shared,
    );

    let conns = nemesis::Conns::Sessions(registry.clone());
    nemesis::run_plan(&mut c, &plan, &conns, t0, fault_ms, &mut stats).await;
    c.heal_all();
    if stats.get(Exercised::Fault(FaultKind::LatencySpike)) > 0 {
        c.restore_latency(DEFAULT_LATENCY.0, DEFAULT_LATENCY.1);
    }
    rec.set_meta("healed_at", rec.now_ns().to_string());

    // Liveness phase: the workload runs on until `stop`; then every worker
    // must finish its last operation within the liveness bound.
    let deadline = stop + Duration::from_millis(sc.check.params.liveness_bound_ms + 2000);
    let mut stuck = 0;
    for w in workers {
        let now = madsim::time::Instant::now();
        let left = deadline.saturating_duration_since(now);
        if madsim::time::timeout(left, w).await.is_err() {
            stuck += 1;
        }
    }
    if stuck > 0 {
        stats.add(Situation::WorkersStuck, stuck);
        let now = madsim::time::Instant::now();
        if deadline > now {
            madsim::time::sleep(deadline - now).await;
        }
    }
    rec.note(None, "end of run");
    for id in 1..=sc.ensemble.servers {
        if let Some(d) = c.disk_stats(id) {
            stats.add(Situation::DiskSnapshots, d.snapshots_synced);
            stats.add(Situation::DiskSnapSyncs, d.snaps_installed);
            stats.add(Situation::DiskLoadsFromSnapshot, d.loads_from_snapshot);
        }
    }
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;
    registry.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let _ = Recipe::ALL;
    SimResult {
        history: rec.take_history(),
        stats,
        error: None,
    }
}
