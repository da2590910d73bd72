//! Runs one seed of a simulation the way madsim-notes.md requires: a fresh
//! OS thread per seed (std HashMap seeds are per thread), a fresh runtime,
//! and a caught panic turned into an error with the seed.
//!
//! A seed also has a real-time limit. A simulated task that loops over
//! futures that are always ready never yields to madsim's scheduler, so
//! virtual time stands still and no virtual time limit can end the seed:
//! without the real-time limit one such recipe bug hangs a whole campaign.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// The real-time limit of one seed, unless `ZKDST_SEED_WALL_S` says
/// otherwise: far beyond any seed of a shipped scenario (they take well
/// under a second in release builds), so only a seed that cannot finish
/// meets it.
pub const DEFAULT_WALL_LIMIT: Duration = Duration::from_secs(300);

/// Why a seed did not produce a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    /// A simulated task panicked (or the runtime detected a deadlock:
    /// "all tasks will block forever").
    #[error("seed {seed} panicked: {message}")]
    Panicked { seed: u64, message: String },
    /// The seed ran past its real-time limit; its thread was abandoned
    /// (a thread cannot be stopped from outside) and keeps its core busy
    /// until the process exits.
    #[error(
        "seed {seed} was still running after {} s of real time: a simulated task is likely spinning \
         (a loop over futures that are always ready never yields to the scheduler, so virtual time \
         stands still); `--trace debug` on a replay shows where it stopped making progress \
         (ZKDST_SEED_WALL_S sets the limit)",
        limit.as_secs_f64()
    )]
    Hung { seed: u64, limit: Duration },
}

/// The real-time limit: `ZKDST_SEED_WALL_S` (seconds), or
/// [`DEFAULT_WALL_LIMIT`].
pub fn wall_limit() -> Result<Duration, String> {
    match std::env::var("ZKDST_SEED_WALL_S") {
        Err(_) => Ok(DEFAULT_WALL_LIMIT),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!(
                "ZKDST_SEED_WALL_S={v:?}: expected a positive number of seconds"
            )),
        },
    }
}

/// Runs `f` under a madsim runtime seeded with `seed`, on a fresh thread.
/// `time_limit` bounds the virtual time; the real time is not bounded (a
/// benchmark's seed may rightly run long): see [`run_seed_within`].
pub fn run_seed<F, Fut, T>(seed: u64, time_limit: Option<Duration>, f: F) -> Result<T, SeedError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
    T: Send + 'static,
{
    run_seed_within(seed, time_limit, None, f)
}

/// [`run_seed`], failing as [`SeedError::Hung`] past `wall` of real time
/// (the scenario runner passes [`wall_limit`]).
pub fn run_seed_within<F, Fut, T>(
    seed: u64,
    time_limit: Option<Duration>,
    wall: Option<Duration>,
    f: F,
) -> Result<T, SeedError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
    T: Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name(format!("seed-{seed}"))
        .stack_size(16 << 20)
        .spawn(move || {
            let out = std::panic::catch_unwind(AssertUnwindSafe(move || {
                let mut rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
                if let Some(limit) = time_limit {
                    rt.set_time_limit(limit);
                }
                rt.block_on(f())
            }));
            let _ = tx.send(out);
        })
        .map_err(|e| SeedError::Panicked {
            seed,
            message: format!("could not start a thread: {e}"),
        })?;
    let received = match wall {
        Some(wall) => rx.recv_timeout(wall),
        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match received {
        Ok(out) => {
            // The result was the thread's last act: it ends at once.
            let _ = thread.join();
            out.map_err(|payload| SeedError::Panicked {
                seed,
                message: panic_message(&payload),
            })
        }
        Err(RecvTimeoutError::Timeout) => Err(SeedError::Hung {
            seed,
            limit: wall.unwrap_or_default(),
        }),
        Err(RecvTimeoutError::Disconnected) => Err(SeedError::Panicked {
            seed,
            message: "the seed's thread ended without a result".into(),
        }),
    }
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_seed_that_finishes_returns_its_value() {
        let v = run_seed_within(7, None, Some(Duration::from_secs(60)), || async {
            madsim::time::sleep(Duration::from_secs(3600)).await;
            42
        });
        assert_eq!(v, Ok(42));
    }

    #[test]
    fn a_panicking_seed_is_an_error_naming_it() {
        let e = run_seed_within(3, None, Some(Duration::from_secs(60)), || async { panic!("boom") });
        assert_eq!(
            e,
            Err(SeedError::Panicked {
                seed: 3,
                message: "boom".into()
            })
        );
    }

    #[test]
    fn a_spinning_seed_is_reported_hung_not_waited_on_for_ever() {
        // Spins without ever returning Pending (virtual time stands still),
        // until the test lets it go so that it does not keep a core busy.
        let release = Arc::new(AtomicBool::new(false));
        let r2 = release.clone();
        let e = run_seed_within(
            5,
            Some(Duration::from_secs(1)),
            Some(Duration::from_millis(300)),
            move || async move {
                while !r2.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            },
        );
        release.store(true, Ordering::Relaxed);
        assert!(matches!(e, Err(SeedError::Hung { seed: 5, .. })), "{e:?}");
        assert!(e.unwrap_err().to_string().contains("spinning"));
    }

    #[test]
    fn a_hung_seed_keeps_what_it_recorded_before_the_spin() {
        use crate::recorder::{HistoryTap, Recorder};
        use std::sync::Mutex;
        use zkdst_history::Op;
        let release = Arc::new(AtomicBool::new(false));
        let r2 = release.clone();
        let slot: Arc<Mutex<Option<HistoryTap>>> = Arc::default();
        let s2 = slot.clone();
        let e = run_seed_within(
            6,
            Some(Duration::from_secs(1)),
            Some(Duration::from_millis(300)),
            move || async move {
                let rec = Recorder::new();
                *s2.lock().unwrap() = Some(rec.tap());
                rec.set_meta("scenario", "spin");
                rec.invoke(1, None, Op::Sync { path: "/x".into() });
                while !r2.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            },
        );
        let h = slot.lock().unwrap().as_ref().and_then(HistoryTap::snapshot);
        release.store(true, Ordering::Relaxed);
        assert!(matches!(e, Err(SeedError::Hung { seed: 6, .. })), "{e:?}");
        let h = h.expect("the history recorded before the spin");
        assert_eq!(h.events.len(), 1);
        assert_eq!(h.meta.get("scenario").map(String::as_str), Some("spin"));
    }
}
