//! At-most-once consumption: delete, then process.
//!
//! The consumer deletes the head item in a `multi` together with creating
//! an ephemeral `taken/{item}` marker owned by its session. After a
//! ConnectionLoss on that multi it reads the marker: ours means our delete
//! won; absent while the item still exists means nothing happened (retry);
//! absent with the item gone means another consumer took it. A NoNode is
//! never taken to mean "someone else took it" without that proof (the lost
//! item of kazoo `Queue.get` / Curator `SimpleDistributedQueue`). If the
//! session ends (or retries run out) before the outcome is known the item
//! may be lost — that is the contract — and the call returns
//! [`RecipeError::Ambiguous`] naming it. Any other error means nothing was
//! taken.

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::lock::core::until;
use crate::nodes::{create_all, spawn_delete_own};
use crate::queue::{Exact, ItemName, Layout, QueueItem, Steps};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, Op, ZkClient, ZkError, ANY_VERSION};

/// A consumer that removes each item before handing it out. `S`: how the
/// item is removed (always [`Exact`] outside the harness's planted types).
#[derive(Clone)]
pub struct AtMostOnceConsumer<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    layout: Layout,
    steps: S,
}

impl<C: ZkClient, R: Runtime> AtMostOnceConsumer<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        AtMostOnceConsumer::with_steps(ctx, root, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> AtMostOnceConsumer<C, R, S> {
    /// A consumer whose take is done as `steps` does it.
    pub fn with_steps(ctx: Ctx<C, R>, root: &str, steps: S) -> Self {
        AtMostOnceConsumer {
            ctx,
            layout: Layout::new(root),
            steps,
        }
    }

    /// Takes the head item, or `None` if the queue is empty.
    pub async fn try_take(&self) -> RecipeResult<Option<QueueItem>> {
        let ctx = &self.ctx;
        // The head is judged against every enqueue completed before the
        // call: sync first, so a lagging server cannot hide one.
        ctx.retry(|| ctx.client().sync(&self.layout.items)).await?;
        let children = match ctx.retry(|| ctx.client().get_children(&self.layout.items)).await {
            Ok((c, _)) => c,
            Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.take_first(&children).await
    }

    /// Waits for an item and takes it.
    pub async fn take(&self) -> RecipeResult<QueueItem> {
        self.take_until(None)
            .await?
            .ok_or(RecipeError::Cancelled("take gave up without a deadline"))
    }

    /// Like [`Self::take`], giving up after `limit` (`Ok(None)`).
    pub async fn take_for(&self, limit: Duration) -> RecipeResult<Option<QueueItem>> {
        self.take_until(Some(self.ctx.runtime().now() + limit)).await
    }

    /// Waits for an item until `deadline` and takes it. The deadline cuts
    /// only the listing and the waiting: a take once sent is seen through,
    /// since one abandoned after its delete was applied loses the item.
    async fn take_until(&self, deadline: Option<Duration>) -> RecipeResult<Option<QueueItem>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let synced = until(ctx, deadline, ctx.retry(|| ctx.client().sync(&self.layout.items))).await?;
        if synced.is_none() {
            return Ok(None);
        }
        loop {
            let listing = until(ctx, deadline, async {
                match ctx.retry(|| ctx.client().get_children_watch(&self.layout.items)).await {
                    Ok(r) => Ok(Some(r)),
                    Err(RecipeError::Zk(ZkError::NoNode)) => create_all(ctx, &self.layout.items).await.map(|_| None),
                    Err(e) => Err(e),
                }
            });
            let (children, _, watch) = match listing.await? {
                None => return Ok(None),
                Some(None) => continue,
                Some(Some(r)) => r,
            };
            if let Some(item) = self.take_first(&children).await? {
                return Ok(Some(item));
            }
            let woken = until(ctx, deadline, async { Ok(watch_or_session(watch, &mut states).await) });
            match woken.await? {
                None => return Ok(None),
                Some(Woken::SessionLost) => return Err(RecipeError::SessionLost),
                Some(_) => {}
            }
        }
    }

    async fn take_first(&self, children: &[String]) -> RecipeResult<Option<QueueItem>> {
        for item in ItemName::parse_sorted(children) {
            if let Some(i) = self.take_one(item).await? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The item if we took it; `None` if it is gone or another consumer
    /// took it (try the next).
    async fn take_one(&self, item: ItemName) -> RecipeResult<Option<QueueItem>> {
        let ctx = &self.ctx;
        let path = join(&self.layout.items, &item.name);
        let (data, stat) = match ctx.retry(|| ctx.client().get_data(&path)).await {
            Ok(r) => r,
            Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mine = self.steps.take(ctx, &self.layout, &item).await?;
        Ok(mine.then(|| QueueItem {
            id: item.guid.to_string(),
            name: item.name,
            priority: item.priority,
            data,
            czxid: stat.czxid,
        }))
    }
}

/// The correct [`Steps::take`]: the item's delete and our `taken/` marker
/// in one `multi`; after ConnectionLoss the marker tells whose it was.
pub(crate) async fn take_marked<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    layout: &Layout,
    item: &ItemName,
) -> RecipeResult<bool> {
    let path = join(&layout.items, &item.name);
    let taken = join(&layout.taken, &item.name);
    let guid = ctx.next_guid().await?;
    let ops = vec![
        Op::Delete {
            path: path.clone(),
            version: ANY_VERSION,
        },
        Op::Create {
            path: taken.clone(),
            data: guid.to_string().into_bytes(),
            mode: CreateMode::Ephemeral,
        },
    ];
    let policy = ctx.retry_policy();
    let mut attempt = 0;
    loop {
        match ctx.client().multi(ops.clone()).await {
            Ok(_) => {
                spawn_delete_own(ctx, &taken);
                return Ok(true);
            }
            // The item is gone before our multi: not ours, provably.
            Err(e) if e.error == ZkError::NoNode && e.index == 0 => return Ok(false),
            Err(e) if e.error == ZkError::NoNode => create_all(ctx, &layout.taken).await?,
            Err(e) if e.error.is_ambiguous() => {
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt = attempt.saturating_add(1);
                match resolve(ctx, layout, &path, &taken, guid.session).await {
                    Ok(Some(true)) => {
                        spawn_delete_own(ctx, &taken);
                        return Ok(true);
                    }
                    Ok(Some(false)) => return Ok(false),
                    Ok(None) => continue,
                    // The multi may have been applied: only Ambiguous says so.
                    Err(e) if e.is_session_lost() => return Err(lost_item(item, "the session ended")),
                    Err(e) => return Err(lost_item(item, &format!("{e} while reading its marker"))),
                }
            }
            Err(e) if e.error.is_session_lost() && attempt > 0 => return Err(lost_item(item, "the session ended")),
            Err(e) => return Err(RecipeError::from_zk(e.error)),
        }
    }
}

/// After an ambiguous take: `Some(true)` ours, `Some(false)` another
/// consumer's, `None` not applied (the item is still there).
async fn resolve<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    layout: &Layout,
    item: &str,
    taken: &str,
    session: i64,
) -> RecipeResult<Option<bool>> {
    ctx.retry(|| ctx.client().sync(&layout.items)).await?;
    if let Some(stat) = ctx.retry(|| ctx.client().exists(taken)).await? {
        // Another owner can only mean another consumer's marker.
        return Ok(Some(stat.ephemeral_owner == session));
    }
    match ctx.retry(|| ctx.client().exists(item)).await? {
        Some(_) => Ok(None),
        None => Ok(Some(false)),
    }
}

fn lost_item(item: &ItemName, why: &str) -> RecipeError {
    RecipeError::Ambiguous(format!(
        "item {} ({}) may have been removed by this consumer; {why} before it could tell",
        item.guid, item.name
    ))
}
