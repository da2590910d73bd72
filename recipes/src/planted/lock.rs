//! Broken locks (and the semaphore's leaked lease): each is the correct
//! [`Lock`] (or [`Semaphore`]) with one of its [`Steps`] replaced by the
//! bug a real library shipped. Everything else — waiting for the
//! predecessor, re-reading on wake-up and reconnect, watching the hold,
//! releasing — is the correct recipe's own code, so that a detection is a
//! detection of that one step.

use futures::{select_biased, FutureExt};

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::{Guid, SeqName};
use crate::lock::blocker::Blocker;
use crate::lock::steps::{Exact, Released, Steps};
use crate::lock::{Lock, LockGuard};
use crate::nodes::{create_all, dir_len, find_own, OrphanGuard};
use crate::runtime::Runtime;
use crate::semaphore::Semaphore;
use crate::wait::Woken;
use crate::zk::path::join;
use crate::zk::{CreateMode, OneshotWatch, Stat, StateWatch, ZkClient, ANY_VERSION};

use super::back_off_blindly;

/// Unprotected create (CURATOR-45; go-zookeeper #229; ZK contrib
/// LeaderElectionSupport) — also the seeds' "lock without a guid": a
/// ConnectionLoss on the contender's create is retried blindly, so an
/// applied first create is forgotten. The orphan (owned by a live session)
/// eventually heads the queue and everyone, its creator included, waits
/// behind it for ever.
pub type UnprotectedCreateLock<C, R> = Lock<C, R, BlindCreate>;

/// Leaked lease (CURATOR-315, CURATOR-595): the semaphore whose lease
/// create is retried blindly. When the first create was applied, its node
/// holds a lease for as long as the session lives and nobody ever returns
/// it; enough of them exhaust the permits and every acquire hangs.
pub type LeakedLeaseSemaphore<C, R> = Semaphore<C, R, BlindCreate>;

/// Stale-session adoption (CURATOR-696, CURATOR-498, CURATOR-604): see
/// [`AdoptAnySession`].
pub type StaleSessionLock<C, R> = Lock<C, R, AdoptAnySession>;

/// Cancellation leak (CURATOR-79, CURATOR-462): a timed-out or cancelled
/// acquire abandons its node; it lives as long as the session and, once it
/// heads the queue, blocks every later acquire.
pub type CancellationLeakLock<C, R> = Lock<C, R, NoOrphanCleanup>;

/// Delete under disconnect (CURATOR-202, CURATOR-678, CURATOR-486): the
/// release sends one `delete`; on ConnectionLoss it reports the lock
/// released and never retries, so a delete that was not applied leaves the
/// node — and every later acquire hangs for as long as the session lives.
pub type DeleteUnderDisconnectLock<C, R> = Lock<C, R, OneDelete>;

/// Lost watch on reconnect (kazoo PR #170; CURATOR-623; CURATOR-311): see
/// [`ForgetWatchOnDisconnect`].
pub type LostWatchLock<C, R> = Lock<C, R, ForgetWatchOnDisconnect>;

/// Herd effect: every waiter watches the holder's node instead of its
/// predecessor's, so every release wakes every waiter (O(waiters)
/// notifications per release instead of 1) — the recipes page's warning
/// about the simple lock. Mutual exclusion still holds.
pub type HerdLock<C, R> = Lock<C, R, WatchTheHolder>;

/// Creates `{dir}/{guid}-{kind}-N`, retrying an ambiguous failure blindly
/// (the first create may have been applied); after each retry `adopt` may
/// name a node to take instead.
async fn create_blindly<C, R, F, Fut>(
    ctx: &Ctx<C, R>,
    dir: &str,
    guid: &Guid,
    kind: &str,
    data: &[u8],
    mode: CreateMode,
    adopt: F,
) -> RecipeResult<(String, Stat)>
where
    C: ZkClient,
    R: Runtime,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = RecipeResult<Option<(String, Stat)>>>,
{
    let prefix = join(dir, &guid.prefix(kind));
    let mut attempt = 0u32;
    loop {
        match ctx.client().create(&prefix, data, mode).await {
            Ok((path, stat)) => return Ok((path[dir_len(dir)..].to_string(), stat)),
            Err(crate::zk::ZkError::NoNode) => create_all(ctx, dir).await?,
            // BUG: the first create may have been applied.
            Err(e) if back_off_blindly(ctx, &mut attempt, &e).await => {
                if let Some(found) = adopt().await? {
                    return Ok(found);
                }
            }
            Err(e) => return Err(RecipeError::from_zk(e)),
        }
    }
}

/// The create, unprotected: retried blindly after an ambiguous failure,
/// and nothing remembers the node's guid (no look-up before creating
/// again, no clean-up of an abandoned create).
#[derive(Debug, Clone, Copy, Default)]
pub struct BlindCreate;

impl Steps for BlindCreate {
    async fn create<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        guid: &Guid,
        kind: &str,
        data: &[u8],
        mode: CreateMode,
    ) -> RecipeResult<(String, Stat)> {
        create_blindly(ctx, dir, guid, kind, data, mode, || std::future::ready(Ok(None))).await
    }

    fn orphan_guard<C: ZkClient, R: Runtime>(&self, _: &Ctx<C, R>, _: &str, _: Guid) -> Option<OrphanGuard<C, R>> {
        None
    }
}

/// The contender's node is named after the *client* (`owner`), not the
/// session, and the create adopts any existing node of that name without
/// checking its `ephemeralOwner`. A client that opens a new session while
/// its old one still lingers takes over the old session's node — which
/// vanishes when the old session ends, handing the lock to the next waiter
/// while the new session still believes it holds it.
#[derive(Debug, Clone, Copy)]
pub struct AdoptAnySession {
    /// Names the client across its sessions.
    pub owner: u64,
}

impl Steps for AdoptAnySession {
    async fn guid<C: ZkClient, R: Runtime>(&self, _: &Ctx<C, R>) -> RecipeResult<Guid> {
        // BUG: the same name in every session of this client.
        Ok(Guid {
            session: 0,
            counter: self.owner,
        })
    }

    async fn create<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        guid: &Guid,
        kind: &str,
        data: &[u8],
        mode: CreateMode,
    ) -> RecipeResult<(String, Stat)> {
        // BUG: any node with our name is "ours", whatever session owns it
        // (`find_own` without the owner check).
        let adopt = || find_own(ctx, dir, guid, false);
        if let Some(found) = adopt().await? {
            return Ok(found);
        }
        create_blindly(ctx, dir, guid, kind, data, mode, adopt).await
    }
}

/// No drop guard on the acquire: an abandoned acquire keeps its node.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOrphanCleanup;

impl Steps for NoOrphanCleanup {
    fn orphan_guard<C: ZkClient, R: Runtime>(&self, _: &Ctx<C, R>, _: &str, _: Guid) -> Option<OrphanGuard<C, R>> {
        None
    }
}

/// One `delete` on release; ConnectionLoss is taken as success.
#[derive(Debug, Clone, Copy, Default)]
pub struct OneDelete;

impl Steps for OneDelete {
    async fn release<C: ZkClient, R: Runtime>(&self, ctx: &Ctx<C, R>, path: &str) -> RecipeResult<Released> {
        // BUG: the delete may not have been applied.
        let _ = ctx.client().delete(path, ANY_VERSION).await;
        Ok(Released::Deleted)
    }
}

/// The waiter drops its predecessor watch when the connection drops (as if
/// the watch died with the connection) and then waits for a wake-up only
/// that watch could have delivered: it ignores the reconnect instead of
/// re-reading the queue, so it hangs once its predecessor is gone.
#[derive(Debug, Clone, Copy, Default)]
pub struct ForgetWatchOnDisconnect;

impl Steps for ForgetWatchOnDisconnect {
    async fn woken(&self, watch: OneshotWatch, states: &mut StateWatch) -> Woken {
        let mut node = Box::pin(watch.changed().fuse());
        let moved = select_biased! {
            ev = node => Some(ev),
            _ = states.changed().fuse() => None,
        };
        match moved {
            Some(ev) if !ev.is_session_event() => Woken::Node(ev),
            Some(ev) if !ev.state.is_terminal() => Woken::Reconnected,
            Some(_) => Woken::SessionLost,
            None if states.state().is_terminal() => Woken::SessionLost,
            None => {
                // BUG: the connection dropped; forget the watch and wait for
                // a wake-up that now never comes. A reconnect is ignored.
                drop(node);
                while !states.changed().await.is_terminal() {}
                Woken::SessionLost
            }
        }
    }
}

/// Every waiter waits on the head of the queue.
#[derive(Debug, Clone, Copy, Default)]
pub struct WatchTheHolder;

fn blocker_head(_queue: &[SeqName], me: usize) -> Option<usize> {
    (me > 0).then_some(0)
}

impl Steps for WatchTheHolder {
    fn blocker(&self, _exact: Blocker) -> Blocker {
        // BUG: the holder blocks everyone, so everyone watches it.
        blocker_head
    }
}

/// Expired but still acting (CURATOR-206; Curator Tech Note 10): the correct
/// lock, used the way its docs warn against — the guard hands out no
/// fencing token, so the protected resource cannot tell a holder whose
/// session expired during a pause from the current one. The bug is in the
/// use, so this type is the correct [`Lock`] with the token taken away.
#[derive(Clone)]
pub struct UnfencedLock<C, R> {
    inner: Lock<C, R>,
}

/// A guard with no fencing token.
pub struct UnfencedGuard<C: ZkClient, R: Runtime> {
    inner: LockGuard<C, R, Exact>,
}

impl<C: ZkClient, R: Runtime> UnfencedLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        UnfencedLock {
            inner: Lock::new(ctx, dir),
        }
    }

    pub async fn acquire(&self) -> RecipeResult<UnfencedGuard<C, R>> {
        Ok(UnfencedGuard {
            inner: self.inner.acquire().await?,
        })
    }

    /// Like [`Lock::try_acquire_for`].
    pub async fn try_acquire_for(&self, limit: std::time::Duration) -> RecipeResult<Option<UnfencedGuard<C, R>>> {
        Ok(self
            .inner
            .try_acquire_for(limit)
            .await?
            .map(|inner| UnfencedGuard { inner }))
    }
}

impl<C: ZkClient, R: Runtime> UnfencedGuard<C, R> {
    /// The lock node's czxid — for the history only (so the checker can
    /// order the holders' writes); this design never hands it to the
    /// resource.
    pub fn czxid_for_history(&self) -> i64 {
        self.inner.token()
    }

    pub async fn release(self) -> RecipeResult<Released> {
        Ok(self.inner.release_and_wait().await)
    }
}
