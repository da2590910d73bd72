//! The waiting-queue algorithm shared by the exclusive lock, the read/write
//! lock and leader election: an ephemeral sequential node per contender,
//! each watching only the node that blocks it (no herd effect).

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::lock::guard::LockGuard;
use crate::nodes::{create_protected, OrphanGuard};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, StateWatch, ZkClient};

/// Which node, if any, blocks the contender at `me` in `queue` (sorted by
/// creation order). The contender holds the lock when this is `None`.
pub type Blocker = fn(queue: &[SeqName], me: usize) -> Option<usize>;

/// Exclusive: every earlier node blocks; wait for the one just before.
pub fn blocker_exclusive(_queue: &[SeqName], me: usize) -> Option<usize> {
    me.checked_sub(1)
}

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

/// Creates the contender's node and waits until nothing blocks it.
///
/// Cancel-safe: if the returned future is dropped, or fails, after the
/// create was sent, the node is deleted in the background.
pub async fn acquire<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, c: Contender<'_>) -> RecipeResult<LockGuard<C, R>> {
    // Subscribe before creating so no session transition is missed.
    let mut states = ctx.client().state_watch();
    let guid = ctx.next_guid().await?;
    let orphan = OrphanGuard::new(ctx, c.dir, guid);
    let (name, stat) = create_protected(ctx, c.dir, &guid, c.kind, c.data, CreateMode::EphemeralSequential).await?;
    let me = SeqName::parse(&name, &[c.kind]).ok_or_else(|| RecipeError::BadData {
        path: join(c.dir, &name),
        reason: "created node has no sequence suffix".into(),
    })?;
    wait_turn(ctx, c.dir, &me.name, c.kinds, c.blocker, &mut states).await?;
    orphan.disarm();
    Ok(LockGuard::new(
        ctx,
        join(c.dir, &name),
        stat,
        me.sequence,
        states,
        c.grace,
    ))
}

/// Waits until `me` is not blocked. Re-reads the queue after every wake-up,
/// because the watched node may have gone before the watch was set, or the
/// blocker may have changed (a reader's blocker is the last earlier writer).
pub async fn wait_turn<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
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
            continue;
        }
        match watch_or_session(watch, states).await {
            Woken::Node(_) | Woken::Reconnected => continue,
            Woken::SessionLost => return Err(RecipeError::SessionLost),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guid::Guid;

    fn q(spec: &[(&str, i32)]) -> Vec<SeqName> {
        spec.iter()
            .enumerate()
            .map(|(i, (kind, seq))| {
                let g = Guid {
                    session: 1,
                    counter: i as u64,
                };
                SeqName {
                    name: format!("{}{:010}", g.prefix(kind), seq),
                    guid: g,
                    kind: (*kind).to_string(),
                    sequence: *seq,
                }
            })
            .collect()
    }

    #[test]
    fn exclusive_waits_for_immediate_predecessor() {
        let queue = q(&[("lock", 1), ("lock", 4), ("lock", 9)]);
        assert_eq!(blocker_exclusive(&queue, 0), None);
        assert_eq!(blocker_exclusive(&queue, 2), Some(1));
    }

    #[test]
    fn predecessor_across_counter_wrap() {
        let g = |c| Guid { session: 7, counter: c };
        let names = vec![
            format!("{}-2147483648", g(2).prefix("lock")),
            format!("{}2147483647", g(1).prefix("lock")),
            "foreign-node".to_string(),
            format!("{}-2147483647", g(3).prefix("lock")),
        ];
        let queue = SeqName::parse_sorted(&names, &["lock"]);
        let order: Vec<u64> = queue.iter().map(|n| n.guid.counter).collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert_eq!(blocker_exclusive(&queue, 1), Some(0));
    }
}
