//! The waiting-queue algorithm shared by the exclusive lock, the read/write
//! lock and leader election: an ephemeral sequential node per contender,
//! each watching only the node that blocks it (no herd effect).

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
pub use crate::lock::blocker::{blocker_exclusive, Blocker};
use crate::lock::guard::LockGuard;
use crate::lock::steps::Steps;
use crate::runtime::Runtime;
use crate::wait::Woken;
use crate::zk::path::join;
use crate::zk::{CreateMode, StateWatch, ZkClient};

/// What a contender queues as.
pub struct Contender<'a> {
    pub dir: &'a str,
    /// This contender's node kind (`lock`, `read`, `write`, `n`).
    pub kind: &'a str,
    /// Every kind that takes part in the queue under `dir`.
    pub kinds: &'a [&'a str],
    pub blocker: Blocker,
    pub data: &'a [u8],
    /// Suspension grace of the resulting hold (see `monitor`).
    pub grace: Option<Duration>,
}

/// Creates the contender's node and waits until nothing blocks it, each
/// delicate step done as `steps` does it.
///
/// Cancel-safe: if the returned future is dropped, or fails, after the
/// create was sent, the node is deleted in the background.
pub async fn acquire<C: ZkClient, R: Runtime, S: Steps>(
    ctx: &Ctx<C, R>,
    steps: &S,
    c: Contender<'_>,
) -> RecipeResult<LockGuard<C, R, S>> {
    // Subscribe before creating so no session transition is missed.
    let mut states = ctx.client().state_watch();
    let guid = steps.guid(ctx).await?;
    let orphan = steps.orphan_guard(ctx, c.dir, guid);
    let (name, stat) = steps
        .create(ctx, c.dir, &guid, c.kind, c.data, CreateMode::EphemeralSequential)
        .await?;
    let me = SeqName::parse(&name, &[c.kind]).ok_or_else(|| RecipeError::BadData {
        path: join(c.dir, &name),
        reason: "created node has no sequence suffix".into(),
    })?;
    let blocker = steps.blocker(c.blocker);
    wait_turn(ctx, steps, c.dir, &me.name, c.kinds, blocker, &mut states).await?;
    if let Some(o) = orphan {
        o.disarm();
    }
    Ok(LockGuard::new(
        ctx,
        steps.clone(),
        join(c.dir, &name),
        stat,
        me.sequence,
        states,
        steps.grace(c.grace),
    ))
}

/// Waits until `me` is not blocked. Re-reads the queue after every wake-up
/// (unless `steps.turn_on` takes the wake-up for the turn), because the watched node may have gone before the watch was set, or the
/// blocker may have changed (a reader's blocker is the last earlier writer).
pub async fn wait_turn<C: ZkClient, R: Runtime, S: Steps>(
    ctx: &Ctx<C, R>,
    steps: &S,
    dir: &str,
    me: &str,
    kinds: &[&str],
    blocker: Blocker,
    states: &mut StateWatch,
) -> RecipeResult<()> {
    loop {
        let (children, _) = ctx.retry(|| ctx.client().get_children(dir)).await?;
        let queue = SeqName::parse_sorted(&children, kinds);
        let Some(idx) = queue.iter().position(|n| n.name == me) else {
            // Our reads see our own writes, so our node is really gone.
            return Err(if ctx.session_lost() {
                RecipeError::SessionLost
            } else {
                RecipeError::NodeGone(join(dir, me))
            });
        };
        let Some(b) = blocker(&queue, idx) else {
            return Ok(());
        };
        let blocking = join(dir, &queue[b].name);
        let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&blocking)).await?;
        if stat.is_none() {
            if steps.gone_is_turn() {
                return Ok(());
            }
            continue;
        }
        match steps.woken(watch, states).await {
            w if steps.turn_on(&w) => return Ok(()),
            Woken::Node(_) | Woken::Reconnected => continue,
            Woken::SessionLost => return Err(RecipeError::SessionLost),
        }
    }
}

/// Runs `fut` until `deadline` on `ctx`'s clock (`None`: no deadline):
/// `Ok(None)` if the deadline came first. Only for steps that are safe to
/// abandon (reads, waits): a write abandoned after it was sent may still
/// happen, and whatever it took (an item, a claim) would be lost.
pub async fn until<C: ZkClient, R: Runtime, T>(
    ctx: &Ctx<C, R>,
    deadline: Option<Duration>,
    fut: impl std::future::Future<Output = RecipeResult<T>>,
) -> RecipeResult<Option<T>> {
    match deadline {
        None => fut.await.map(Some),
        Some(d) => with_timeout(ctx, d.saturating_sub(ctx.runtime().now()), fut).await,
    }
}

/// Runs `fut` with a time limit measured on `ctx`'s clock: `Ok(None)` when
/// it ran out (the future is dropped, so its drop guards clean up).
pub async fn with_timeout<C: ZkClient, R: Runtime, T>(
    ctx: &Ctx<C, R>,
    limit: Duration,
    fut: impl std::future::Future<Output = RecipeResult<T>>,
) -> RecipeResult<Option<T>> {
    use futures::{select_biased, FutureExt};
    let fut = fut.fuse();
    let timer = ctx.runtime().sleep(limit).fuse();
    futures::pin_mut!(fut, timer);
    select_biased! {
        r = fut => r.map(Some),
        _ = timer => Ok(None),
    }
}
