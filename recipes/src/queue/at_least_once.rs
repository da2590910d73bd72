//! At-least-once consumption: claim, process, then complete.
//!
//! A consumer claims the head unclaimed item with an ephemeral
//! `claims/{item}` node, processes it, and completes it by deleting the
//! claim and the item in one `multi`. A consumer whose session ends
//! mid-processing loses its claim with the session, and another consumer
//! retakes the item: items are never lost, but may be processed more than
//! once (CURATOR-605 is inherent to this contract; [`Claimed::is_lost`]
//! tells a processor to stop early).
//!
//! Faults handled: ConnectionLoss on the claim (resolved by the claim's
//! `ephemeralOwner`), a claim won on an item another consumer just
//! completed (the claim is removed again, kazoo #366), ConnectionLoss on
//! the completion (resolved by whether our claim still exists: only we
//! delete it while our session lives), reconnects while waiting for items.

use std::time::Duration;

use futures::future::{select, Either};

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::lock::core::until;
use crate::monitor::{Hold, HoldState, LostReason};
use crate::nodes::{create_all, delete_own, spawn_delete_if_owned, spawn_delete_own};
use crate::queue::{Exact, ItemName, Layout, QueueItem, Steps};
use crate::runtime::Runtime;
use crate::wait::{event_or_session, Woken};
use crate::zk::path::{join, parent};
use crate::zk::{CreateMode, Op, ZkClient, ZkError, ANY_VERSION};

/// A consumer that completes items only after processing them. `S`: how
/// an item is claimed (always [`Exact`] outside the harness's planted
/// types).
#[derive(Clone)]
pub struct AtLeastOnceConsumer<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    layout: Layout,
    steps: S,
}

/// An item claimed by this consumer. Dropping it without
/// [`Claimed::complete`] gives the item back (its claim is deleted).
pub struct Claimed<C: ZkClient, R: Runtime, S: Steps = Exact> {
    ctx: Ctx<C, R>,
    steps: S,
    item: QueueItem,
    item_path: String,
    claim_path: String,
    hold: Hold,
    done: bool,
}

impl<C: ZkClient, R: Runtime> AtLeastOnceConsumer<C, R> {
    pub fn new(ctx: Ctx<C, R>, root: &str) -> Self {
        AtLeastOnceConsumer::with_steps(ctx, root, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> AtLeastOnceConsumer<C, R, S> {
    /// A consumer whose claim is done as `steps` does it.
    pub fn with_steps(ctx: Ctx<C, R>, root: &str, steps: S) -> Self {
        AtLeastOnceConsumer {
            ctx,
            layout: Layout::new(root),
            steps,
        }
    }

    /// Claims the first unclaimed item, or `None` if there is none.
    pub async fn try_claim(&self) -> RecipeResult<Option<Claimed<C, R, S>>> {
        let ctx = &self.ctx;
        let items = match ctx.retry(|| ctx.client().get_children(&self.layout.items)).await {
            Ok((c, _)) => c,
            Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let claims = self.claims(false).await?.0;
        self.claim_first(&items, &claims).await
    }

    /// Waits for an unclaimed item and claims it.
    pub async fn claim(&self) -> RecipeResult<Claimed<C, R, S>> {
        self.claim_until(None)
            .await?
            .ok_or(RecipeError::Cancelled("claim gave up without a deadline"))
    }

    /// Like [`Self::claim`], giving up after `limit` (`Ok(None)`).
    pub async fn claim_for(&self, limit: Duration) -> RecipeResult<Option<Claimed<C, R, S>>> {
        self.claim_until(Some(self.ctx.runtime().now() + limit)).await
    }

    /// Waits for an unclaimed item until `deadline` and claims it. The
    /// deadline cuts only the listing and the waiting: a claim once sent is
    /// seen through, since one abandoned after its create was applied would
    /// hold the item, unseen, for as long as our session lives.
    async fn claim_until(&self, deadline: Option<Duration>) -> RecipeResult<Option<Claimed<C, R, S>>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        loop {
            let listing = until(ctx, deadline, async {
                let (items, _, items_watch) =
                    match ctx.retry(|| ctx.client().get_children_watch(&self.layout.items)).await {
                        Ok(r) => r,
                        Err(RecipeError::Zk(ZkError::NoNode)) => {
                            create_all(ctx, &self.layout.items).await?;
                            return Ok(None);
                        }
                        Err(e) => return Err(e),
                    };
                let (claims, claims_watch) = self.claims(true).await?;
                Ok(Some((items, items_watch, claims, claims_watch)))
            });
            let (items, items_watch, claims, claims_watch) = match listing.await? {
                None => return Ok(None),
                Some(None) => continue,
                Some(Some(r)) => r,
            };
            if let Some(c) = self.claim_first(&items, &claims).await? {
                return Ok(Some(c));
            }
            // Wake on a new item or on a claim going away (its consumer
            // completed, gave up, or died).
            let woken = until(ctx, deadline, async {
                Ok(match claims_watch {
                    Some(cw) => {
                        let either = async move {
                            match select(Box::pin(items_watch.changed()), Box::pin(cw.changed())).await {
                                Either::Left((e, _)) | Either::Right((e, _)) => e,
                            }
                        };
                        event_or_session(either, &mut states).await
                    }
                    None => event_or_session(items_watch.changed(), &mut states).await,
                })
            });
            match woken.await? {
                None => return Ok(None),
                Some(Woken::SessionLost) => return Err(RecipeError::SessionLost),
                Some(_) => {}
            }
        }
    }

    /// Current claims (and a watch on them if asked).
    async fn claims(&self, watch: bool) -> RecipeResult<(Vec<String>, Option<crate::zk::OneshotWatch>)> {
        let ctx = &self.ctx;
        let dir = &self.layout.claims;
        loop {
            let r = if watch {
                ctx.retry(|| ctx.client().get_children_watch(dir))
                    .await
                    .map(|(c, _, w)| (c, Some(w)))
            } else {
                ctx.retry(|| ctx.client().get_children(dir))
                    .await
                    .map(|(c, _)| (c, None))
            };
            match r {
                Ok(mut r) => {
                    r.0.sort();
                    return Ok(r);
                }
                Err(RecipeError::Zk(ZkError::NoNode)) => create_all(ctx, dir).await?,
                Err(e) => return Err(e),
            }
        }
    }

    async fn claim_first(&self, items: &[String], claims: &[String]) -> RecipeResult<Option<Claimed<C, R, S>>> {
        for item in ItemName::parse_sorted(items) {
            if claims.binary_search(&item.name).is_ok() {
                continue;
            }
            if let Some(c) = self.claim_one(item).await? {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    async fn claim_one(&self, item: ItemName) -> RecipeResult<Option<Claimed<C, R, S>>> {
        let ctx = &self.ctx;
        let states = ctx.client().state_watch();
        let claim_path = join(&self.layout.claims, &item.name);
        if !self.steps.claim(ctx, &self.layout, &claim_path).await? {
            return Ok(None);
        }
        let item_path = join(&self.layout.items, &item.name);
        match ctx.retry(|| ctx.client().get_data(&item_path)).await {
            Ok((data, stat)) => Ok(Some(Claimed {
                steps: self.steps.clone(),
                hold: Hold::spawn(ctx, &claim_path, states, None),
                ctx: ctx.clone(),
                item: QueueItem {
                    id: item.guid.to_string(),
                    name: item.name,
                    priority: item.priority,
                    data,
                    czxid: stat.czxid,
                },
                item_path,
                claim_path,
                done: false,
            })),
            Err(RecipeError::Zk(ZkError::NoNode)) => {
                // Completed by its previous claimant between our listing and
                // our claim: drop the stale claim so it cannot linger.
                delete_own(ctx, &claim_path).await;
                Ok(None)
            }
            Err(e) => {
                spawn_delete_own(ctx, &claim_path);
                Err(e)
            }
        }
    }
}

/// The correct [`Steps::complete_fate`]. The multi deletes the item with
/// our claim: the item still there means it was not applied (send it
/// again); gone means it was, or another claimant completed the item after
/// our claim was lost — gone for good either way. (Not our claim's
/// absence: a consumer that listed the item before our delete may create a
/// claim of the same name after it.) If the session ends, or retries run
/// out, before we can look, the multi may have been applied: Ambiguous,
/// never "session lost, the item stays".
pub(crate) async fn complete_fate<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    claim_path: &str,
    item_path: &str,
) -> RecipeResult<bool> {
    let item_gone = async {
        ctx.retry(|| ctx.client().sync(parent(item_path))).await?;
        Ok::<_, RecipeError>(ctx.retry(|| ctx.client().exists(item_path)).await?.is_none())
    };
    item_gone.await.map_err(|e| {
        RecipeError::Ambiguous(format!(
            "completing {claim_path}: the multi's reply was lost and its fate could not be read ({e})"
        ))
    })
}

/// The correct [`Steps::claim`]: creates our claim; false if another live
/// consumer holds it.
pub(crate) async fn create_claim<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    layout: &Layout,
    path: &str,
) -> RecipeResult<bool> {
    let me = ctx.session_id().await?;
    let policy = ctx.retry_policy();
    let mut attempt = 0;
    loop {
        match ctx.client().create(path, &[], CreateMode::Ephemeral).await {
            Ok(_) => return Ok(true),
            Err(ZkError::NoNode) => create_all(ctx, &layout.claims).await?,
            Err(ZkError::NodeExists) => {
                // Ours if an earlier attempt of ours was applied.
                return match ctx.retry(|| ctx.client().exists(path)).await {
                    Ok(Some(stat)) => Ok(stat.ephemeral_owner == me),
                    Ok(None) => Ok(false),
                    Err(e) => {
                        if attempt > 0 && !e.is_session_lost() {
                            spawn_delete_if_owned(ctx, path, me);
                        }
                        Err(e)
                    }
                };
            }
            Err(e) if e.is_ambiguous() && attempt + 1 < policy.max_attempts => {
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt += 1;
            }
            Err(e) => {
                // Giving up after a lost reply: a create of ours may still be
                // applied, a claim nobody knows of that would hide the item
                // for as long as our session lives.
                if (attempt > 0 || e.is_ambiguous()) && !e.is_session_lost() {
                    spawn_delete_if_owned(ctx, path, me);
                }
                return Err(RecipeError::from_zk(e));
            }
        }
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Claimed<C, R, S> {
    pub fn item(&self) -> &QueueItem {
        &self.item
    }

    /// Disconnected: the claim may be expiring; another consumer may soon
    /// retake the item.
    pub fn is_suspended(&self) -> bool {
        self.hold.state() == HoldState::Suspended
    }

    /// The claim is gone: another consumer may be processing the item.
    pub fn is_lost(&self) -> bool {
        matches!(self.hold.state(), HoldState::Lost(_))
    }

    /// Resolves when the claim is lost.
    pub async fn lost(&self) -> LostReason {
        self.hold.lost().await
    }

    /// Removes the item (and our claim) for good.
    ///
    /// `Err(SessionLost)` / `Err(NodeGone)`: our claim is gone and the item
    /// will be (or was) redelivered. `Err(Ambiguous)`: the removal may have
    /// happened (a reply lost, then the session too).
    pub async fn complete(mut self) -> RecipeResult<()> {
        self.done = true;
        let ctx = self.ctx.clone();
        let ops = vec![
            Op::Delete {
                path: self.claim_path.clone(),
                version: ANY_VERSION,
            },
            Op::Delete {
                path: self.item_path.clone(),
                version: ANY_VERSION,
            },
        ];
        let policy = ctx.retry_policy();
        let mut attempt = 0u32;
        loop {
            match ctx.client().multi(ops.clone()).await {
                Ok(_) => return Ok(()),
                Err(e) if e.error == ZkError::NoNode && e.index == 0 => {
                    return Err(if ctx.session_lost() {
                        RecipeError::SessionLost
                    } else {
                        RecipeError::NodeGone(self.claim_path.clone())
                    })
                }
                Err(e) if e.error == ZkError::NoNode => {
                    // The item vanished under our claim: someone bypassed
                    // the claim protocol. Drop our claim.
                    spawn_delete_own(&ctx, &self.claim_path);
                    return Err(RecipeError::Conflict(format!(
                        "item {} deleted while claimed by us",
                        self.item.name
                    )));
                }
                Err(e) if e.error.is_ambiguous() => {
                    ctx.runtime().sleep(policy.delay(attempt)).await;
                    attempt = attempt.saturating_add(1);
                    match self.steps.complete_fate(&ctx, &self.claim_path, &self.item_path).await {
                        Ok(true) => return Ok(()),
                        Ok(false) => {}
                        Err(e) => {
                            // Fate unknown on a live session: give the claim
                            // up, or the item would stay claimed by us, never
                            // redelivered (if the multi was applied, the claim
                            // is gone already and this deletes nothing).
                            if !ctx.session_lost() {
                                spawn_delete_own(&ctx, &self.claim_path);
                            }
                            return Err(e);
                        }
                    }
                }
                Err(e) => return Err(RecipeError::from_zk(e.error)),
            }
        }
    }

    /// Gives the item back for another consumer (deletes our claim).
    pub async fn abandon(mut self) {
        self.done = true;
        delete_own(&self.ctx, &self.claim_path).await;
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Drop for Claimed<C, R, S> {
    fn drop(&mut self) {
        if !self.done && !self.ctx.session_lost() {
            spawn_delete_own(&self.ctx, &self.claim_path);
        }
    }
}
