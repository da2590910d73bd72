//! The side-by-side benchmark's workload (`cargo bench -p zkdst-conformance
//! --bench real_vs_sim`): one closed loop per session, written once over
//! [`ZkClient`] and [`Clock`], so the real ensemble and the simulated one
//! run the very same code.
//!
//! Each session cycles create → setData → getData → delete on a fresh
//! child of its own parent (three writes, one read) until the sessions
//! together have completed the target number of successful operations.
//! A failed operation is counted, not retried: the next one in the cycle
//! goes on (a delete of a node whose create was lost answers NoNode). After
//! an error that says the connection is gone, the session backs off
//! briefly, as an application would, instead of spinning.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zkdst_recipes::runtime::Clock;
use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError, ANY_VERSION};

/// The parent of every session's nodes.
pub const ROOT: &str = "/bench";

/// How long a session waits after ConnectionLoss-like errors.
const BACKOFF: Duration = Duration::from_millis(5);

/// Successful and failed operations across all sessions.
#[derive(Debug, Default)]
pub struct Tally {
    done: AtomicU64,
    failed: AtomicU64,
}

impl Tally {
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// The one-time setup: `ROOT` (any session may do it; NodeExists is fine).
pub async fn create_root<C: ZkClient>(zk: &C) -> Result<(), ZkError> {
    match zk.create(ROOT, b"", CreateMode::Persistent).await {
        Ok(_) | Err(ZkError::NodeExists) => Ok(()),
        Err(e) => Err(e),
    }
}

/// One session's loop under `parent` (a child of [`ROOT`], unique to the
/// session and run): runs until `tally` has `target` successes. Retries
/// the parent's creation until it exists, so that a session starting
/// during a failover still takes part.
pub async fn closed_loop<C: ZkClient, K: Clock>(zk: &C, clock: &K, parent: &str, target: u64, tally: &Tally) {
    let payload = vec![b'x'; 64];
    while tally.done() < target {
        match zk.create(parent, b"", CreateMode::Persistent).await {
            Ok(_) | Err(ZkError::NodeExists) => break,
            Err(_) => clock.sleep(BACKOFF).await,
        }
    }
    let mut k = 0u64;
    'cycles: while tally.done() < target {
        let node = format!("{parent}/n{k}");
        k += 1;
        for step in 0..4 {
            let result = match step {
                0 => zk.create(&node, &payload, CreateMode::Persistent).await.map(drop),
                1 => zk.set_data(&node, &payload, ANY_VERSION).await.map(drop),
                2 => zk.get_data(&node).await.map(drop),
                _ => zk.delete(&node, ANY_VERSION).await,
            };
            match result {
                Ok(()) => {
                    tally.done.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    tally.failed.fetch_add(1, Ordering::Relaxed);
                    if !matches!(e, ZkError::NoNode | ZkError::NodeExists) {
                        clock.sleep(BACKOFF).await;
                    }
                }
            }
            if tally.done() >= target {
                break 'cycles;
            }
        }
    }
}
