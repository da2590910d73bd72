//! Barriers (ZooKeeper recipes: "Barriers", "Double Barriers").
//!
//! [`Barrier`]: a node whose existence holds everyone back. Waiters return
//! once the node is absent; `set`/`remove` are idempotent, so ConnectionLoss
//! is retried. A waiter re-checks after every reconnect, so a watch lost
//! across a reconnect cannot hang it. Limitation (ZooKeeper's own): a
//! remove followed by a set while a waiter is disconnected may go unseen by
//! it (the waiter then waits for the next remove).
//!
//! [`DoubleBarrier`]: `count` participants enter together and leave
//! together, using ZooKeeper's algorithm: ephemeral sequential participant
//! nodes `{guid}-p-N` and a `ready` node created by whoever sees `count`
//! participants. A participant that dies drops out of the barrier with its
//! session. A barrier directory is single-use (the `ready` node stays).
//!
//! ```ignore
//! let mut b = DoubleBarrier::new(ctx.clone(), "/barriers/round-7", 3);
//! b.enter().await?;   // all 3 are in
//! compute().await;
//! b.leave().await?;   // all 3 are out
//! ```

use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::lock::core::with_timeout;
use crate::nodes::{create_all, create_protected, delete_own, OrphanGuard};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::{join, parent};
use crate::zk::{CreateMode, Op, StateWatch, ZkClient, ZkError, ANY_VERSION};

/// A single barrier: waiters block while its node exists.
#[derive(Clone)]
pub struct Barrier<C, R> {
    ctx: Ctx<C, R>,
    path: String,
}

impl<C: ZkClient, R: Runtime> Barrier<C, R> {
    pub fn new(ctx: Ctx<C, R>, path: impl Into<String>) -> Self {
        Barrier { ctx, path: path.into() }
    }

    /// Puts the barrier up (idempotent).
    pub async fn set(&self) -> RecipeResult<()> {
        let ctx = &self.ctx;
        create_all(ctx, parent(&self.path)).await?;
        ctx.retry(|| async {
            match ctx.client().create(&self.path, &[], CreateMode::Persistent).await {
                Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// Takes the barrier down, releasing every waiter (idempotent).
    pub async fn remove(&self) -> RecipeResult<()> {
        let ctx = &self.ctx;
        ctx.retry(|| async {
            match ctx.client().delete(&self.path, ANY_VERSION).await {
                Ok(()) | Err(ZkError::NoNode) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// Waits until the barrier is down. A barrier set (completed) before
    /// `wait` was invoked holds the waiter back: an absence is believed only
    /// once the quorum confirms it ([`Self::absent_at_quorum`]), so a server
    /// that lags, or is cut off from the quorum, cannot let a waiter through.
    pub async fn wait(&self) -> RecipeResult<()> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        loop {
            let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&self.path)).await?;
            if stat.is_none() {
                if self.absent_at_quorum().await? {
                    return Ok(());
                }
                // Our server was behind; the write's reply moved our zxid
                // past the barrier's creation, so the next read sees it.
                continue;
            }
            if watch_or_session(watch, &mut states).await == Woken::SessionLost {
                return Err(RecipeError::SessionLost);
            }
        }
    }

    /// Whether the barrier node is absent at the leader. A `check` inside a
    /// multi is a write, so the quorum orders it; `sync` is not
    /// (ZOOKEEPER-1675): a server cut off from the quorum answers `sync` and
    /// then a stale "no node".
    async fn absent_at_quorum(&self) -> RecipeResult<bool> {
        let ctx = &self.ctx;
        let check = || {
            vec![Op::Check {
                path: self.path.clone(),
                version: ANY_VERSION,
            }]
        };
        ctx.retry(|| async {
            match ctx.client().multi(check()).await {
                Ok(_) => Ok(false),
                Err(e) if e.error == ZkError::NoNode => Ok(true),
                Err(e) => Err(e.error),
            }
        })
        .await
    }

    /// Like [`Self::wait`], giving up after `limit` (`Ok(false)`).
    pub async fn wait_for(&self, limit: Duration) -> RecipeResult<bool> {
        Ok(with_timeout(&self.ctx, limit, self.wait()).await?.is_some())
    }
}

/// Participant node kind.
const PARTICIPANT: &str = "p";
const READY: &str = "ready";

/// One participant of a double barrier.
pub struct DoubleBarrier<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
    count: usize,
    /// Our participant node's name while entered.
    node: Option<String>,
}

impl<C: ZkClient, R: Runtime> DoubleBarrier<C, R> {
    /// A participant of a barrier of `count` under `dir`.
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>, count: usize) -> Self {
        DoubleBarrier {
            ctx,
            dir: dir.into(),
            count,
            node: None,
        }
    }

    /// Our participant node, once entered.
    pub fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    async fn participants(&self) -> RecipeResult<Vec<SeqName>> {
        let ctx = &self.ctx;
        let (children, _) = ctx.retry(|| ctx.client().get_children(&self.dir)).await?;
        Ok(SeqName::parse_sorted(&children, &[PARTICIPANT]))
    }

    /// Joins and waits until `count` participants have joined. Cancel-safe:
    /// a dropped `enter` deletes its node in the background.
    pub async fn enter(&mut self) -> RecipeResult<()> {
        if self.count == 0 {
            return Err(RecipeError::InvalidArgument("count must be at least 1".into()));
        }
        let ctx = self.ctx.clone();
        let mut states = ctx.client().state_watch();
        let ready = join(&self.dir, READY);
        let guid = ctx.next_guid().await?;
        let orphan = OrphanGuard::new(&ctx, &self.dir, guid);
        let (name, _) = create_protected(
            &ctx,
            &self.dir,
            &guid,
            PARTICIPANT,
            &[],
            CreateMode::EphemeralSequential,
        )
        .await?;
        loop {
            // Watch `ready` before counting, so a `ready` created after the
            // count is not missed.
            let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&ready)).await?;
            if stat.is_some() {
                break;
            }
            let all = self.participants().await?;
            if !all.iter().any(|p| p.name == name) {
                return Err(gone(&ctx, &self.dir, &name));
            }
            if all.len() >= self.count {
                ctx.retry(|| async {
                    match ctx.client().create(&ready, &[], CreateMode::Persistent).await {
                        Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                        Err(e) => Err(e),
                    }
                })
                .await?;
                break;
            }
            if watch_or_session(watch, &mut states).await == Woken::SessionLost {
                return Err(RecipeError::SessionLost);
            }
        }
        orphan.disarm();
        self.node = Some(name);
        Ok(())
    }

    /// Leaves and waits until every participant has left.
    pub async fn leave(&mut self) -> RecipeResult<()> {
        let ctx = self.ctx.clone();
        let mut states = ctx.client().state_watch();
        let Some(me) = self.node.clone() else {
            return Err(RecipeError::InvalidArgument("leave without enter".into()));
        };
        loop {
            let all = self.participants().await?;
            let (Some(lowest), Some(highest)) = (all.first(), all.last()) else {
                break;
            };
            let mine = all.iter().any(|p| p.name == me);
            if mine && all.len() == 1 {
                delete_own(&ctx, &join(&self.dir, &me)).await;
                break;
            }
            // The lowest waits for the highest to go; everyone else leaves
            // and waits for the lowest: O(1) watches per departure.
            let wait_on = if mine && lowest.name == me {
                highest.name.clone()
            } else {
                if mine {
                    delete_own(&ctx, &join(&self.dir, &me)).await;
                }
                lowest.name.clone()
            };
            if !self.wait_gone(&ctx, &wait_on, &mut states).await? {
                continue;
            }
        }
        self.node = None;
        if ctx.session_lost() {
            return Err(RecipeError::SessionLost);
        }
        Ok(())
    }

    /// Waits for `name` to disappear; false if it already had.
    async fn wait_gone(&self, ctx: &Ctx<C, R>, name: &str, states: &mut StateWatch) -> RecipeResult<bool> {
        let path = join(&self.dir, name);
        let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&path)).await?;
        if stat.is_none() {
            return Ok(false);
        }
        match watch_or_session(watch, states).await {
            Woken::SessionLost => Err(RecipeError::SessionLost),
            _ => Ok(true),
        }
    }
}

fn gone<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, dir: &str, name: &str) -> RecipeError {
    if ctx.session_lost() {
        RecipeError::SessionLost
    } else {
        RecipeError::NodeGone(join(dir, name))
    }
}
