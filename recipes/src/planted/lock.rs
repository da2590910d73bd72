//! Broken locks. Each differs from [`crate::lock::Lock`] in the one way its
//! doc names; everything else (waiting for the predecessor, re-reading on
//! wake-up and reconnect, releasing) is done correctly so that a detection
//! is a detection of that bug.

use std::time::Duration;

use futures::{select_biased, FutureExt};

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::lock::core::{blocker_exclusive, wait_turn, with_timeout};
use crate::lock::{Lock, LockGuard};
use crate::nodes::{create_all, create_protected, delete_own, spawn_delete_own};
use crate::runtime::Runtime;
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::{join, sequence_after_prefix};
use crate::zk::{CreateMode, StateWatch, ZkClient, ZkError, ANY_VERSION};

const KIND: &str = "lock";

/// The sequence of a node named `...{kind}-{seq}`.
fn seq_of(name: &str, kind: &str) -> Option<i32> {
    let marker = format!("{kind}-");
    let at = name.rfind(&marker)?;
    sequence_after_prefix(&name[at..], &marker)
}

/// The names under `dir` that are `kind` nodes, in creation order.
fn sorted(children: Vec<String>, kind: &str) -> Vec<(String, i32)> {
    let parsed: Vec<(String, i32)> = children
        .into_iter()
        .filter_map(|c| seq_of(&c, kind).map(|s| (c, s)))
        .collect();
    crate::seq::sort_by_sequence(parsed, |(_, s)| *s)
}

/// Waits (correctly: re-read after every wake-up and reconnect) until `me`
/// heads the `kind` queue under `dir`.
async fn wait_head<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    me: &str,
    kind: &str,
    states: &mut StateWatch,
) -> RecipeResult<()> {
    loop {
        let (children, _) = ctx.retry(|| ctx.client().get_children(dir)).await?;
        let queue = sorted(children, kind);
        let Some(idx) = queue.iter().position(|(n, _)| n == me) else {
            return Err(if ctx.session_lost() {
                RecipeError::SessionLost
            } else {
                RecipeError::NodeGone(join(dir, me))
            });
        };
        if idx == 0 {
            return Ok(());
        }
        let pred = join(dir, &queue[idx - 1].0);
        let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&pred)).await?;
        if stat.is_none() {
            continue;
        }
        match watch_or_session(watch, states).await {
            Woken::Node(_) | Woken::Reconnected => continue,
            Woken::SessionLost => return Err(RecipeError::SessionLost),
        }
    }
}

/// A held node of a planted lock. Release is correct (retried until the
/// node or the session is gone); dropping it deletes the node in the
/// background.
pub struct PlainGuard<C: ZkClient, R: Runtime> {
    ctx: Ctx<C, R>,
    path: String,
    czxid: i64,
    released: bool,
}

impl<C: ZkClient, R: Runtime> PlainGuard<C, R> {
    pub(crate) fn new(ctx: &Ctx<C, R>, path: String, czxid: i64) -> Self {
        PlainGuard {
            ctx: ctx.clone(),
            path,
            czxid,
            released: false,
        }
    }

    /// The node's czxid (a valid fencing token for these locks).
    pub fn token(&self) -> i64 {
        self.czxid
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// Deletes the node, retrying ConnectionLoss while the session lives.
    pub async fn release(mut self) {
        self.released = true;
        delete_own(&self.ctx, &self.path).await;
    }
}

impl<C: ZkClient, R: Runtime> Drop for PlainGuard<C, R> {
    fn drop(&mut self) {
        if !self.released && !self.ctx.session_lost() {
            spawn_delete_own(&self.ctx, &self.path);
        }
    }
}

/// Unprotected create (CURATOR-45; go-zookeeper #229; ZK contrib
/// LeaderElectionSupport) — also the seeds' "lock without a guid": the
/// contender node is a bare `lock-N` and a ConnectionLoss on its create is
/// retried blindly, so an applied first create is forgotten. The orphan
/// (owned by a live session) eventually heads the queue and everyone,
/// including its creator, waits behind it for ever.
#[derive(Clone)]
pub struct UnprotectedCreateLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> UnprotectedCreateLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        UnprotectedCreateLock { ctx, dir: dir.into() }
    }

    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let prefix = join(&self.dir, "lock-");
        let mut attempt = 0u32;
        let (path, stat) = loop {
            match ctx.client().create(&prefix, &[], CreateMode::EphemeralSequential).await {
                Ok(r) => break r,
                Err(ZkError::NoNode) => create_all(ctx, &self.dir).await?,
                // BUG: the first create may have been applied.
                Err(e) if e.is_ambiguous() && attempt < 20 => {
                    ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        };
        let name = path[self.dir.len() + 1..].to_string();
        wait_head(ctx, &self.dir, &name, KIND, &mut states).await?;
        Ok(PlainGuard::new(ctx, path, stat.czxid))
    }
}

/// Stale-session adoption (CURATOR-696, CURATOR-498, CURATOR-604): the
/// contender node is named after the *client* (`{owner}-lock-N`), not the
/// session, and `acquire` adopts any existing node of that name without
/// checking its `ephemeralOwner`. A client that opens a new session while
/// its old one still lingers takes over the old session's node — which
/// vanishes when the old session ends, handing the lock to the next waiter
/// while the new session still believes it holds it.
#[derive(Clone)]
pub struct StaleSessionLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
    owner: String,
}

impl<C: ZkClient, R: Runtime> StaleSessionLock<C, R> {
    /// `owner` names the client across its sessions.
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>, owner: impl Into<String>) -> Self {
        StaleSessionLock {
            ctx,
            dir: dir.into(),
            owner: owner.into(),
        }
    }

    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        create_all(ctx, &self.dir).await?;
        let mine = format!("{}-{KIND}-", self.owner);
        let find = || async {
            let (children, _) = ctx.retry(|| ctx.client().get_children(&self.dir)).await?;
            // BUG: any node with our client's name is "ours", whatever
            // session owns it.
            Ok::<_, RecipeError>(children.into_iter().find(|c| c.starts_with(&mine)))
        };
        let name = match find().await? {
            Some(n) => n,
            None => {
                let prefix = join(&self.dir, &mine);
                let mut attempt = 0u32;
                loop {
                    match ctx.client().create(&prefix, &[], CreateMode::EphemeralSequential).await {
                        Ok((p, _)) => break p[self.dir.len() + 1..].to_string(),
                        Err(e) if e.is_ambiguous() && attempt < 20 => {
                            ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                            attempt += 1;
                            if let Some(n) = find().await? {
                                break n;
                            }
                        }
                        Err(e) => return Err(RecipeError::from_zk(e)),
                    }
                }
            }
        };
        let path = join(&self.dir, &name);
        wait_head(ctx, &self.dir, &name, KIND, &mut states).await?;
        let czxid = ctx
            .retry(|| ctx.client().exists(&path))
            .await?
            .map(|s| s.czxid)
            .ok_or_else(|| RecipeError::NodeGone(path.clone()))?;
        Ok(PlainGuard::new(ctx, path, czxid))
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
    inner: LockGuard<C, R>,
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
}

impl<C: ZkClient, R: Runtime> UnfencedGuard<C, R> {
    /// The lock node's czxid — for the history only (so the checker can
    /// order the holders' writes); this design never hands it to the
    /// resource.
    pub fn czxid_for_history(&self) -> i64 {
        self.inner.token()
    }

    pub async fn release(self) {
        let _ = self.inner.release_and_wait().await;
    }
}

/// Cancellation leak (CURATOR-79, CURATOR-462): `try_acquire_for` abandons
/// the acquire on timeout without deleting the node it created; the node
/// lives as long as the session and, once it heads the queue, blocks every
/// later acquire.
#[derive(Clone)]
pub struct CancellationLeakLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> CancellationLeakLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        CancellationLeakLock { ctx, dir: dir.into() }
    }

    /// Creates the node (guid-protected, correctly) and waits; no drop
    /// guard (the bug).
    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let guid = ctx.next_guid().await?;
        let (name, stat) = create_protected(ctx, &self.dir, &guid, KIND, &[], CreateMode::EphemeralSequential).await?;
        wait_turn(ctx, &self.dir, &name, &[KIND], blocker_exclusive, &mut states).await?;
        Ok(PlainGuard::new(ctx, join(&self.dir, &name), stat.czxid))
    }

    /// Gives up after `limit`; the abandoned node stays (the bug).
    pub async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<PlainGuard<C, R>>> {
        with_timeout(&self.ctx, limit, self.acquire()).await
    }
}

/// Delete under disconnect (CURATOR-202, CURATOR-678, CURATOR-486): the
/// release sends one `delete`; on ConnectionLoss it reports the lock
/// released and never retries, so a delete that was not applied leaves the
/// node — and every later acquire hangs for as long as the session lives.
#[derive(Clone)]
pub struct DeleteUnderDisconnectLock<C, R> {
    inner: Lock<C, R>,
    ctx: Ctx<C, R>,
}

/// A guard whose release may silently leave the node behind.
pub struct LeakyReleaseGuard<C: ZkClient, R: Runtime> {
    ctx: Ctx<C, R>,
    path: String,
    token: i64,
    inner: LockGuard<C, R>,
}

impl<C: ZkClient, R: Runtime> DeleteUnderDisconnectLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        DeleteUnderDisconnectLock {
            inner: Lock::new(ctx.clone(), dir),
            ctx,
        }
    }

    pub async fn acquire(&self) -> RecipeResult<LeakyReleaseGuard<C, R>> {
        let g = self.inner.acquire().await?;
        Ok(LeakyReleaseGuard {
            ctx: self.ctx.clone(),
            path: g.path().to_string(),
            token: g.token(),
            inner: g,
        })
    }
}

impl<C: ZkClient, R: Runtime> LeakyReleaseGuard<C, R> {
    pub fn token(&self) -> i64 {
        self.token
    }

    /// One `delete`; ConnectionLoss is taken as success (the bug).
    pub async fn release(self) {
        let LeakyReleaseGuard { ctx, path, inner, .. } = self;
        // The correct guard would delete on drop: keep it from doing so, as
        // the buggy design has no such guard.
        std::mem::forget(inner);
        match ctx.client().delete(&path, ANY_VERSION).await {
            Ok(()) | Err(_) => {}
        }
    }
}

/// Lost watch on reconnect (kazoo PR #170; CURATOR-623; CURATOR-311): the
/// waiter drops its predecessor watch when the connection drops (as if the
/// watch died with the connection) and then waits for a wake-up only that
/// watch could have delivered — it ignores the reconnect instead of
/// re-reading the queue, so it hangs once its predecessor is gone.
#[derive(Clone)]
pub struct LostWatchLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> LostWatchLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        LostWatchLock { ctx, dir: dir.into() }
    }

    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let guid = ctx.next_guid().await?;
        let (name, stat) = create_protected(ctx, &self.dir, &guid, KIND, &[], CreateMode::EphemeralSequential).await?;
        loop {
            let (children, _) = ctx.retry(|| ctx.client().get_children(&self.dir)).await?;
            let queue = crate::guid::SeqName::parse_sorted(&children, &[KIND]);
            let Some(idx) = queue.iter().position(|n| n.name == name) else {
                return Err(RecipeError::NodeGone(join(&self.dir, &name)));
            };
            if idx == 0 {
                return Ok(PlainGuard::new(ctx, join(&self.dir, &name), stat.czxid));
            }
            let pred = join(&self.dir, &queue[idx - 1].name);
            let (st, watch) = ctx.retry(|| ctx.client().exists_watch(&pred)).await?;
            if st.is_none() {
                continue;
            }
            let mut watch = Box::pin(watch.changed().fuse());
            let woke = select_biased! {
                ev = watch => Some(ev),
                _ = states.changed().fuse() => None,
            };
            let lost = match woke {
                Some(ev) => ev.is_session_event() && ev.state.is_terminal(),
                None if states.state().is_terminal() => true,
                None => {
                    // BUG: the connection dropped; forget the watch and wait
                    // for a wake-up that now never comes. A reconnect is
                    // ignored (no re-read of the queue).
                    drop(watch);
                    while !states.changed().await.is_terminal() {}
                    true
                }
            };
            if lost {
                return Err(RecipeError::SessionLost);
            }
        }
    }
}

/// Herd effect — the seeds' simple lock: one node `{dir}/lock`; a waiter
/// sets an `exists` watch on it and retries the create when it fires, so
/// every release wakes every waiter (O(waiters) notifications per release
/// instead of 1). Also unprotected against ConnectionLoss on the create.
#[derive(Clone)]
pub struct HerdLock<C, R> {
    ctx: Ctx<C, R>,
    dir: String,
}

impl<C: ZkClient, R: Runtime> HerdLock<C, R> {
    pub fn new(ctx: Ctx<C, R>, dir: impl Into<String>) -> Self {
        HerdLock { ctx, dir: dir.into() }
    }

    pub async fn acquire(&self) -> RecipeResult<PlainGuard<C, R>> {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        let path = join(&self.dir, KIND);
        loop {
            match ctx.client().create(&path, &[], CreateMode::Ephemeral).await {
                Ok((p, stat)) => return Ok(PlainGuard::new(ctx, p, stat.czxid)),
                Err(ZkError::NoNode) => create_all(ctx, &self.dir).await?,
                Err(ZkError::NodeExists) => {
                    let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&path)).await?;
                    if stat.is_some() && watch_or_session(watch, &mut states).await == Woken::SessionLost {
                        return Err(RecipeError::SessionLost);
                    }
                }
                Err(e) if e.is_ambiguous() => ctx.runtime().sleep(Duration::from_millis(50)).await,
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }
}
