//! A broken leader latch: the correct [`LeaderLatch`] with its waiting and
//! leading steps replaced by Curator's pre-5.4 reset.

use futures::{select_biased, FutureExt};

use crate::ctx::Ctx;
use crate::election::latch::Steps;
use crate::election::{LeaderLatch, CANDIDATE_KIND};
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::monitor::{Hold, LostReason};
use crate::nodes::{delete_own, Deleted};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{SessionState, StateWatch, ZkClient};

/// Reset livelock (CURATOR-644/645): Curator's pre-5.4 LeaderLatch shape.
/// On every reconnect the latch "resets" — deletes its candidate node and
/// queues again with a new one at the back — and it resets too when its
/// predecessor is gone (a NoNode setting the watch, or the watch firing
/// NodeDeleted). One reset deletes a node another candidate watches, which
/// resets, which deletes the node the next one watches...: the head of the
/// queue always resets instead of leading, so after a leader's reconnect no
/// leader is ever elected, with unbounded node churn.
pub type ResetLivelockLatch = LeaderLatch<ResetOnWake>;

/// Any wake-up — the predecessor changed or gone, a reconnect, while
/// waiting or leading — resets instead of re-reading the queue.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResetOnWake;

/// Deletes our node so that the latch queues again with a new one.
async fn reset<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str) -> RecipeResult<()> {
    match delete_own(ctx, path).await {
        Deleted::Gone => Err(RecipeError::NodeGone(path.to_string())),
        Deleted::SessionEnded => Err(RecipeError::SessionLost),
    }
}

impl Steps for ResetOnWake {
    async fn wait_turn<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        me: &str,
        states: &mut StateWatch,
    ) -> RecipeResult<()> {
        let path = join(dir, me);
        let (children, _) = ctx.retry(|| ctx.client().get_children(dir)).await?;
        let queue = SeqName::parse_sorted(&children, &[CANDIDATE_KIND]);
        let Some(idx) = queue.iter().position(|n| n.name == me) else {
            return Err(RecipeError::NodeGone(path));
        };
        if idx == 0 {
            return Ok(());
        }
        let pred = join(dir, &queue[idx - 1].name);
        let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&pred)).await?;
        if stat.is_none() {
            return reset(ctx, &path).await; // BUG: Curator's `NONODE -> reset()`.
        }
        // Not `wait::watch_or_session`, which has the same branches: it
        // drops the watch's future before the reset, this keeps it until the
        // reset is done, and the two schedules differ (every seed of
        // latch-reset-livelock changes its history; tried in review).
        let mut watch = Box::pin(watch.changed().fuse());
        loop {
            select_biased! {
                ev = watch => {
                    if ev.is_session_event() && ev.state.is_terminal() {
                        return Err(RecipeError::SessionLost);
                    }
                    // BUG: any change of the predecessor (its NodeDeleted
                    // above all) resets instead of re-reading the queue.
                    return reset(ctx, &path).await;
                }
                s = states.changed().fuse() => match s {
                    SessionState::Disconnected => continue,
                    s if s.is_terminal() => return Err(RecipeError::SessionLost),
                    _ => return reset(ctx, &path).await, // BUG: reset on every reconnect.
                },
            }
        }
    }

    async fn lead<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        path: &str,
        hold: &Hold,
        states: &mut StateWatch,
    ) -> LostReason {
        loop {
            select_biased! {
                r = hold.lost().fuse() => return r,
                s = states.changed().fuse() => match s {
                    SessionState::Disconnected => continue,
                    s if s.is_terminal() => return LostReason::SessionEnded,
                    _ => break,
                },
            }
        }
        // BUG: a reconnect resets the leader too.
        match reset(ctx, path).await {
            Err(RecipeError::SessionLost) => LostReason::SessionEnded,
            _ => LostReason::NodeDeleted,
        }
    }
}
