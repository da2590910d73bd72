//! Helpers shared by the conformance tests.

use std::future::Future;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use zkdst_conformance::{Outcome, RealServer, ServerOptions};
use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::{SessionState, StateWatch, ZkClient, ZkError};

static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on a fresh 2-worker tokio runtime, bounded by `limit`.
pub(crate) fn run<F: Future<Output = ()>>(limit: Duration, f: F) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        tokio::time::timeout(limit, f)
            .await
            .expect("test exceeded its time limit");
    });
}

pub(crate) fn standalone(options: ServerOptions) -> RealServer {
    RealServer::start(options).unwrap_or_else(|e| panic!("starting ZooKeeper: {e}"))
}

pub(crate) async fn connect(connect: &str, session_timeout_ms: u64) -> RealClient {
    RealClient::connect_with(
        connect,
        RealOptions {
            session_timeout: Duration::from_millis(session_timeout_ms),
            ..RealOptions::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("connecting to {connect}: {e}"))
}

/// Waits (bounded) for the next transition to `want` (the watch's current
/// state does not count); the states seen, starting with the current one.
pub(crate) async fn wait_state(w: &mut StateWatch, want: SessionState, limit: Duration) -> Vec<SessionState> {
    let mut seen = vec![w.state()];
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, w.changed()).await {
            Ok(s) => {
                seen.push(s);
                if s == want || s.is_terminal() {
                    return seen;
                }
            }
            Err(_) => return seen,
        }
    }
}

/// Waits (bounded) until a read succeeds: the client is connected again.
pub(crate) async fn wait_usable(zk: &RealClient, limit: Duration) -> Result<(), ZkError> {
    let deadline = Instant::now() + limit;
    loop {
        match zk.exists("/").await {
            Ok(_) => return Ok(()),
            Err(ZkError::ConnectionLoss) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

pub(crate) use zkdst_conformance::seeded::{env_u64, run_seed, seeded_runner, sim_seed};

pub(crate) fn outcome_kind(o: &Outcome) -> String {
    match o {
        Outcome::Error(e) | Outcome::MultiFailed { error: e, .. } => {
            let multi = if matches!(o, Outcome::MultiFailed { .. }) {
                "multi "
            } else {
                ""
            };
            format!("{multi}{}", e.name())
        }
        Outcome::Created { .. } => "Created".into(),
        Outcome::Deleted => "Deleted".into(),
        Outcome::Exists(s) => if s.is_some() { "Exists" } else { "ExistsNone" }.into(),
        Outcome::Data { .. } => "Data".into(),
        Outcome::Children { .. } => "Children".into(),
        Outcome::SetData(_) => "SetData".into(),
        Outcome::Multi(_) => "Multi".into(),
        Outcome::Reads(_) => "Reads".into(),
        Outcome::Synced => "Synced".into(),
        Outcome::WatchAdded => "WatchAdded".into(),
        Outcome::Closed => "Closed".into(),
        Outcome::Fault { state, .. } => format!("Fault {state:?}"),
        Outcome::NotRun => "NotRun".into(),
    }
}
