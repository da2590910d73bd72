//! The recipes' runtime (`Clock` + `Spawn`) on madsim: virtual time, and
//! background tasks on the current node — so a recipe's cleanup work dies
//! with its client node, as it would with a real process.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
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
        drop(madsim::task::spawn(Background(Box::pin(fut))));
    }
}

thread_local! {
    /// Set while a recipe's background task is being polled.
    static IN_BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// True while a task a recipe spawned (its cleanup, a hold's monitor, a
/// watched value's reader) is running, rather than the call its client is
/// making: the recorder marks what such a task sends, so that a check of
/// one call (its retry budget) sees only that call's requests. madsim
/// polls one task at a time on one thread, so the flag is exact.
pub fn in_background() -> bool {
    IN_BACKGROUND.with(Cell::get)
}

/// A recipe's background task: polled with [`in_background`] set.
struct Background<F>(Pin<Box<F>>);

impl<F: Future<Output = ()>> Future for Background<F> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let _restore = Restore(IN_BACKGROUND.with(|b| b.replace(true)));
        self.0.as_mut().poll(cx)
    }
}

/// Puts the flag back as it was, even if the task's poll panics.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        IN_BACKGROUND.with(|b| b.set(self.0));
    }
}
