//! The exclusive lock and the semaphore as their workloads drive them: any
//! type that queues for a hold (the correct recipe, or the same recipe with
//! one planted step), so that a planted scenario and its correct twin run
//! the very same workload code.

use std::future::Future;
use std::time::Duration;

use futures::future::BoxFuture;
use zkdst_checker::history::Op;
use zkdst_recipes::lock::{Lock, LockGuard, Steps};
use zkdst_recipes::monitor::HoldState;
use zkdst_recipes::planted::{UnfencedGuard, UnfencedLock};
use zkdst_recipes::semaphore::Semaphore;
use zkdst_recipes::zk::ZkResult;
use zkdst_recipes::{RecipeError, RecipeResult};
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::SimCtx;

type R = SimRuntime;

/// Makes a client's lock object on a session (the client's id names it
/// across sessions for the planted lock that needs a name).
pub type MakeLock<L> = fn(SimCtx, u32) -> L;

/// A recipe a client queues in for a hold (a lock, a semaphore lease).
pub trait Contend: Send + Sync + 'static {
    type Held: Held;
    /// The history records the recipe's own ZooKeeper calls (false for a
    /// client library's lock, which makes them inside the library).
    const CALLS_RECORDED: bool = true;
    fn acquire(&self) -> impl Future<Output = RecipeResult<Self::Held>> + Send;
    /// Gives up after `limit` (`Ok(None)`): the acquire is cancelled.
    fn try_acquire_for(&self, limit: Duration) -> impl Future<Output = RecipeResult<Option<Self::Held>>> + Send;
    /// How many holds the recipe says it allows at once (a semaphore's
    /// `max_leases()`, as an application sizing its work would ask).
    fn max_holds(&self) -> Option<u32> {
        None
    }
}

/// A hold as the workload uses it.
pub trait Held: Send + 'static {
    /// The fencing token (for an unfenced hold: the node's czxid, which
    /// only the history sees).
    fn token(&self) -> i64;
    /// The resource gets a token it can check.
    fn fenced(&self) -> bool {
        true
    }
    /// The hold is known lost.
    fn is_lost(&self) -> bool;
    /// The hold is suspended (its client Disconnected), where the guard
    /// says so.
    fn is_suspended(&self) -> Option<bool> {
        None
    }
    /// Resolves when the guard says its hold is suspended or lost (`true`:
    /// lost), where the guard offers such a wait.
    fn suspended_or_lost(&self) -> Option<BoxFuture<'_, bool>> {
        None
    }
    /// A write to ZooKeeper that the recipe itself fences (zookeeper-client's
    /// `LockClient::set_data`: a multi that checks the lock node), if it
    /// offers one.
    fn guarded_set<'a>(&'a self, _path: &'a str, _data: &'a [u8]) -> Option<BoxFuture<'a, ZkResult<()>>> {
        None
    }
    /// The node the hold stands on, as the guard names it (`Op::HoldNode`),
    /// where the guard names one.
    fn node(&self, _lock: &str) -> Option<Op> {
        None
    }
    /// Dropping the hold releases it (in the background), as a scope exit
    /// does in an application.
    fn drop_releases(&self) -> bool {
        false
    }
    fn release(self) -> impl Future<Output = Result<(), RecipeError>> + Send;
}

impl<S: Steps> Contend for Lock<AnyClient, R, S> {
    type Held = LockGuard<AnyClient, R, S>;
    async fn acquire(&self) -> RecipeResult<Self::Held> {
        Lock::acquire(self).await
    }
    async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<Self::Held>> {
        Lock::try_acquire_for(self, limit).await
    }
}

impl<S: Steps> Contend for Semaphore<AnyClient, R, S> {
    type Held = LockGuard<AnyClient, R, S>;
    async fn acquire(&self) -> RecipeResult<Self::Held> {
        Semaphore::acquire(self).await
    }
    async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<Self::Held>> {
        Semaphore::try_acquire_for(self, limit).await
    }
    fn max_holds(&self) -> Option<u32> {
        Some(Semaphore::max_leases(self))
    }
}

impl Contend for UnfencedLock<AnyClient, R> {
    type Held = UnfencedGuard<AnyClient, R>;
    async fn acquire(&self) -> RecipeResult<Self::Held> {
        UnfencedLock::acquire(self).await
    }
    async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<Self::Held>> {
        UnfencedLock::try_acquire_for(self, limit).await
    }
}

impl<S: Steps> Held for LockGuard<AnyClient, R, S> {
    fn token(&self) -> i64 {
        LockGuard::token(self)
    }
    fn is_lost(&self) -> bool {
        LockGuard::is_lost(self)
    }
    fn is_suspended(&self) -> Option<bool> {
        Some(LockGuard::is_suspended(self))
    }
    fn suspended_or_lost(&self) -> Option<BoxFuture<'_, bool>> {
        Some(Box::pin(async move {
            matches!(LockGuard::suspended_or_lost(self).await, HoldState::Lost(_))
        }))
    }
    fn node(&self, lock: &str) -> Option<Op> {
        Some(hold_node(self, lock))
    }
    fn drop_releases(&self) -> bool {
        true
    }
    async fn release(self) -> Result<(), RecipeError> {
        LockGuard::release(self).await.map(|_| ())
    }
}

/// What `guard` says of its node, for the history (`hold-node` checks it
/// against the commit log).
pub fn hold_node<S: Steps>(guard: &LockGuard<AnyClient, R, S>, lock: &str) -> Op {
    Op::HoldNode {
        lock: lock.to_string(),
        token: guard.token(),
        path: guard.path().to_string(),
        name: guard.name().to_string(),
        sequence: guard.sequence(),
        stat: *guard.stat(),
    }
}

/// The application that misuses the lock never checks its hold either.
impl Held for UnfencedGuard<AnyClient, R> {
    fn token(&self) -> i64 {
        self.czxid_for_history()
    }
    fn fenced(&self) -> bool {
        false
    }
    fn is_lost(&self) -> bool {
        false
    }
    async fn release(self) -> Result<(), RecipeError> {
        UnfencedGuard::release(self).await.map(|_| ())
    }
}
