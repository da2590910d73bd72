//! What recipes need from the runtime: virtual-or-real time and a way to run
//! background work. The simulator implements these on madsim, the real
//! adapter on tokio; recipes never touch either directly, which keeps them
//! deterministic under simulation.

use std::future::Future;
use std::time::Duration;

/// A source of time. Under simulation both methods are virtual.
pub trait Clock: Clone + Send + Sync + 'static {
    /// Completes after `d` has elapsed.
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;
    /// Time elapsed since an arbitrary, fixed origin; never goes backwards.
    fn now(&self) -> Duration;
}

/// Runs a future to completion in the background, detached from the caller.
///
/// Recipes spawn only work that must outlive a dropped handle or a cancelled
/// call (deleting a lock node after ConnectionLoss or cancellation) and
/// session monitors that end when their handle is dropped.
pub trait Spawn: Clone + Send + Sync + 'static {
    fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static);
}

/// Everything a recipe needs from its runtime. Implemented for every type
/// that is both a [`Clock`] and a [`Spawn`].
pub trait Runtime: Clock + Spawn {}

impl<T: Clock + Spawn> Runtime for T {}
