//! Exclusive lock, herd-free (ZooKeeper recipes: "Locks").
//!
//! Guarantees, while sessions behave: at most one [`LockGuard`] per lock
//! directory is held and not lost at any time; waiters are served in
//! creation order, each woken only by its predecessor's release.
//!
//! Does **not** guarantee that a holder knows when it stopped holding: a
//! holder paused past its session timeout keeps its guard object while
//! another client acquires (CURATOR-206). The guard's fencing
//! [`LockGuard::token`] (czxid, ensemble-wide monotonic) is the defence.
//!
//! Faults handled:
//! - ConnectionLoss on the create: the node is named `{guid}-lock-` and found
//!   again by guid and `ephemeralOwner` before any re-create (CURATOR-45);
//!   a node of an older session is never adopted (CURATOR-696).
//! - Predecessor already gone when the watch is set: re-read and loop.
//! - Reconnect: re-read the queue (a lost watch cannot hang the waiter).
//! - Sequence counter wrap: ordering is wrap-aware (ZOOKEEPER-4372).
//! - Cancelled or timed-out acquire: the node is deleted in the background
//!   (CURATOR-79/462).
//! - ConnectionLoss on release: retried, then retried in the background
//!   until the node or the session is gone (CURATOR-202).
//! - Disconnect / expiry while held: the guard turns suspended / lost.
//!
//! ```ignore
//! let lock = Lock::new(ctx.clone(), "/locks/orders");
//! let guard = lock.acquire().await?;
//! resource.write(guard.token(), data).await?; // fenced
//! guard.release().await?;
//! ```

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::RecipeResult;
use crate::lock::core::{acquire, blocker_exclusive, with_timeout, Contender};
use crate::lock::guard::LockGuard;
use crate::lock::revoke::{queue, request_revoke, QueuedNode};
use crate::lock::steps::{Exact, Steps};
use crate::runtime::Runtime;
use crate::zk::ZkClient;

/// Node kind of exclusive-lock contenders.
pub const LOCK_KIND: &str = "lock";

/// An exclusive lock rooted at a directory node. `S`: how its delicate
/// steps are done (always [`Exact`] outside the harness's planted types).
#[derive(Clone)]
pub struct Lock<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    dir: String,
    steps: S,
}

impl<C: ZkClient, R: Runtime> Lock<C, R> {
    /// A lock whose contenders queue under `dir` (created on first use).
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        Lock::with_steps(ctx, dir, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Lock<C, R, S> {
    /// A lock whose steps are done as `steps` does them.
    pub fn with_steps(ctx: Ctx<C, R>, dir: impl Into<String>, steps: S) -> Self {
        Lock {
            ctx,
            dir: dir.into(),
            steps,
        }
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Waits until the lock is ours.
    pub async fn acquire(&self) -> RecipeResult<LockGuard<C, R, S>> {
        acquire(
            &self.ctx,
            &self.steps,
            Contender {
                dir: &self.dir,
                kind: LOCK_KIND,
                kinds: &[LOCK_KIND],
                blocker: blocker_exclusive,
                data: &[],
                grace: None,
            },
        )
        .await
    }

    /// Like [`Self::acquire`], giving up after `limit` (`Ok(None)`); the
    /// abandoned node is deleted in the background.
    pub async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<LockGuard<C, R, S>>> {
        with_timeout(&self.ctx, limit, self.acquire()).await
    }

    /// The queue, holder first.
    pub async fn queue(&self) -> RecipeResult<Vec<QueuedNode>> {
        queue(&self.ctx, &self.dir, &[LOCK_KIND]).await
    }

    /// Asks the holder of node `name` to release (see [`crate::lock::revoke`]);
    /// `Ok(false)` if it is gone.
    pub async fn request_revoke(&self, name: &str) -> RecipeResult<bool> {
        request_revoke(&self.ctx, &self.dir, name).await
    }
}
