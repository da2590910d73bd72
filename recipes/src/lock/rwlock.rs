//! Shared (read/write) lock, herd-free, revocable (ZooKeeper recipes:
//! "Shared Locks", "Revocable Shared Locks").
//!
//! Contenders queue as `{guid}-read-N` / `{guid}-write-N`. A reader waits
//! only for the last earlier writer; a writer waits for the node just before
//! it, of either kind. Guarantees: a write guard never overlaps another
//! guard; read guards overlap only each other. Writers are not starved:
//! a reader queued after a writer waits for it.
//!
//! Faults handled: as [`crate::lock::Lock`] (guid-protected create,
//! wrap-aware order, re-read on wake and reconnect, cancel-safe acquire,
//! background release). Every guard watches its own node, so a revocation
//! request ([`RwLock::request_revoke`]) reaches the holder even across a
//! reconnect.
//!
//! ```ignore
//! let rw = RwLock::new(ctx.clone(), "/locks/table");
//! let r = rw.read().await?;
//! // ... read under r.token() ...
//! r.release().await?;
//! ```

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::RecipeResult;
use crate::guid::SeqName;
use crate::lock::core::{acquire, blocker_exclusive, with_timeout, Contender};
use crate::lock::guard::LockGuard;
use crate::lock::revoke::{queue, request_revoke, QueuedNode};
use crate::lock::steps::Exact;
use crate::runtime::Runtime;
use crate::zk::ZkClient;

pub const READ_KIND: &str = "read";
pub const WRITE_KIND: &str = "write";
const KINDS: &[&str] = &[READ_KIND, WRITE_KIND];

/// A reader is blocked by the last writer queued before it.
pub fn blocker_read(queue: &[SeqName], me: usize) -> Option<usize> {
    queue[..me].iter().rposition(|n| n.kind == WRITE_KIND)
}

/// A writer is blocked by whatever is queued just before it.
pub fn blocker_write(queue: &[SeqName], me: usize) -> Option<usize> {
    blocker_exclusive(queue, me)
}

/// A read/write lock rooted at a directory node.
#[derive(Clone)]
pub struct RwLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> RwLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        RwLock { ctx, dir: dir.into() }
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    async fn acquire(&self, kind: &str, blocker: crate::lock::core::Blocker) -> RecipeResult<LockGuard<C, R>> {
        acquire(
            &self.ctx,
            &Exact,
            Contender {
                dir: &self.dir,
                kind,
                kinds: KINDS,
                blocker,
                data: &[],
                grace: None,
            },
        )
        .await
    }

    /// Waits for a shared (read) guard.
    pub async fn read(&self) -> RecipeResult<LockGuard<C, R>> {
        self.acquire(READ_KIND, blocker_read).await
    }

    /// Waits for an exclusive (write) guard.
    pub async fn write(&self) -> RecipeResult<LockGuard<C, R>> {
        self.acquire(WRITE_KIND, blocker_write).await
    }

    pub async fn try_read_for(&self, limit: Duration) -> RecipeResult<Option<LockGuard<C, R>>> {
        with_timeout(&self.ctx, limit, self.read()).await
    }

    pub async fn try_write_for(&self, limit: Duration) -> RecipeResult<Option<LockGuard<C, R>>> {
        with_timeout(&self.ctx, limit, self.write()).await
    }

    /// The queue, holders first.
    pub async fn queue(&self) -> RecipeResult<Vec<QueuedNode>> {
        queue(&self.ctx, &self.dir, KINDS).await
    }

    /// Asks the holder of node `name` to release; `Ok(false)` if it is gone.
    pub async fn request_revoke(&self, name: &str) -> RecipeResult<bool> {
        request_revoke(&self.ctx, &self.dir, name).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guid::Guid;

    fn q(kinds: &[&str]) -> Vec<SeqName> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let g = Guid {
                    session: 2,
                    counter: i as u64,
                };
                SeqName {
                    name: format!("{}{:010}", g.prefix(kind), i),
                    guid: g,
                    kind: (*kind).to_string(),
                    sequence: i as i32,
                }
            })
            .collect()
    }

    #[test]
    fn readers_wait_only_for_earlier_writers() {
        let queue = q(&["read", "write", "read", "read", "write", "read"]);
        assert_eq!(blocker_read(&queue, 0), None);
        assert_eq!(blocker_read(&queue, 2), Some(1));
        assert_eq!(blocker_read(&queue, 3), Some(1));
        assert_eq!(blocker_read(&queue, 5), Some(4));
    }

    #[test]
    fn writers_wait_for_anything_before_them() {
        let queue = q(&["read", "read", "write", "write"]);
        assert_eq!(blocker_write(&queue, 2), Some(1));
        assert_eq!(blocker_write(&queue, 3), Some(2));
        assert_eq!(blocker_write(&q(&["write"]), 0), None);
    }
}
