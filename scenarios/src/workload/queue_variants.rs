//! The queue as the workload sees it: the correct producer and consumers or
//! a planted variant of one of them, behind one interface.

use zkdst_recipes::planted::{
    DuplicateItemQueue, DuplicateProcessingQueue, LockingQueueRace, LostItemQueue, PlainClaim,
};
use zkdst_recipes::queue::{AtLeastOnceConsumer, AtMostOnceConsumer, Claimed, Queue, QueueItem};
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::SimClient;
use zkdst_sim::runtime::SimRuntime;

use super::SimCtx;
use crate::variant::Variant;

/// Enqueues `data`: the correct queue, or the one that retries a
/// sequential create blindly.
pub async fn enqueue(
    variant: Option<Variant>,
    ctx: &SimCtx,
    root: &str,
    data: &[u8],
    priority: i32,
) -> RecipeResult<()> {
    match variant {
        Some(Variant::DuplicateItemQueue) => DuplicateItemQueue::new(ctx.clone(), root)
            .enqueue(data)
            .await
            .map(|_| ()),
        _ => Queue::new(ctx.clone(), root)
            .enqueue_with_priority(data, priority)
            .await
            .map(|_| ()),
    }
}

/// An item taken for processing.
pub enum Taken {
    /// Gone from the queue (at-most-once).
    Item(QueueItem),
    /// Claimed; completed after processing.
    Claimed(Claimed<SimClient, SimRuntime>),
    Plain(PlainClaim<SimClient, SimRuntime>),
}

impl Taken {
    pub fn item(&self) -> &QueueItem {
        match self {
            Taken::Item(i) => i,
            Taken::Claimed(c) => c.item(),
            Taken::Plain(c) => c.item(),
        }
    }

    /// Completes a claim (nothing to do for a taken item).
    pub async fn complete(self) -> RecipeResult<()> {
        match self {
            Taken::Item(_) => Ok(()),
            Taken::Claimed(c) => c.complete().await,
            Taken::Plain(c) => c.complete().await,
        }
    }
}

/// The at-most-once take: the correct consumer, the one that loses an item
/// whose delete reply was lost, or the per-item-lock queue that promises
/// exactly-once processing.
pub async fn take(variant: Option<Variant>, ctx: &SimCtx, root: &str) -> RecipeResult<Option<Taken>> {
    Ok(match variant {
        Some(Variant::LostItemQueue) => LostItemQueue::new(ctx.clone(), root).try_take().await?.map(Taken::Item),
        Some(Variant::DuplicateProcessingQueue) => DuplicateProcessingQueue::new(ctx.clone(), root)
            .try_take()
            .await?
            .map(Taken::Claimed),
        _ => AtMostOnceConsumer::new(ctx.clone(), root)
            .try_take()
            .await?
            .map(Taken::Item),
    })
}

/// The at-least-once claim: the correct consumer or the locking-queue race.
pub async fn claim(variant: Option<Variant>, ctx: &SimCtx, root: &str) -> RecipeResult<Option<Taken>> {
    Ok(match variant {
        Some(Variant::LockingQueueRace) => LockingQueueRace::new(ctx.clone(), root)
            .try_claim()
            .await?
            .map(Taken::Plain),
        _ => AtLeastOnceConsumer::new(ctx.clone(), root)
            .try_claim()
            .await?
            .map(Taken::Claimed),
    })
}
