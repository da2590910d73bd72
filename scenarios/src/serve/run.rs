//! One served run: the scenario's ensemble and fault plan, with real
//! clients (live) or their recorded arrivals (replay) in place of the
//! workload.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use futures::future::Either;
use zkdst_checker::history::History;
use zkdst_model::Exercised;
use zkdst_model::FaultKind;
use zkdst_sim::cluster::Cluster;
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::{run_seed_within, SeedError};

use super::bridge::{Bridge, Pumped, Source};
use super::frames::Arrival;
use super::pace::Pacer;
use super::sockets::{Inbound, Writers};
use crate::nemesis::{self, Conns, DEFAULT_LATENCY};
use crate::plan::FaultPlan;
use crate::scenario::Scenario;
use crate::stats::Stats;
use crate::streams::stream_key;

/// What the served ensemble is fed.
pub enum Feed {
    Live {
        inbound: std::sync::mpsc::Receiver<Inbound>,
        writers: Writers,
        interrupt: &'static AtomicBool,
    },
    Replay(Vec<Arrival>),
}

/// What a served run recorded.
#[derive(Debug)]
pub struct Served {
    /// The servers' record: reproducible from the arrivals.
    pub history: History,
    pub pumped: Pumped,
    pub stats: Stats,
    /// The run itself failed (no leader, a panic).
    pub error: Option<String>,
}

/// The history's `client` meta of a served run.
pub const SERVED_CLIENT: &str = "served";

/// Simulated time the bridge serves: the fault phase and the liveness phase.
pub fn served_length(sc: &Scenario) -> Duration {
    Duration::from_millis(sc.fault_phase_ms() + sc.workload.liveness_s * 1000)
}

/// Runs the served ensemble of `sc` under `seed` on a fresh thread (the
/// caller's blocks until it ends). `ready` hears once the ensemble has a
/// leader and the bridge takes connections, with the monotonic clock's
/// reading (ns) at simulated time zero. The bridge serves for `length`.
pub fn simulate(
    sc: &Scenario,
    seed: u64,
    plan: &FaultPlan,
    feed: Feed,
    ready: Option<Sender<u64>>,
    length: Duration,
) -> Served {
    let (sc2, plan2) = (Arc::new(sc.clone()), plan.clone());
    let limit = length + Duration::from_secs(180);
    let r = run_seed_within(stream_key(seed, "scheduler"), Some(limit), Some(limit), move || {
        served(sc2, seed, plan2, feed, ready, length)
    });
    r.unwrap_or_else(|e| Served {
        history: History::default(),
        pumped: Pumped::default(),
        stats: Stats::default(),
        error: Some(
            match e {
                SeedError::Panicked { message, .. } => SeedError::Panicked { seed, message },
                SeedError::Hung { limit, .. } => SeedError::Hung { seed, limit },
            }
            .to_string(),
        ),
    })
}

async fn served(
    sc: Arc<Scenario>,
    seed: u64,
    plan: FaultPlan,
    feed: Feed,
    ready: Option<Sender<u64>>,
    length: Duration,
) -> Served {
    let rec = Recorder::new();
    rec.set_meta("scenario", sc.name.clone());
    rec.set_meta("seed", seed.to_string());
    rec.set_meta("plan", plan.hash());
    rec.set_meta("client", SERVED_CLIENT);
    let mut cfg = sc.ensemble_config(&rec);
    cfg.wire = true;
    let mut c = Cluster::start(cfg, rec.clone(), stream_key(seed, "topology"));
    let mut stats = Stats::default();
    if c.wait_for_leader(Duration::from_secs(60)).await.is_none() {
        c.shutdown();
        madsim::time::sleep(Duration::from_millis(1)).await;
        return Served {
            history: rec.take_history(),
            pumped: Pumped::default(),
            stats,
            error: Some("no leader elected within 60 s of the start".into()),
        };
    }
    let mut nodes = BTreeMap::new();
    let mut ids = BTreeMap::new();
    for id in 0..sc.ensemble.clients {
        let n = c.client_node(id);
        ids.insert(id, n.id());
        nodes.insert(id, n);
    }
    let source = match feed {
        Feed::Live {
            inbound,
            writers,
            interrupt,
        } => Source::Live {
            inbound,
            writers,
            interrupt,
        },
        Feed::Replay(log) => Source::Replay(VecDeque::from(log)),
    };
    let t0 = madsim::time::Instant::now();
    rec.set_meta("workload_start", rec.now_ns().to_string());
    let pacer = Pacer::start();
    if let Some(r) = ready {
        let _ = r.send(pacer.start_ns());
    }
    let pump = madsim::task::spawn(Bridge::new(source, nodes).run(length, pacer));
    let fault_ms = sc.fault_phase_ms();
    let conns = Conns::Served(ids);
    let pumped = {
        let nemesis = async {
            nemesis::run_plan(&mut c, &plan, &conns, t0, fault_ms, &mut stats).await;
            c.heal_all();
            if stats.get(Exercised::Fault(FaultKind::LatencySpike)) > 0 {
                c.restore_latency(DEFAULT_LATENCY.0, DEFAULT_LATENCY.1);
            }
            rec.set_meta("healed_at", rec.now_ns().to_string());
            futures::future::pending::<std::convert::Infallible>().await
        };
        futures::pin_mut!(nemesis);
        match futures::future::select(pump, nemesis).await {
            Either::Left((p, _)) => p,
            Either::Right((never, _)) => match never {},
        }
    };
    let (pumped, error) = match pumped {
        Ok(p) => (p, None),
        Err(e) => (Pumped::default(), Some(format!("the bridge failed: {e}"))),
    };
    rec.note(None, "end of run");
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;
    Served {
        history: rec.take_history(),
        pumped,
        stats,
        error,
    }
}
