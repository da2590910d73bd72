//! Broken leader elections: the correct [`crate::election::Election`]'s queue and hold, with
//! one rule of it broken.

use std::time::Duration;

use crate::ctx::Ctx;
use crate::election::{Election, Leadership, CANDIDATE_KIND};
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::lock::core::{blocker_exclusive, with_timeout};
use crate::lock::guard::LockGuard;
use crate::lock::steps::Exact;
use crate::nodes::{create_protected, OrphanGuard};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, EventType, StateWatch, ZkClient};

/// Suspended ignored, for a leader (Curator Tech Note 10; kazoo's
/// `Election.run`, which keeps running its leader function through
/// SUSPENDED): leadership ends only when the session ends or the node goes,
/// never on Disconnected. A leader cut off from the ensemble keeps acting
/// while the servers expire its session and elect another.
pub struct NoAbdicationElection<C, R> {
    election: Election<C, R>,
}

impl<C: ZkClient, R: Runtime> NoAbdicationElection<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        NoAbdicationElection {
            election: Election::new(ctx, dir),
        }
    }

    pub async fn campaign(&self, data: &[u8]) -> RecipeResult<Leadership<C, R>> {
        // The bug: no suspension limit.
        self.election.campaign_with_grace(data, None).await
    }

    pub async fn campaign_for(&self, data: &[u8], limit: Duration) -> RecipeResult<Option<Leadership<C, R>>> {
        with_timeout(self.election.ctx(), limit, self.campaign(data)).await
    }
}

/// Predecessor gone, so I lead (the ZooKeeper recipe's own warning: a
/// candidate woken by its predecessor's deletion must re-read the
/// children; the predecessor may have been a candidate that gave up or
/// died while someone before it still leads). Needs a waiter to leave the
/// queue without ever leading — a campaign that times out, or a session
/// that expires while waiting.
pub struct PredecessorGoneElection<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> PredecessorGoneElection<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        PredecessorGoneElection { ctx, dir: dir.into() }
    }

    /// As [`Election::campaign`] (grace zero), with the broken wait.
    pub async fn campaign(&self, data: &[u8]) -> RecipeResult<Leadership<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let guid = ctx.next_guid().await?;
        let orphan = OrphanGuard::new(ctx, &self.dir, guid);
        let (name, stat) = create_protected(
            ctx,
            &self.dir,
            &guid,
            CANDIDATE_KIND,
            data,
            CreateMode::EphemeralSequential,
        )
        .await?;
        let me = SeqName::parse(&name, &[CANDIDATE_KIND]).ok_or_else(|| RecipeError::BadData {
            path: join(&self.dir, &name),
            reason: "created node has no sequence suffix".into(),
        })?;
        self.wait_turn(&me.name, &mut states).await?;
        orphan.disarm();
        let path = join(&self.dir, &name);
        let grace = Some(Duration::ZERO);
        Ok(Leadership::from_guard(LockGuard::new(
            ctx,
            Exact,
            path,
            stat,
            me.sequence,
            states,
            grace,
        )))
    }

    pub async fn campaign_for(&self, data: &[u8], limit: Duration) -> RecipeResult<Option<Leadership<C, R>>> {
        with_timeout(&self.ctx, limit, self.campaign(data)).await
    }

    async fn wait_turn(&self, me: &str, states: &mut StateWatch) -> RecipeResult<()> {
        let ctx = &self.ctx;
        loop {
            let (children, _) = ctx.retry(|| ctx.client().get_children(&self.dir)).await?;
            let queue = SeqName::parse_sorted(&children, &[CANDIDATE_KIND]);
            let Some(idx) = queue.iter().position(|n| n.name == me) else {
                return Err(RecipeError::NodeGone(join(&self.dir, me)));
            };
            let Some(b) = blocker_exclusive(&queue, idx) else {
                return Ok(());
            };
            let blocking = join(&self.dir, &queue[b].name);
            let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&blocking)).await?;
            if stat.is_none() {
                continue;
            }
            match watch_or_session(watch, states).await {
                // The bug: the predecessor's deletion taken for our turn.
                Woken::Node(ev) if ev.event_type == EventType::NodeDeleted => return Ok(()),
                Woken::Node(_) | Woken::Reconnected => continue,
                Woken::SessionLost => return Err(RecipeError::SessionLost),
            }
        }
    }
}
