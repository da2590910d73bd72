//! The holder's handle on a lock node (also a semaphore lease).

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::RecipeResult;
use crate::lock::steps::{Exact, Released, Steps};
use crate::monitor::{Hold, HoldState, LostReason};
use crate::nodes::{delete_own, spawn_delete_own, Deleted};
use crate::runtime::Runtime;
use crate::zk::path::basename;
use crate::zk::{Stat, StateWatch, ZkClient};

/// A held lock node. Dropping it without [`LockGuard::release`] deletes the
/// node in the background.
///
/// Holding the guard does not prove the lock is still held: a session can
/// expire while its owner is paused or partitioned (CURATOR-206). Check
/// [`LockGuard::is_lost`] / [`LockGuard::is_suspended`] before acting, and
/// pass [`LockGuard::token`] to the protected resource, which must reject
/// tokens lower than the highest it has seen.
pub struct LockGuard<C: ZkClient, R: Runtime, S: Steps = Exact> {
    ctx: Ctx<C, R>,
    steps: S,
    path: String,
    stat: Stat,
    sequence: i32,
    hold: Hold,
    released: bool,
}

impl<C: ZkClient, R: Runtime, S: Steps> LockGuard<C, R, S> {
    pub(crate) fn new(
        ctx: &Ctx<C, R>,
        steps: S,
        path: String,
        stat: Stat,
        sequence: i32,
        states: StateWatch,
        grace: Option<Duration>,
    ) -> Self {
        let hold = Hold::spawn(ctx, &path, states, grace);
        LockGuard {
            ctx: ctx.clone(),
            steps,
            path,
            stat,
            sequence,
            hold,
            released: false,
        }
    }

    /// The fencing token: the lock node's czxid. Zxids grow across the whole
    /// ensemble, so every later holder of this lock (of any lock, in fact)
    /// has a strictly larger token, even after the parent's sequence
    /// counter wraps.
    pub fn token(&self) -> i64 {
        self.stat.czxid
    }

    /// The node's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The node's name (no parent).
    pub fn name(&self) -> &str {
        basename(&self.path)
    }

    /// The node's sequence number (wraps at 2^31; prefer [`Self::token`]).
    pub fn sequence(&self) -> i32 {
        self.sequence
    }

    /// The node's Stat as the acquire read it: at creation, or when it
    /// found its node again after a ConnectionLoss (its data may have
    /// changed by then: a revocation request). Its czxid is the token.
    pub fn stat(&self) -> &Stat {
        &self.stat
    }

    pub fn state(&self) -> HoldState {
        self.hold.state()
    }

    /// Disconnected: the lock may be lost without our knowing yet. Pause
    /// work that needs it.
    pub fn is_suspended(&self) -> bool {
        self.hold.state() == HoldState::Suspended
    }

    /// Certainly lost: session ended, node deleted, or (with a grace)
    /// suspended too long.
    pub fn is_lost(&self) -> bool {
        matches!(self.hold.state(), HoldState::Lost(_))
    }

    /// Resolves when the lock is lost.
    pub async fn lost(&self) -> LostReason {
        self.hold.lost().await
    }

    /// Resolves as soon as the lock is suspended or lost.
    pub async fn suspended_or_lost(&self) -> HoldState {
        self.hold.suspended_or_lost().await
    }

    /// True once another client asked us to release (revocable locks).
    pub fn revoke_requested(&self) -> bool {
        self.hold.revoke_requested()
    }

    /// Resolves when another client asks us to release.
    pub async fn revocation_requested(&self) {
        self.hold.revocation_requested().await
    }

    /// Deletes the node (see [`Steps::release`]: ConnectionLoss is retried,
    /// then handed to a background task; never reported as released while
    /// the node may linger, CURATOR-202/678).
    pub async fn release(mut self) -> RecipeResult<Released> {
        self.released = true;
        self.steps.release(&self.ctx, &self.path).await
    }

    /// Like [`Self::release`], but keeps retrying inline until the node or
    /// the session is gone.
    pub async fn release_and_wait(mut self) -> Released {
        self.released = true;
        match delete_own(&self.ctx, &self.path).await {
            Deleted::Gone => Released::Deleted,
            Deleted::SessionEnded => Released::SessionEnded,
        }
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Drop for LockGuard<C, R, S> {
    fn drop(&mut self) {
        if !self.released && !self.ctx.session_lost() {
            spawn_delete_own(&self.ctx, &self.path);
        }
    }
}
