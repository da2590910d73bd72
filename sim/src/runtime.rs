//! The recipes' runtime (`Clock` + `Spawn`) on madsim: virtual time, and
//! background tasks on the current node — so a recipe's cleanup work dies
//! with its client node, as it would with a real process.

use std::future::Future;
use std::time::Duration;

use zkdst_recipes::runtime::{Clock, Spawn};

use crate::clock::SimClock;

/// madsim's clock and spawner. Create it inside the simulation.
#[derive(Debug, Clone)]
pub struct SimRuntime {
    clock: SimClock,
}

impl SimRuntime {
    pub fn new() -> Self {
        SimRuntime {
            clock: SimClock::start(),
        }
    }
}

impl Default for SimRuntime {
    fn default() -> Self {
        SimRuntime::new()
    }
}

impl Clock for SimRuntime {
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        madsim::time::sleep(d)
    }

    fn now(&self) -> Duration {
        self.clock.elapsed()
    }
}

impl Spawn for SimRuntime {
    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        // Detached: the JoinHandle is dropped; the task runs on this node.
        drop(madsim::task::spawn(fut));
    }
}
