//! Counting semaphore with leases (Curator's InterProcessSemaphoreV2 shape,
//! without its internal lock).
//!
//! Each acquirer creates an ephemeral sequential `{guid}-lease-N` under the
//! directory; the first `max_leases` nodes in creation order hold leases.
//! A node granted at position `i < max_leases` stays below `max_leases`
//! (later nodes only append), so at most `max_leases` leases are held at a
//! time — provided every client uses the same `max_leases`.
//!
//! Faults handled: guid-protected create (no duplicate node after
//! ConnectionLoss), no leaked lease on a cancelled or timed-out acquire
//! (background delete by guid, CURATOR-315/595), a reconnect re-reads the
//! directory, wrap-aware order, release retried in the background. Leases
//! die with their session; a [`Lease`] reports suspension and loss like a
//! lock guard.
//!
//! Waiters watch the directory's children (each release wakes every
//! waiter): a lease can be granted by any holder's release, so watching
//! one predecessor is not enough.
//!
//! ```ignore
//! let sem = Semaphore::new(ctx.clone(), "/sem/db", 3)?;
//! let lease = sem.acquire().await?;
//! lease.release().await?;
//! ```

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::lock::core::with_timeout;
use crate::lock::steps::{Exact, Steps};
use crate::lock::LockGuard;
use crate::runtime::Runtime;
use crate::wait::Woken;
use crate::zk::path::join;
use crate::zk::{CreateMode, ZkClient};

/// A held lease: a [`LockGuard`] on the lease node.
pub type Lease<C, R, S = Exact> = LockGuard<C, R, S>;

pub const LEASE_KIND: &str = "lease";

/// Whether the node at position `me` (creation order) holds a lease.
pub fn lease_granted(me: usize, max_leases: u32) -> bool {
    u32::try_from(me).is_ok_and(|m| m < max_leases)
}

#[derive(Clone)]
pub struct Semaphore<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    dir: String,
    max_leases: u32,
    steps: S,
}

impl<C: ZkClient, R: Runtime> Semaphore<C, R> {
    /// A semaphore of `max_leases` (at least 1) leases under `dir`.
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>, max_leases: u32) -> RecipeResult<Self> {
        if max_leases == 0 {
            return Err(RecipeError::InvalidArgument("max_leases must be at least 1".into()));
        }
        Ok(Semaphore::with_steps(ctx, dir, max_leases, Exact))
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Semaphore<C, R, S> {
    /// A semaphore whose steps are done as `steps` does them; `max_leases`
    /// at least 1.
    pub fn with_steps(ctx: Ctx<C, R>, dir: impl Into<String>, max_leases: u32, steps: S) -> Self {
        Semaphore {
            ctx,
            dir: dir.into(),
            max_leases: max_leases.max(1),
            steps,
        }
    }

    pub fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// Waits for a lease.
    pub async fn acquire(&self) -> RecipeResult<Lease<C, R, S>> {
        let (ctx, steps) = (&self.ctx, &self.steps);
        let mut states = ctx.client().state_watch();
        let guid = steps.guid(ctx).await?;
        let orphan = steps.orphan_guard(ctx, &self.dir, guid);
        let (name, stat) = steps
            .create(ctx, &self.dir, &guid, LEASE_KIND, &[], CreateMode::EphemeralSequential)
            .await?;
        let sequence = SeqName::parse(&name, &[LEASE_KIND]).map_or(0, |n| n.sequence);
        loop {
            let (children, _, watch) = ctx.retry(|| ctx.client().get_children_watch(&self.dir)).await?;
            let queue = SeqName::parse_sorted(&children, &[LEASE_KIND]);
            let Some(me) = queue.iter().position(|n| n.name == name) else {
                return Err(if ctx.session_lost() {
                    RecipeError::SessionLost
                } else {
                    RecipeError::NodeGone(join(&self.dir, &name))
                });
            };
            if lease_granted(me, self.max_leases) {
                if let Some(o) = orphan {
                    o.disarm();
                }
                return Ok(LockGuard::new(
                    ctx,
                    steps.clone(),
                    join(&self.dir, &name),
                    stat,
                    sequence,
                    states,
                    steps.grace(None),
                ));
            }
            if steps.woken(watch, &mut states).await == Woken::SessionLost {
                return Err(RecipeError::SessionLost);
            }
        }
    }

    /// Like [`Self::acquire`], giving up after `limit` (`Ok(None)`); the
    /// abandoned lease node is deleted in the background.
    pub async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<Lease<C, R, S>>> {
        with_timeout(&self.ctx, limit, self.acquire()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_max_leases_positions_are_granted() {
        assert!(lease_granted(0, 1));
        assert!(!lease_granted(1, 1));
        assert!(lease_granted(2, 3));
        assert!(!lease_granted(3, 3));
    }
}
