//! Revocation (ZooKeeper recipes: "Revocable Shared Locks"): a client that
//! wants a lock asks its holders to give it up by writing [`REVOKE`] to
//! their nodes; each holder learns of it through the watch its guard keeps
//! on its own node ([`crate::lock::LockGuard::revocation_requested`]) and
//! consents by releasing. Revocation is a request, never a forced delete:
//! a holder that ignores it keeps the lock.

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{ZkClient, ZkError, ANY_VERSION};

pub use crate::monitor::REVOKE;

/// One node in a lock's queue, in creation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedNode {
    pub name: String,
    pub kind: String,
    pub sequence: i32,
}

/// The queue under `dir`: holders first, then waiters.
pub async fn queue<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    kinds: &[&str],
) -> RecipeResult<Vec<QueuedNode>> {
    let children = match ctx.retry(|| ctx.client().get_children(dir)).await {
        Ok((c, _)) => c,
        Err(RecipeError::Zk(ZkError::NoNode)) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(SeqName::parse_sorted(&children, kinds)
        .into_iter()
        .map(|n| QueuedNode {
            name: n.name,
            kind: n.kind,
            sequence: n.sequence,
        })
        .collect())
}

/// Asks the holder of `dir/name` to release. `Ok(false)` if the node is
/// already gone. Idempotent (the same bytes each time), so ConnectionLoss
/// is retried.
pub async fn request_revoke<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, dir: &str, name: &str) -> RecipeResult<bool> {
    let path = join(dir, name);
    match ctx.retry(|| ctx.client().set_data(&path, REVOKE, ANY_VERSION)).await {
        Ok(_) => Ok(true),
        Err(RecipeError::Zk(ZkError::NoNode)) => Ok(false),
        Err(e) => Err(e),
    }
}
