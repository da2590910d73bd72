//! The client library's own lock (zookeeper-client's `Client::lock`) under
//! the lock workload: the same acquire / write / hold / release loop as
//! zkdst's lock, so the same checkers judge a third party's recipe.

use std::time::Duration;

use futures::future::BoxFuture;
use zkdst_recipes::zk::{SessionId, SessionState, ZkClient, ZkError, ZkResult};
use zkdst_recipes::{RecipeError, RecipeResult};
use zkdst_sim::client::library_lock::{LibraryHold, LockPrefix};
use zkdst_sim::client::AnyClient;

use super::contend::{Contend, Held};
use super::locks::LOCK;
use super::SimCtx;

/// A client's handle on the library's lock in [`LOCK`].
pub struct LibraryLock {
    zk: AnyClient,
    prefix: LockPrefix,
}

impl LibraryLock {
    pub fn new(ctx: SimCtx, prefix: LockPrefix) -> Self {
        LibraryLock {
            zk: ctx.client().clone(),
            prefix,
        }
    }
}

/// A hold the library granted; dropping it releases the lock.
pub struct LibraryHeld {
    hold: Box<dyn LibraryHold>,
    token: i64,
    /// The client, and the session the hold was granted on: the library
    /// tells a holder nothing, so the application watches its session.
    zk: AnyClient,
    session: SessionId,
}

impl Contend for LibraryLock {
    type Held = LibraryHeld;
    const CALLS_RECORDED: bool = false;

    async fn acquire(&self) -> RecipeResult<LibraryHeld> {
        let AnyClient::Library(client) = &self.zk else {
            return Err(RecipeError::Zk(ZkError::Unimplemented));
        };
        let hold = client.lock(LOCK, self.prefix).await.map_err(RecipeError::from_zk)?;
        let session = self.zk.session_id();
        match hold.czxid() {
            Some(token) => Ok(LibraryHeld {
                hold,
                token,
                zk: self.zk.clone(),
                session,
            }),
            // Granted, but the node was gone by the first look (its session
            // ended): the application learns it holds nothing.
            None => Err(RecipeError::NodeGone(hold.node().to_string())),
        }
    }

    async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<LibraryHeld>> {
        // The library's lock is cancellation safe: dropping the future
        // deletes a node it created (in the background).
        match madsim::time::timeout(limit, self.acquire()).await {
            Ok(r) => r.map(Some),
            Err(_) => Ok(None),
        }
    }
}

impl Held for LibraryHeld {
    fn token(&self) -> i64 {
        self.token
    }

    /// The library does not tell a holder its node is gone (only its
    /// guarded writes find out), so the application does what ZooKeeper's
    /// recipes ask of it: once its session is Expired or Closed, or replaced
    /// by another, the session's ephemeral lock node is gone and it holds
    /// nothing. (Without this the workload wrote after its client was told
    /// Expired: library-lock-shared seeds 35, 74, ... held-after-session-end.)
    fn is_lost(&self) -> bool {
        matches!(self.zk.state(), SessionState::Expired | SessionState::Closed) || self.zk.session_id() != self.session
    }

    fn guarded_set<'a>(&'a self, path: &'a str, data: &'a [u8]) -> Option<BoxFuture<'a, ZkResult<()>>> {
        Some(self.hold.checked_set(path, data))
    }

    async fn release(self) -> Result<(), RecipeError> {
        drop(self.hold);
        Ok(())
    }
}
