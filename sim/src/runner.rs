//! Runs one seed of a simulation the way madsim-notes.md requires: a fresh
//! OS thread per seed (std HashMap seeds are per thread), a fresh runtime,
//! and a caught panic turned into an error with the seed.

use std::future::Future;
use std::time::Duration;

/// Why a seed did not produce a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    /// A simulated task panicked (or the runtime detected a deadlock:
    /// "all tasks will block forever").
    #[error("seed {seed} panicked: {message}")]
    Panicked { seed: u64, message: String },
}

/// Runs `f` under a madsim runtime seeded with `seed`, on a fresh thread.
/// `time_limit` bounds the virtual time.
pub fn run_seed<F, Fut, T>(seed: u64, time_limit: Option<Duration>, f: F) -> Result<T, SeedError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
    T: Send + 'static,
{
    let joined = std::thread::Builder::new()
        .name(format!("seed-{seed}"))
        .stack_size(16 << 20)
        .spawn(move || {
            let mut rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
            if let Some(limit) = time_limit {
                rt.set_time_limit(limit);
            }
            rt.block_on(f())
        })
        .map_err(|e| SeedError::Panicked {
            seed,
            message: format!("could not start a thread: {e}"),
        })?
        .join();
    joined.map_err(|payload| SeedError::Panicked {
        seed,
        message: panic_message(&payload),
    })
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
