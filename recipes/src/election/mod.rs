//! Leader election, herd-free (ZooKeeper recipes: "Leader Election"), with
//! an epoch token, abdication on suspension, and a latch.
//!
//! Candidates create ephemeral sequential `{guid}-n-N` nodes; the first in
//! creation order leads; each other candidate watches only its predecessor.
//! Guarantees: at most one [`Leadership`] per election directory is
//! *unsuspended and not lost* at any instant while sessions behave, and
//! leaders' tokens (their node's czxid) strictly increase from one leader
//! to the next. A leader that is paused past its session timeout can still
//! believe it leads for a moment: act only through the token (fencing).
//!
//! Faults handled: guid-protected create, never adopting another session's
//! node, wrap-aware order, re-read on reconnect, cancel-safe campaign (the
//! node of an abandoned campaign is deleted in the background), background
//! resign under ConnectionLoss, and abdication: by default a leader stops
//! leading (`is_leader()` false, [`Leadership::lost`] resolves) as soon as
//! its session is Disconnected, because the server may expire the session
//! about a third of a session timeout after the client notices.
//!
//! ```ignore
//! let election = Election::new(ctx.clone(), "/election/scheduler");
//! let leadership = election.campaign(b"node-1").await?;
//! while leadership.is_leader() {
//!     act(leadership.token()).await;
//! }
//! leadership.resign().await?;
//! ```

pub mod latch;

pub use latch::{LatchState, LeaderLatch};

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::lock::core::{acquire, blocker_exclusive, with_timeout, Contender};
use crate::lock::steps::{Exact, Steps};
use crate::lock::{LockGuard, Released};
use crate::monitor::{HoldState, LostReason};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{Stat, ZkClient, ZkError};

/// Node kind of candidates.
pub const CANDIDATE_KIND: &str = "n";

/// The largest suspension grace allowed, as a fraction of the session
/// timeout: the client declares Disconnected ⅔·T after it last heard from
/// the server, which may expire the session at T.
pub fn max_grace(session_timeout: Duration) -> Duration {
    session_timeout / 4
}

/// The current leader as any participant can observe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderInfo {
    pub name: String,
    pub data: Vec<u8>,
    /// The leader's token (its node's czxid).
    pub token: i64,
}

/// An election among the candidates under one directory. `S`: how the
/// queue's delicate steps are done (always [`Exact`] outside the harness's
/// planted types; see [`crate::lock::Steps`]).
#[derive(Clone)]
pub struct Election<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    dir: String,
    grace: Duration,
    steps: S,
}

impl<C: ZkClient, R: Runtime> Election<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        Election::with_steps(ctx, dir, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Election<C, R, S> {
    /// An election whose steps are done as `steps` does them.
    pub fn with_steps(ctx: Ctx<C, R>, dir: impl Into<String>, steps: S) -> Self {
        Election {
            ctx,
            dir: dir.into(),
            grace: Duration::ZERO,
            steps,
        }
    }

    /// Keep leading through a disconnection shorter than `grace` (clamped
    /// to [`max_grace`] of the session timeout). Default: zero.
    pub fn with_suspend_grace(mut self, grace: Duration) -> Self {
        self.grace = grace.min(max_grace(self.ctx.client().session_timeout()));
        self
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Stands for election with `data` (e.g. this node's address) and waits
    /// until elected.
    pub async fn campaign(&self, data: &[u8]) -> RecipeResult<Leadership<C, R, S>> {
        let guard = acquire(
            &self.ctx,
            &self.steps,
            Contender {
                dir: &self.dir,
                kind: CANDIDATE_KIND,
                kinds: &[CANDIDATE_KIND],
                blocker: blocker_exclusive,
                data,
                grace: Some(self.grace),
            },
        )
        .await?;
        Ok(Leadership { guard })
    }

    /// Like [`Self::campaign`], giving up after `limit`.
    pub async fn campaign_for(&self, data: &[u8], limit: Duration) -> RecipeResult<Option<Leadership<C, R, S>>> {
        with_timeout(&self.ctx, limit, self.campaign(data)).await
    }

    /// The current leader, if any (may be stale by the time it returns).
    pub async fn leader(&self) -> RecipeResult<Option<LeaderInfo>> {
        let ctx = &self.ctx;
        loop {
            let children = match ctx.retry(|| ctx.client().get_children(&self.dir)).await {
                Ok((c, _)) => c,
                Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(None),
                Err(e) => return Err(e),
            };
            let Some(first) = SeqName::parse_sorted(&children, &[CANDIDATE_KIND]).into_iter().next() else {
                return Ok(None);
            };
            let path = join(&self.dir, &first.name);
            match ctx.retry(|| ctx.client().get_data(&path)).await {
                Ok((data, stat)) => {
                    return Ok(Some(LeaderInfo {
                        name: first.name,
                        data,
                        token: stat.czxid,
                    }))
                }
                // The leader left between the two reads: look again.
                Err(RecipeError::Zk(ZkError::NoNode)) if self.steps.vanished_head_is_nobody() => return Ok(None),
                Err(RecipeError::Zk(ZkError::NoNode)) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Proof of having been elected, and the way to learn that it ended.
/// Dropping it resigns (the node is deleted in the background).
pub struct Leadership<C: ZkClient, R: Runtime, S: Steps = Exact> {
    guard: LockGuard<C, R, S>,
}

impl<C: ZkClient, R: Runtime, S: Steps> Leadership<C, R, S> {
    /// The epoch of this leadership: the candidate node's czxid, larger than
    /// every earlier leader's.
    pub fn token(&self) -> i64 {
        self.guard.token()
    }

    /// The candidate node's name (no parent).
    pub fn name(&self) -> &str {
        self.guard.name()
    }

    /// The candidate node's path (Curator's `getOurPath`).
    pub fn path(&self) -> &str {
        self.guard.path()
    }

    /// The candidate node's sequence number (wraps; prefer [`Self::token`]).
    pub fn sequence(&self) -> i32 {
        self.guard.sequence()
    }

    /// The candidate node's Stat as the campaign read it; its czxid is the
    /// token.
    pub fn stat(&self) -> &Stat {
        self.guard.stat()
    }

    /// True until the leadership is lost (session ended, node deleted, or
    /// suspended longer than the grace).
    pub fn is_leader(&self) -> bool {
        !matches!(self.guard.state(), HoldState::Lost(_))
    }

    pub fn state(&self) -> HoldState {
        self.guard.state()
    }

    /// Resolves when the leadership ends, with the reason.
    pub async fn lost(&self) -> LostReason {
        self.guard.lost().await
    }

    /// Steps down: deletes the candidate node (in the background if
    /// ConnectionLoss persists).
    pub async fn resign(self) -> RecipeResult<Released> {
        self.guard.release().await
    }
}
