//! The steps of the waiting-queue algorithm where ZooKeeper's ambiguities
//! bite: naming and creating a contender's node, waking up, cleaning up an
//! abandoned acquire, deleting the node on release, keeping a hold through
//! a disconnection. The exclusive lock, the semaphore and the election take
//! them as a type parameter whose default, [`Exact`], is
//! the one correct way. A planted type (feature `planted`) replaces one step
//! with the bug a real library shipped and shares every other line with the
//! correct recipe, so a detection is a detection of that one step.

use std::future::Future;
use std::time::Duration;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::lock::blocker::Blocker;
use crate::nodes::{create_protected, spawn_delete_own, OrphanGuard};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::{CreateMode, OneshotWatch, Stat, StateWatch, ZkClient, ZkError, ANY_VERSION};

/// How a release ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The node is deleted: the next waiter may proceed.
    Deleted,
    /// The session already ended, taking the node with it.
    SessionEnded,
    /// ConnectionLoss persisted; the delete keeps being retried in the
    /// background until the node or the session is gone. The caller must
    /// act as released already.
    InBackground,
}

/// How a lock-like recipe performs its delicate steps. Every method has the
/// correct body; [`Exact`] keeps them all.
pub trait Steps: Clone + Send + Sync + 'static {
    /// The guid that names this contender's node: one per create of one
    /// session, so that a node is never taken for another session's.
    fn guid<C: ZkClient, R: Runtime>(&self, ctx: &Ctx<C, R>) -> impl Future<Output = RecipeResult<Guid>> + Send {
        ctx.next_guid()
    }

    /// Creates `{dir}/{guid}-{kind}-N` exactly once across ConnectionLoss
    /// (find our own node by guid and owner before creating again). Returns
    /// the node's name and Stat.
    fn create<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        guid: &Guid,
        kind: &str,
        data: &[u8],
        mode: CreateMode,
    ) -> impl Future<Output = RecipeResult<(String, Stat)>> + Send {
        create_protected(ctx, dir, guid, kind, data, mode)
    }

    /// The drop guard that deletes the node of an acquire that is
    /// cancelled or fails (CURATOR-79/462).
    fn orphan_guard<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        guid: Guid,
    ) -> Option<OrphanGuard<C, R>> {
        Some(OrphanGuard::new(ctx, dir, guid))
    }

    /// Which node blocks a contender: the recipe's own rule.
    fn blocker(&self, exact: Blocker) -> Blocker {
        exact
    }

    /// Waits for the watched node to change or the session to move: a
    /// reconnect wakes the waiter too, so that it re-reads the queue.
    fn woken(&self, watch: OneshotWatch, states: &mut StateWatch) -> impl Future<Output = Woken> + Send {
        watch_or_session(watch, states)
    }

    /// Whether a wake-up alone makes it our turn: never. The watched node
    /// may have gone with a waiter that gave up while the one before it
    /// still holds, so the queue is read again. (Asked by the lock and
    /// election's waiting queue, `lock::core`; the semaphore counts leases
    /// instead.)
    fn turn_on(&self, _woken: &Woken) -> bool {
        false
    }

    /// Whether a blocker already gone when we come to watch it (deleted
    /// between our `getChildren` and `exists`) makes it our turn: never,
    /// for `turn_on`'s reason; the recipe's "if exists() returns null, go
    /// to step 2".
    fn gone_is_turn(&self) -> bool {
        false
    }

    /// Whether a leader that vanished between `Election::leader`'s listing
    /// and its read of the leader's node means nobody leads: never. The
    /// next candidate leads now, so the queue is listed again.
    fn vanished_head_is_nobody(&self) -> bool {
        false
    }

    /// How long a hold survives a disconnection (`None`: for ever): the
    /// recipe's own grace.
    fn grace(&self, grace: Option<Duration>) -> Option<Duration> {
        grace
    }

    /// Deletes the held node. ConnectionLoss is retried per the policy and
    /// then handed to a background task: never reported released while the
    /// node may linger (CURATOR-202/678).
    fn release<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        path: &str,
    ) -> impl Future<Output = RecipeResult<Released>> + Send {
        async move {
            let deleted = ctx
                .retry(|| async {
                    match ctx.client().delete(path, ANY_VERSION).await {
                        Err(ZkError::NoNode) => Ok(()),
                        r => r,
                    }
                })
                .await;
            match deleted {
                Ok(()) => Ok(Released::Deleted),
                Err(RecipeError::SessionLost) => Ok(Released::SessionEnded),
                Err(RecipeError::Zk(e)) if crate::retry::retryable(&e) => {
                    spawn_delete_own(ctx, path);
                    Ok(Released::InBackground)
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// The correct steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exact;

impl Steps for Exact {}
