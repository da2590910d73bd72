//! The queue's consumers as the workload drives them: any type that hands
//! out items (the correct at-most-once or at-least-once consumer, or one
//! with a planted step), so that a planted scenario and its correct twin
//! run the very same workload code.

use std::future::Future;
use std::time::Duration;

use zkdst_recipes::error::RecipeError;
use zkdst_recipes::planted::CancelledTakeQueue;
use zkdst_recipes::queue::{AtLeastOnceConsumer, AtMostOnceConsumer, Claimed, QueueItem, Steps};
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::SimCtx;

type R = SimRuntime;

/// Makes a client's consumer on a session.
pub type MakeConsumer<T> = fn(SimCtx) -> T;

/// A queue consumer.
pub trait Consume: Send + Sync + 'static {
    type Taken: Taken;
    /// Takes (or claims) the head item, `None` if there is none.
    fn try_take(&self) -> impl Future<Output = RecipeResult<Option<Self::Taken>>> + Send;
    /// Waits up to `limit` for an item (`None`: none came).
    fn take_for(&self, limit: Duration) -> impl Future<Output = RecipeResult<Option<Self::Taken>>> + Send;
    /// Whether a take that failed with `e` may still have taken an item,
    /// as the consumer promises: any error but SessionLost, unless it says
    /// more.
    fn may_have_taken(e: &RecipeError) -> bool {
        !matches!(e, RecipeError::SessionLost)
    }
}

/// The at-most-once consumer's promise: only Ambiguous may have taken an
/// item; any other error took nothing.
fn only_ambiguous(e: &RecipeError) -> bool {
    matches!(e, RecipeError::Ambiguous(_))
}

/// An item handed to a consumer.
pub trait Taken: Send + 'static {
    fn item(&self) -> &QueueItem;
    /// Still in the queue until completed (a claim), so processing it is
    /// worth simulating even while the queue drains.
    fn claimed(&self) -> bool;
    /// The claim is gone (its session ended, or its node was deleted):
    /// another consumer may be processing the item.
    fn lost(&self) -> bool;
    /// A claim not lost whose client is disconnected (`None`: no claim):
    /// a processor pauses work that needs it.
    fn suspended(&self) -> Option<bool> {
        None
    }
    fn complete(self) -> impl Future<Output = RecipeResult<()>> + Send;
    /// Gives a claimed item back for another consumer.
    fn abandon(self) -> impl Future<Output = ()> + Send;
}

impl<S: Steps> Consume for AtMostOnceConsumer<AnyClient, R, S> {
    type Taken = QueueItem;
    async fn try_take(&self) -> RecipeResult<Option<QueueItem>> {
        AtMostOnceConsumer::try_take(self).await
    }
    async fn take_for(&self, limit: Duration) -> RecipeResult<Option<QueueItem>> {
        AtMostOnceConsumer::take_for(self, limit).await
    }
    fn may_have_taken(e: &RecipeError) -> bool {
        only_ambiguous(e)
    }
}

impl Consume for CancelledTakeQueue<AnyClient, R> {
    type Taken = QueueItem;
    async fn try_take(&self) -> RecipeResult<Option<QueueItem>> {
        CancelledTakeQueue::try_take(self).await
    }
    async fn take_for(&self, limit: Duration) -> RecipeResult<Option<QueueItem>> {
        CancelledTakeQueue::take_for(self, limit).await
    }
    fn may_have_taken(e: &RecipeError) -> bool {
        only_ambiguous(e)
    }
}

impl<S: Steps> Consume for AtLeastOnceConsumer<AnyClient, R, S> {
    type Taken = Claimed<AnyClient, R, S>;
    async fn try_take(&self) -> RecipeResult<Option<Self::Taken>> {
        AtLeastOnceConsumer::try_claim(self).await
    }
    async fn take_for(&self, limit: Duration) -> RecipeResult<Option<Self::Taken>> {
        AtLeastOnceConsumer::claim_for(self, limit).await
    }
}

/// Gone from the queue already (at-most-once): nothing to complete.
impl Taken for QueueItem {
    fn item(&self) -> &QueueItem {
        self
    }
    fn claimed(&self) -> bool {
        false
    }
    fn lost(&self) -> bool {
        false
    }
    async fn complete(self) -> RecipeResult<()> {
        Ok(())
    }
    async fn abandon(self) {}
}

impl<S: Steps> Taken for Claimed<AnyClient, R, S> {
    fn item(&self) -> &QueueItem {
        Claimed::item(self)
    }
    fn claimed(&self) -> bool {
        true
    }
    fn lost(&self) -> bool {
        self.is_lost()
    }
    fn suspended(&self) -> Option<bool> {
        Some(self.is_suspended())
    }
    async fn complete(self) -> RecipeResult<()> {
        Claimed::complete(self).await
    }
    async fn abandon(self) {
        Claimed::abandon(self).await
    }
}
