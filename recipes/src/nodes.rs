//! Node helpers shared by the recipes: `create_all`, the protected
//! (guid-named) create, claiming a fixed-name ephemeral, finding our own
//! node after ConnectionLoss, and the background deletion that keeps
//! cancelled or released nodes from leaking.

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::runtime::Runtime;
use crate::zk::path::{join, parent};
use crate::zk::{CreateMode, SessionId, Stat, ZkClient, ZkError, ANY_VERSION};
use std::future::Future;

/// Creates `path` and every missing ancestor as empty nodes of the
/// context's parent mode (persistent, or containers the leader reaps once
/// emptied). NodeExists is success, so ConnectionLoss can be retried
/// blindly.
pub async fn create_all<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str) -> RecipeResult<()> {
    if path == "/" || ctx.retry(|| ctx.client().exists(path)).await?.is_some() {
        return Ok(());
    }
    let mut prefix = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        prefix.push('/');
        prefix.push_str(part);
        let res = ctx
            .retry(|| async {
                match ctx.client().create(&prefix, &[], ctx.parent_mode()).await {
                    Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                    Err(e) => Err(e),
                }
            })
            .await;
        res?;
    }
    Ok(())
}

/// Who holds a fixed-name ephemeral node once we tried to create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Our session's: created now, or by a create of ours whose reply was
    /// lost.
    Ours,
    /// Another session's (its id): a live holder of the same name.
    Held(SessionId),
}

/// Creates the ephemeral `path` with `data` on our session, or finds who
/// holds it. NodeExists after a ConnectionLoss may be our own create,
/// applied, so the owner is read back; a node gone by then is created
/// again.
pub async fn claim_ephemeral<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str, data: &[u8]) -> RecipeResult<Claim> {
    let me = ctx.session_id().await?;
    loop {
        let created = ctx
            .retry(|| async {
                match ctx.client().create(path, data, CreateMode::Ephemeral).await {
                    Ok(_) => Ok(true),
                    Err(ZkError::NodeExists) => Ok(false),
                    Err(e) => Err(e),
                }
            })
            .await?;
        if created {
            return Ok(Claim::Ours);
        }
        match ctx.retry(|| ctx.client().exists(path)).await? {
            Some(s) if s.ephemeral_owner == me => return Ok(Claim::Ours),
            Some(s) => return Ok(Claim::Held(s.ephemeral_owner)),
            None => {}
        }
    }
}

/// Our node named with `guid` under `dir`, if it exists. Ephemerals must also
/// be owned by our current session: a node of an older session is never
/// adopted (CURATOR-696). Syncs first so that a create applied just before a
/// ConnectionLoss is visible even on a lagging server.
pub async fn find_own<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    guid: &Guid,
    ephemeral: bool,
) -> RecipeResult<Option<(String, Stat)>> {
    let tag = guid.to_string();
    ctx.retry(|| ctx.client().sync(dir)).await?;
    let children = match ctx.retry(|| ctx.client().get_children(dir)).await {
        Ok((c, _)) => c,
        Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut ours: Vec<String> = children.into_iter().filter(|c| c.starts_with(&tag)).collect();
    ours.sort();
    for name in ours {
        let path = join(dir, &name);
        if let Some(stat) = ctx.retry(|| ctx.client().exists(&path)).await? {
            if !ephemeral || stat.ephemeral_owner == ctx.client().session_id() {
                return Ok(Some((name, stat)));
            }
        }
    }
    Ok(None)
}

/// Creates `{dir}/{guid}-{kind}-` sequentially, exactly once even across
/// ConnectionLoss: after an ambiguous failure it looks for its guid before
/// creating again (the recipes doc's "guid-" advice; CURATOR-45).
/// Creates `dir` if missing. Returns the node name and its Stat.
pub async fn create_protected<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    guid: &Guid,
    kind: &str,
    data: &[u8],
    mode: CreateMode,
) -> RecipeResult<(String, Stat)> {
    let prefix = join(dir, &guid.prefix(kind));
    let policy = ctx.retry_policy();
    let mut attempt = 0;
    loop {
        match ctx.client().create(&prefix, data, mode).await {
            Ok((path, stat)) => return Ok((path[dir_len(dir)..].to_string(), stat)),
            // The directory gone (deleted, or a reaped container): a
            // refusal, not a lost reply, so it spends no attempt.
            Err(ZkError::NoNode) => create_all(ctx, dir).await?,
            Err(e) if crate::retry::retryable(&e) && attempt + 1 < policy.max_attempts => {
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt += 1;
                if let Some(found) = find_own(ctx, dir, guid, mode.is_ephemeral()).await? {
                    return Ok(found);
                }
            }
            Err(e) => return Err(RecipeError::from_zk(e)),
        }
    }
}

/// Length of `dir` plus its separator: the offset of a child's name.
pub(crate) fn dir_len(dir: &str) -> usize {
    if dir == "/" {
        1
    } else {
        dir.len() + 1
    }
}

/// How a background deletion ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// The node is gone (deleted by us, or already gone).
    Gone,
    /// The session ended, and with it every ephemeral node it owned.
    SessionEnded,
}

/// Deletes our own node at `path`, retrying ConnectionLoss for as long as
/// the session lives (a NoNode after an ambiguous delete means it is gone,
/// which is all the caller needs: the name is ours alone).
pub async fn delete_own<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str) -> Deleted {
    let policy = ctx.retry_policy();
    let mut attempt = 0;
    loop {
        match ctx.client().delete(path, ANY_VERSION).await {
            Ok(()) | Err(ZkError::NoNode) => return Deleted::Gone,
            Err(e) if e.is_session_lost() => return Deleted::SessionEnded,
            Err(e) => {
                tracing::debug!(path, error = %e, "retrying delete of own node");
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt = attempt.saturating_add(1);
            }
        }
    }
}

/// What one try of a background retry loop came to.
enum Try {
    /// Finished: nothing left to do.
    Done,
    /// Made progress; try again at once.
    Again,
    /// Failed; try again after the retry policy's delay.
    Backoff,
}

/// Runs `step` in the background until it is done or the session is lost
/// (which ends every ephemeral the session owned, and with it the work).
fn spawn_retrying<C, R, F, Fut>(ctx: &Ctx<C, R>, mut step: F)
where
    C: ZkClient,
    R: Runtime,
    F: FnMut(Ctx<C, R>) -> Fut + Send + 'static,
    Fut: Future<Output = Try> + Send + 'static,
{
    let ctx2 = ctx.clone();
    ctx.runtime().spawn(async move {
        let policy = ctx2.retry_policy();
        let mut attempt = 0u32;
        while !ctx2.session_lost() {
            match step(ctx2.clone()).await {
                Try::Done => return,
                Try::Again => {}
                Try::Backoff => {
                    ctx2.runtime().sleep(policy.delay(attempt)).await;
                    attempt = attempt.saturating_add(1);
                }
            }
        }
    });
}

/// Deletes, in the background, every node of ours named with `guid` under
/// `dir` (ephemerals owned by the current session), retrying until they are
/// gone or the session is.
pub fn spawn_delete_by_guid<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, dir: &str, guid: Guid) {
    let dir = dir.to_string();
    spawn_retrying(ctx, move |ctx| {
        let dir = dir.clone();
        async move {
            match find_own(&ctx, &dir, &guid, true).await {
                Ok(None) => Try::Done,
                Ok(Some((name, _))) => match delete_own(&ctx, &join(&dir, &name)).await {
                    Deleted::SessionEnded => Try::Done,
                    Deleted::Gone => Try::Again,
                },
                Err(e) if e.is_session_lost() => Try::Done,
                Err(_) => Try::Backoff,
            }
        }
    });
}

/// Deletes our own node at `path` in the background.
pub fn spawn_delete_own<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str) {
    let ctx2 = ctx.clone();
    let path = path.to_string();
    ctx.runtime().spawn(async move {
        delete_own(&ctx2, &path).await;
    });
}

/// Deletes, in the background, the node at `path` if `session` owns it —
/// a fixed-name ephemeral whose create may have been applied after its
/// caller gave up on a lost reply (the name may be another session's,
/// so the owner is checked first; only its owner deletes it, so the
/// version read stays good). Syncs first: a create applied just before
/// the ConnectionLoss may not have reached the server read after the
/// reconnect. Retries until done or the session is lost.
pub fn spawn_delete_if_owned<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str, session: SessionId) {
    let path = path.to_string();
    spawn_retrying(ctx, move |ctx| {
        let path = path.clone();
        async move {
            let read = match ctx.client().sync(parent(&path)).await {
                Ok(()) => ctx.client().exists(&path).await,
                Err(e) => Err(e),
            };
            let done = match read {
                Ok(Some(stat)) if stat.ephemeral_owner == session => {
                    matches!(
                        ctx.client().delete(&path, stat.version).await,
                        Ok(()) | Err(ZkError::NoNode)
                    )
                }
                Ok(_) => true,
                Err(e) => e.is_session_lost(),
            };
            if done {
                Try::Done
            } else {
                Try::Backoff
            }
        }
    });
}

/// Drop guard for a node being created: if the future that creates and
/// waits on it is dropped (cancelled, timed out) or fails, the node — if
/// the create was applied — is deleted in the background (CURATOR-79/462).
pub struct OrphanGuard<C: ZkClient, R: Runtime> {
    ctx: Ctx<C, R>,
    dir: String,
    guid: Guid,
    armed: bool,
}

impl<C: ZkClient, R: Runtime> OrphanGuard<C, R> {
    pub fn new(ctx: &Ctx<C, R>, dir: &str, guid: Guid) -> Self {
        OrphanGuard {
            ctx: ctx.clone(),
            dir: dir.to_string(),
            guid,
            armed: true,
        }
    }

    /// The node was handed over to a holder that owns its release.
    pub fn disarm(mut self) {
        self.armed = false;
    }
}

impl<C: ZkClient, R: Runtime> Drop for OrphanGuard<C, R> {
    fn drop(&mut self) {
        if self.armed && !self.ctx.session_lost() {
            spawn_delete_by_guid(&self.ctx, &self.dir, self.guid);
        }
    }
}
