//! The steps of the queue where ZooKeeper's ambiguities bite: writing an
//! item, and a consumer's take (at-most-once) or claim (at-least-once),
//! each of which may be applied with its reply lost. The producer and both
//! consumers take them as a type parameter whose default, [`Exact`], is
//! the one correct way. A planted type (feature `planted`) replaces one
//! step with the bug a real library shipped and shares every other line
//! with the correct recipe.

use std::future::Future;

use crate::ctx::Ctx;
use crate::error::RecipeResult;
use crate::guid::Guid;
use crate::queue::{at_least_once, at_most_once, ItemName, Layout};
use crate::runtime::Runtime;
use crate::zk::ZkClient;

/// How a queue performs its delicate steps. Every method has the correct
/// body; [`Exact`] keeps them all.
pub trait Steps: Clone + Send + Sync + 'static {
    /// Creates the item named by `guid` exactly once across ConnectionLoss
    /// (with the producer's marker in the same `multi`, which tells after
    /// ConnectionLoss whether it was applied).
    fn put<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        layout: &Layout,
        guid: &Guid,
        data: &[u8],
        priority: i32,
    ) -> impl Future<Output = RecipeResult<()>> + Send {
        super::put_exactly_once(ctx, layout, guid, data, priority)
    }

    /// Removes `item` for this consumer: `Ok(true)` if ours,
    /// `Ok(false)` if another consumer's (proved by its `taken/` marker,
    /// never assumed from a NoNode).
    fn take<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        layout: &Layout,
        item: &ItemName,
    ) -> impl Future<Output = RecipeResult<bool>> + Send {
        at_most_once::take_marked(ctx, layout, item)
    }

    /// Creates our claim at `path`: `Ok(false)` if another live consumer
    /// holds it (a NodeExists is ours if its owner is our session).
    fn claim<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        layout: &Layout,
        path: &str,
    ) -> impl Future<Output = RecipeResult<bool>> + Send {
        at_least_once::create_claim(ctx, layout, path)
    }

    /// After ConnectionLoss on the multi that completes a claimed item
    /// (delete our claim and the item): `Ok(true)` if it was applied,
    /// `Ok(false)` if not (safe to send again), `Err(Ambiguous)` if that
    /// cannot be read.
    fn complete_fate<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        claim_path: &str,
        item_path: &str,
    ) -> impl Future<Output = RecipeResult<bool>> + Send {
        at_least_once::complete_fate(ctx, claim_path, item_path)
    }
}

/// The correct steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exact;

impl Steps for Exact {}
