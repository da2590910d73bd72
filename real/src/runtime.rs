//! The recipes' runtime ([`Clock`] + [`Spawn`]) on tokio, for running
//! recipes against a real ZooKeeper: real time, and background tasks on the
//! runtime the client was created in.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use zkdst_recipes::runtime::{Clock, Spawn};

/// tokio's clock and spawner. Create it inside a tokio runtime (or from a
/// [`Handle`]).
#[derive(Debug, Clone)]
pub struct TokioRuntime {
    origin: Instant,
    handle: Handle,
}

impl TokioRuntime {
    /// Uses the current tokio runtime. Panics outside one.
    pub fn new() -> Self {
        Self::with_handle(Handle::current())
    }

    pub fn with_handle(handle: Handle) -> Self {
        TokioRuntime {
            origin: Instant::now(),
            handle,
        }
    }
}

impl Default for TokioRuntime {
    fn default() -> Self {
        TokioRuntime::new()
    }
}

impl Clock for TokioRuntime {
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }

    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

impl Spawn for TokioRuntime {
    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        // Detached: the task runs until done or until the runtime shuts down.
        drop(self.handle.spawn(fut));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_and_spawns_on_tokio() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let r = TokioRuntime::new();
            let before = r.now();
            r.sleep(Duration::from_millis(5)).await;
            assert!(r.now() >= before + Duration::from_millis(5));
            let (tx, rx) = tokio::sync::oneshot::channel();
            r.spawn(async move {
                let _ = tx.send(7);
            });
            assert_eq!(rx.await, Ok(7));
        });
    }
}
