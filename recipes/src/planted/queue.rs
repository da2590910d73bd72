//! Broken queues: the correct producer or consumer with one of its
//! [`Steps`] replaced (or, for duplicate processing, the correct consumer
//! sold with a promise it cannot keep).

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::lock::core::with_timeout;
use crate::nodes::create_all;
use crate::queue::{AtLeastOnceConsumer, AtMostOnceConsumer, ItemName, Layout, Queue, QueueItem, Steps};
use crate::runtime::Runtime;

use super::back_off_blindly;
use crate::zk::path::{join, parent};
use crate::zk::{CreateMode, ZkClient, ZkError, ANY_VERSION};

/// Lost item (kazoo `Queue.get`, "not reliable"; Curator
/// `SimpleDistributedQueue.take`; ZK contrib `DistributedQueue.remove`):
/// take = read the head item, `delete` it. When the delete is applied but
/// its reply lost, the retried delete gets NoNode and the consumer assumes
/// another consumer took the item — which nobody did: it is gone.
pub type LostItemQueue<C, R> = AtMostOnceConsumer<C, R, PlainDelete>;

/// Duplicate item (every queue that retries a sequential create blindly;
/// the seeds' own warning) — also the seeds' "queue that retries enqueue
/// blindly": a ConnectionLoss on the item's sequential create is retried
/// with a new create, so an applied first create leaves two items.
pub type DuplicateItemQueue<C, R> = Queue<C, R, BlindItemCreate>;

/// Duplicate processing (CURATOR-605): a queue with a per-item lock (claim,
/// process, then delete) sold as exactly-once. A consumer whose session
/// expires mid-processing loses its claim, another consumer claims the
/// item and processes it again. The mechanism is the correct
/// [`AtLeastOnceConsumer`]; the bug is the exactly-once promise (the
/// harness runs it where an at-most-once consumer belongs).
pub type DuplicateProcessingQueue<C, R> = AtLeastOnceConsumer<C, R>;

/// Locking-queue race (kazoo #366 / PR #523, LockingQueue): consumers race
/// for an entry by creating its ephemeral `claims/{item}` marker; a
/// NodeExists is taken to mean "another consumer won" without checking the
/// marker's owner. When our own create was applied and only its reply was
/// lost, the retry's NodeExists makes us skip the entry while our marker
/// stays: the item is claimed by nobody who will ever process it, and
/// consumers stall with items left.
pub type LockingQueueRace<C, R> = AtLeastOnceConsumer<C, R, ExistsIsAnothers>;

/// Completion judged by the claim's name — zkdst's own at-least-once
/// queue until its `never-completed` check found it (queue-at-least-once
/// seeds 9 and 191): after ConnectionLoss on the completing multi (delete
/// claim and item), "our claim is gone" was read as "applied" and "a claim
/// of that name exists" as "not applied"; but a consumer that listed the
/// item before our delete may create a claim of the same name after it,
/// and the retried multi's NoNode then says "claim lost, the item stays"
/// of an item that is gone. And a session lost while looking was reported
/// as SessionLost, the same false promise.
pub type ClaimNameCompleteQueue<C, R> = AtLeastOnceConsumer<C, R, ClaimNameFate>;

/// Cancellation leak, the queue's form (zkdst's own at-most-once consumer
/// until blocking takes found it; any async take wrapped in a timeout
/// that drops it, as with tokio's `timeout` over a future that is not
/// cancel-safe): `take_for` runs the whole take under its limit. A take
/// dropped after its multi (delete the item, create our `taken/` marker)
/// was sent may still be applied; the item is then gone and nobody holds
/// it. It takes the correct consumer, misused: only where the limit falls
/// while a take is in flight is anything lost, so most waits are harmless.
#[derive(Clone)]
pub struct CancelledTakeQueue<C, R> {
    ctx: Ctx<C, R>,
    consumer: AtMostOnceConsumer<C, R>,
}

impl<C: ZkClient, R: Runtime> CancelledTakeQueue<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        let consumer = AtMostOnceConsumer::new(ctx.clone(), root);
        CancelledTakeQueue { ctx, consumer }
    }

    /// The correct consumer's `try_take`.
    pub async fn try_take(&self) -> RecipeResult<Option<QueueItem>> {
        self.consumer.try_take().await
    }

    /// Waits up to `limit` for an item and takes it.
    pub async fn take_for(&self, limit: Duration) -> RecipeResult<Option<QueueItem>> {
        // BUG: the limit also cuts a take already sent.
        with_timeout(&self.ctx, limit, self.consumer.take()).await
    }
}

/// Retries an ambiguous `op` blindly (see `back_off_blindly`) and returns
/// its first unambiguous outcome, or the last ambiguous one after 20 tries.
async fn retry_blindly<C, R, T, F, Fut>(ctx: &Ctx<C, R>, op: F) -> Result<T, ZkError>
where
    C: ZkClient,
    R: Runtime,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, ZkError>>,
{
    let mut attempt = 0u32;
    loop {
        match op().await {
            // BUG: the ambiguous attempt may have been applied.
            Err(e) if back_off_blindly(ctx, &mut attempt, &e).await => {}
            r => return r,
        }
    }
}

/// The item's sequential create alone, retried blindly (no producer marker
/// to tell an applied create from a lost one).
#[derive(Debug, Clone, Copy, Default)]
pub struct BlindItemCreate;

/// The item's `delete` alone, retried blindly; a NoNode is taken for
/// another consumer's take.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainDelete;

/// The completing multi's fate read from the claim's name.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaimNameFate;

/// The claim's create, retried blindly; a NodeExists is taken for another
/// consumer's claim.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExistsIsAnothers;

impl Steps for BlindItemCreate {
    async fn put<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        layout: &Layout,
        guid: &Guid,
        data: &[u8],
        priority: i32,
    ) -> RecipeResult<()> {
        let path = join(&layout.items, &ItemName::prefix(priority, guid));
        loop {
            let created = retry_blindly(ctx, || {
                ctx.client().create(&path, data, CreateMode::PersistentSequential)
            });
            match created.await {
                Ok(_) => return Ok(()),
                Err(ZkError::NoNode) => create_all(ctx, &layout.items).await?,
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }
}

impl Steps for PlainDelete {
    async fn take<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        layout: &Layout,
        item: &ItemName,
    ) -> RecipeResult<bool> {
        let path = join(&layout.items, &item.name);
        match retry_blindly(ctx, || ctx.client().delete(&path, ANY_VERSION)).await {
            Ok(()) => Ok(true),
            // BUG: after an ambiguous delete, NoNode may be our own.
            Err(ZkError::NoNode) => Ok(false),
            Err(e) => Err(RecipeError::from_zk(e)),
        }
    }
}

impl Steps for ExistsIsAnothers {
    async fn claim<C: ZkClient, R: Runtime>(&self, ctx: &Ctx<C, R>, layout: &Layout, path: &str) -> RecipeResult<bool> {
        loop {
            match retry_blindly(ctx, || ctx.client().create(path, &[], CreateMode::Ephemeral)).await {
                Ok(_) => return Ok(true),
                Err(ZkError::NoNode) => create_all(ctx, &layout.claims).await?,
                // BUG: NodeExists may be our own applied create.
                Err(ZkError::NodeExists) => return Ok(false),
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }
}

impl Steps for ClaimNameFate {
    async fn complete_fate<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        claim_path: &str,
        _item_path: &str,
    ) -> RecipeResult<bool> {
        // BUG: a claim of that name may be another consumer's, created
        // after our multi deleted ours; and `?` turns a session lost while
        // looking into SessionLost for a multi that may have been applied.
        ctx.retry(|| ctx.client().sync(parent(claim_path))).await?;
        Ok(ctx.retry(|| ctx.client().exists(claim_path)).await?.is_none())
    }
}
