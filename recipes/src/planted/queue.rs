//! Broken queues (layout as [`crate::queue`]: `items/`, `claims/`).

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::nodes::{create_all, delete_own};
use crate::queue::{AtLeastOnceConsumer, Claimed, ItemName, Layout, QueueItem};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{CreateMode, Op, ZkClient, ZkError, ANY_VERSION};

async fn list<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, dir: &str) -> RecipeResult<Vec<String>> {
    match ctx.retry(|| ctx.client().get_children(dir)).await {
        Ok((c, _)) => Ok(c),
        Err(RecipeError::Zk(ZkError::NoNode)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

fn item_of(item: &ItemName, data: Vec<u8>, czxid: i64) -> QueueItem {
    QueueItem {
        id: item.guid.to_string(),
        name: item.name.clone(),
        priority: item.priority,
        data,
        czxid,
    }
}

/// Lost item (kazoo `Queue.get`, "not reliable"; Curator
/// `SimpleDistributedQueue.take`; ZK contrib `DistributedQueue.remove`):
/// take = read the head item, `delete` it. When the delete is applied but
/// its reply lost, the retried delete gets NoNode and the consumer assumes
/// another consumer took the item — which nobody did: it is gone.
#[derive(Clone)]
pub struct LostItemQueue<C, R> {
    ctx: Ctx<C, R>,
    layout: Layout,
}

impl<C: ZkClient, R: Runtime> LostItemQueue<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        LostItemQueue {
            ctx,
            layout: Layout::new(root),
        }
    }

    /// Takes the head item, or `None` if the queue is empty.
    pub async fn try_take(&self) -> RecipeResult<Option<QueueItem>> {
        let ctx = &self.ctx;
        let children = list(ctx, &self.layout.items).await?;
        'items: for item in ItemName::parse_sorted(&children) {
            let path = join(&self.layout.items, &item.name);
            let (data, stat) = match ctx.retry(|| ctx.client().get_data(&path)).await {
                Ok(r) => r,
                Err(RecipeError::Zk(ZkError::NoNode)) => continue,
                Err(e) => return Err(e),
            };
            let mut attempt = 0u32;
            loop {
                match ctx.client().delete(&path, ANY_VERSION).await {
                    Ok(()) => return Ok(Some(item_of(&item, data, stat.czxid))),
                    // BUG: after an ambiguous delete, NoNode may be our own.
                    Err(ZkError::NoNode) => continue 'items,
                    Err(e) if e.is_ambiguous() && attempt < 20 => {
                        ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(RecipeError::from_zk(e)),
                }
            }
        }
        Ok(None)
    }
}

/// Duplicate item (every queue that retries a sequential create blindly;
/// the seeds' own warning) — also the seeds' "queue that retries enqueue
/// blindly": a ConnectionLoss on the item's sequential create is retried
/// with a new create, so an applied first create leaves two items.
#[derive(Clone)]
pub struct DuplicateItemQueue<C, R> {
    ctx: Ctx<C, R>,
    layout: Layout,
}

impl<C: ZkClient, R: Runtime> DuplicateItemQueue<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        DuplicateItemQueue {
            ctx,
            layout: Layout::new(root),
        }
    }

    /// Enqueues `data` at priority 0; returns the item id.
    pub async fn enqueue(&self, data: &[u8]) -> RecipeResult<String> {
        let ctx = &self.ctx;
        let guid = ctx.next_guid().await?;
        let path = join(&self.layout.items, &ItemName::prefix(0, &guid));
        let mut attempt = 0u32;
        loop {
            match ctx.client().create(&path, data, CreateMode::PersistentSequential).await {
                Ok(_) => return Ok(guid.to_string()),
                Err(ZkError::NoNode) => create_all(ctx, &self.layout.items).await?,
                // BUG: the first create may have been applied.
                Err(e) if e.is_ambiguous() && attempt < 20 => {
                    ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }
}

/// Duplicate processing (CURATOR-605): a queue with a per-item lock (claim,
/// process, then delete) sold as exactly-once. A consumer whose session
/// expires mid-processing loses its claim, another consumer claims the
/// item and processes it again. The mechanism is the correct
/// [`AtLeastOnceConsumer`]; the bug is the exactly-once promise.
#[derive(Clone)]
pub struct DuplicateProcessingQueue<C, R> {
    inner: AtLeastOnceConsumer<C, R>,
}

impl<C: ZkClient, R: Runtime> DuplicateProcessingQueue<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        DuplicateProcessingQueue {
            inner: AtLeastOnceConsumer::new(ctx, root),
        }
    }

    /// Locks the head item for processing "exactly once"; complete it after
    /// processing.
    pub async fn try_take(&self) -> RecipeResult<Option<Claimed<C, R>>> {
        self.inner.try_claim().await
    }
}

/// Locking-queue race (kazoo #366 / PR #523, LockingQueue): consumers race
/// for an entry by creating its ephemeral `claims/{item}` marker; a
/// NodeExists is taken to mean "another consumer won" without checking the
/// marker's owner. When our own create was applied and only its reply was
/// lost, the retry's NodeExists makes us skip the entry while our marker
/// stays: the item is claimed by nobody who will ever process it, and
/// consumers stall with items left.
#[derive(Clone)]
pub struct LockingQueueRace<C, R> {
    ctx: Ctx<C, R>,
    layout: Layout,
}

/// An item claimed by a [`LockingQueueRace`] consumer.
pub struct PlainClaim<C, R> {
    ctx: Ctx<C, R>,
    item: QueueItem,
    item_path: String,
    claim_path: String,
}

impl<C: ZkClient, R: Runtime> LockingQueueRace<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        LockingQueueRace {
            ctx,
            layout: Layout::new(root),
        }
    }

    /// Claims the first unclaimed item, or `None`.
    pub async fn try_claim(&self) -> RecipeResult<Option<PlainClaim<C, R>>> {
        let ctx = &self.ctx;
        let items = list(ctx, &self.layout.items).await?;
        let mut claims = list(ctx, &self.layout.claims).await?;
        claims.sort();
        'items: for item in ItemName::parse_sorted(&items) {
            if claims.binary_search(&item.name).is_ok() {
                continue;
            }
            let claim_path = join(&self.layout.claims, &item.name);
            let mut attempt = 0u32;
            loop {
                match ctx.client().create(&claim_path, &[], CreateMode::Ephemeral).await {
                    Ok(_) => break,
                    Err(ZkError::NoNode) => create_all(ctx, &self.layout.claims).await?,
                    // BUG: NodeExists may be our own applied create.
                    Err(ZkError::NodeExists) => continue 'items,
                    Err(e) if e.is_ambiguous() && attempt < 20 => {
                        ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(RecipeError::from_zk(e)),
                }
            }
            let item_path = join(&self.layout.items, &item.name);
            match ctx.retry(|| ctx.client().get_data(&item_path)).await {
                Ok((data, stat)) => {
                    return Ok(Some(PlainClaim {
                        ctx: ctx.clone(),
                        item: item_of(&item, data, stat.czxid),
                        item_path,
                        claim_path,
                    }))
                }
                Err(RecipeError::Zk(ZkError::NoNode)) => {
                    delete_own(ctx, &claim_path).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }
}

impl<C: ZkClient, R: Runtime> PlainClaim<C, R> {
    pub fn item(&self) -> &QueueItem {
        &self.item
    }

    /// Deletes the claim and the item together (correctly resolving
    /// ConnectionLoss by whether our claim still exists).
    pub async fn complete(self) -> RecipeResult<()> {
        let ctx = &self.ctx;
        let ops = vec![
            Op::Delete {
                path: self.claim_path.clone(),
                version: ANY_VERSION,
            },
            Op::Delete {
                path: self.item_path.clone(),
                version: ANY_VERSION,
            },
        ];
        let mut attempt = 0u32;
        loop {
            match ctx.client().multi(ops.clone()).await {
                Ok(_) => return Ok(()),
                Err(e) if e.error.is_ambiguous() && attempt < 20 => {
                    ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                    attempt += 1;
                    ctx.retry(|| ctx.client().sync(&self.claim_path)).await?;
                    if ctx.retry(|| ctx.client().exists(&self.claim_path)).await?.is_none() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(RecipeError::from_zk(e.error)),
            }
        }
    }
}
