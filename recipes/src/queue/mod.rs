//! Distributed FIFO / priority queue (ZooKeeper recipes: "Queues",
//! "Priority Queues") with two consumption contracts, each its own type.
//!
//! Layout under the queue's root:
//! - `items/p{priority}-{guid}-item-{seq}`: persistent sequential items.
//!   The priority is biased to 10 digits so that lexical order is priority
//!   order; the guid is the item's id; the sequence orders items of one
//!   priority (wrap-aware).
//! - `enq/{guid}`: a producer's ephemeral marker, created in the same
//!   `multi` as the item, so that after ConnectionLoss the producer can tell
//!   whether its enqueue was applied — even if a consumer took the item in
//!   the meantime — without creating a duplicate.
//! - `taken/{item}`: an at-most-once consumer's ephemeral marker, created in
//!   the same `multi` as the item's delete (see [`AtMostOnceConsumer`]).
//! - `claims/{item}`: an at-least-once consumer's ephemeral claim (see
//!   [`AtLeastOnceConsumer`]).
//!
//! Guarantees: an enqueue that returns `Ok` created exactly one item; an
//! enqueue that returns an error other than [`RecipeError::Ambiguous`]
//! created none. Consumers see items in (priority, creation) order, though
//! concurrent consumers may finish them in any order.
//!
//! ```ignore
//! let q = Queue::new(ctx.clone(), "/queues/jobs");
//! let id = q.enqueue(b"job-1").await?;
//! let consumer = AtLeastOnceConsumer::new(ctx.clone(), "/queues/jobs");
//! let claimed = consumer.claim().await?;
//! process(claimed.item()).await;
//! claimed.complete().await?;
//! ```

mod at_least_once;
mod at_most_once;
mod names;
mod steps;

pub use at_least_once::{AtLeastOnceConsumer, Claimed};
pub use at_most_once::AtMostOnceConsumer;
pub use names::ItemName;
pub use steps::{Exact, Steps};

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::nodes::{create_all, spawn_delete_own};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{CreateMode, Op, ZkClient, ZkError};

/// One dequeued item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueItem {
    /// The item's id: the producer's guid, as returned by `enqueue`.
    pub id: String,
    /// The item node's name under `items/`.
    pub name: String,
    pub priority: i32,
    pub data: Vec<u8>,
    /// zxid of the enqueue.
    pub czxid: i64,
}

/// The paths of one queue.
#[derive(Debug, Clone)]
pub struct Layout {
    pub items: String,
    pub enq: String,
    pub taken: String,
    pub claims: String,
}

impl Layout {
    pub fn new(root: &str) -> Self {
        Layout {
            items: join(root, "items"),
            enq: join(root, "enq"),
            taken: join(root, "taken"),
            claims: join(root, "claims"),
        }
    }
}

/// The producer side of a queue. `S`: how its item is written (always
/// [`Exact`] outside the harness's planted types).
#[derive(Clone)]
pub struct Queue<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    layout: Layout,
    steps: S,
}

impl<C: ZkClient, R: Runtime> Queue<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        Queue::with_steps(ctx, root, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Queue<C, R, S> {
    /// A producer whose item is written as `steps` does it.
    pub fn with_steps(ctx: Ctx<C, R>, root: &str, steps: S) -> Self {
        Queue {
            ctx,
            layout: Layout::new(root),
            steps,
        }
    }

    /// Enqueues `data` at priority 0; returns the item id.
    pub async fn enqueue(&self, data: &[u8]) -> RecipeResult<String> {
        self.enqueue_with_priority(data, 0).await
    }

    /// Enqueues `data`; lower `priority` values are dequeued first.
    ///
    /// ConnectionLoss is resolved through the producer marker: present means
    /// applied, absent (after `sync`) means not applied and safe to retry.
    /// If the session ends before that can be told, the result is
    /// [`RecipeError::Ambiguous`].
    pub async fn enqueue_with_priority(&self, data: &[u8], priority: i32) -> RecipeResult<String> {
        let guid = self.ctx.next_guid().await?;
        self.steps.put(&self.ctx, &self.layout, &guid, data, priority).await?;
        Ok(guid.to_string())
    }

    /// Number of items (claimed ones included).
    pub async fn len(&self) -> RecipeResult<usize> {
        let ctx = &self.ctx;
        match ctx.retry(|| ctx.client().get_children(&self.layout.items)).await {
            Ok((c, _)) => Ok(c.iter().filter(|n| ItemName::is_item(n)).count()),
            Err(RecipeError::Zk(ZkError::NoNode)) => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// The backlog as one `exists` sees it: the item directory's
    /// numChildren (items, claimed or not, and anything else stored
    /// there). For pacing producers: it costs one small reply, where
    /// [`Queue::len`] lists every item.
    pub async fn backlog(&self) -> RecipeResult<usize> {
        let ctx = &self.ctx;
        let stat = ctx.retry(|| ctx.client().exists(&self.layout.items)).await?;
        Ok(stat.map_or(0, |s| usize::try_from(s.num_children).unwrap_or(0)))
    }

    pub async fn is_empty(&self) -> RecipeResult<bool> {
        Ok(self.len().await? == 0)
    }
}

/// The correct [`Steps::put`].
///
/// ConnectionLoss is resolved through the producer marker: present means
/// applied, absent (after `sync`) means not applied and safe to retry.
pub(crate) async fn put_exactly_once<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    layout: &Layout,
    guid: &Guid,
    data: &[u8],
    priority: i32,
) -> RecipeResult<()> {
    let marker = join(&layout.enq, &guid.to_string());
    let item = join(&layout.items, &ItemName::prefix(priority, guid));
    let ops = vec![
        Op::Create {
            path: marker.clone(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        },
        Op::Create {
            path: item,
            data: data.to_vec(),
            mode: CreateMode::PersistentSequential,
        },
    ];
    let policy = ctx.retry_policy();
    let mut ambiguous = false;
    let mut attempt = 0;
    loop {
        match ctx.client().multi(ops.clone()).await {
            Ok(_) => {
                spawn_delete_own(ctx, &marker);
                return Ok(());
            }
            // A directory gone (an operator's delete, a reaped container):
            // a refusal, not a lost reply, so it spends no attempt.
            Err(e) if e.error == ZkError::NoNode => {
                create_all(ctx, &layout.enq).await?;
                create_all(ctx, &layout.items).await?;
            }
            Err(e) if e.error.is_ambiguous() && attempt + 1 < policy.max_attempts => {
                ambiguous = true;
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt += 1;
                match marker_present(ctx, layout, &marker, guid).await {
                    Ok(true) => {
                        spawn_delete_own(ctx, &marker);
                        return Ok(());
                    }
                    Ok(false) => {}
                    // The multi may have been applied: only Ambiguous says so.
                    Err(e) if e.is_session_lost() => return Err(ambiguous_enqueue(guid, "the session ended")),
                    Err(e) => return Err(ambiguous_enqueue(guid, &format!("{e} while reading its marker"))),
                }
            }
            Err(e) if e.error.is_session_lost() && ambiguous => {
                return Err(ambiguous_enqueue(guid, "the session ended"))
            }
            Err(e) if e.error.is_ambiguous() => return Err(ambiguous_enqueue(guid, "retries ran out")),
            Err(e) => return Err(RecipeError::from_zk(e.error)),
        }
    }
}

/// Whether our enqueue's marker exists (so the multi was applied).
async fn marker_present<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    layout: &Layout,
    marker: &str,
    guid: &Guid,
) -> RecipeResult<bool> {
    ctx.retry(|| ctx.client().sync(&layout.enq)).await?;
    let stat = ctx.retry(|| ctx.client().exists(marker)).await?;
    Ok(stat.is_some_and(|s| s.ephemeral_owner == guid.session))
}

fn ambiguous_enqueue(guid: &Guid, why: &str) -> RecipeError {
    RecipeError::Ambiguous(format!(
        "enqueue of item {guid}: ConnectionLoss, then {why} before the outcome was known"
    ))
}
