//! A broken semaphore.

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::nodes::create_all;
use crate::planted::PlainGuard;
use crate::runtime::Runtime;
use crate::semaphore::{lease_granted, LEASE_KIND};
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, ZkClient};

/// Leaked lease (CURATOR-315, CURATOR-595): [`crate::semaphore::Semaphore`]
/// except that a ConnectionLoss on the lease node's create is retried
/// blindly (a reconnect during acquire): when the first create was applied,
/// its node holds a lease for as long as the session lives and nobody ever
/// returns it. Enough of them exhaust the permits and every acquire hangs.
#[derive(Clone)]
pub struct LeakedLeaseSemaphore<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
    max_leases: u32,
}

impl<C: ZkClient, R: Runtime> LeakedLeaseSemaphore<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>, max_leases: u32) -> Self {
        LeakedLeaseSemaphore {
            ctx,
            dir: dir.into(),
            max_leases: max_leases.max(1),
        }
    }

    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let guid = ctx.next_guid().await?;
        let prefix = join(&self.dir, &guid.prefix(LEASE_KIND));
        let mut attempt = 0u32;
        let (path, stat) = loop {
            match ctx.client().create(&prefix, &[], CreateMode::EphemeralSequential).await {
                Ok(r) => break r,
                Err(crate::zk::ZkError::NoNode) => create_all(ctx, &self.dir).await?,
                // BUG: the first create may have been applied.
                Err(e) if e.is_ambiguous() && attempt < 20 => {
                    ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        };
        let name = path[self.dir.len() + 1..].to_string();
        loop {
            let (children, _, watch) = ctx.retry(|| ctx.client().get_children_watch(&self.dir)).await?;
            let queue = SeqName::parse_sorted(&children, &[LEASE_KIND]);
            let Some(me) = queue.iter().position(|n| n.name == name) else {
                return Err(RecipeError::NodeGone(path));
            };
            if lease_granted(me, self.max_leases) {
                return Ok(PlainGuard::new(ctx, path, stat.czxid));
            }
            if watch_or_session(watch, &mut states).await == Woken::SessionLost {
                return Err(RecipeError::SessionLost);
            }
        }
    }
}
