//! The context every recipe runs in: a session handle, the runtime, the
//! retry policy and the guid counter shared by all recipes of the session.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::zk::{CreateMode, SessionId, ZkClient, ZkResult};

/// A session handle plus what recipes need around it.
///
/// Create one `Ctx` per client handle and clone it into every recipe that
/// uses that handle: the clones share the guid counter, which is what makes
/// guids unique within the session. Two independent `Ctx` over one handle
/// could hand out the same guid.
#[derive(Clone)]
pub struct Ctx<C, R> {
    client: C,
    rt: R,
    retry: RetryPolicy,
    parents: CreateMode,
    guids: Arc<AtomicU64>,
}

impl<C: ZkClient, R: Runtime> Ctx<C, R> {
    pub fn new(client: C, rt: R) -> Self {
        Ctx {
            client,
            rt,
            retry: RetryPolicy::default(),
            parents: CreateMode::Persistent,
            guids: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Uses `retry` for ConnectionLoss on idempotent steps.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Creates the recipes' directories as containers (Curator's
    /// `creatingParentContainersIfNeeded`): the leader deletes one once
    /// it has had children and has none left, so an idle recipe leaves no
    /// nodes behind, and every recipe must recreate its directory when a
    /// create under it answers NoNode.
    pub fn with_container_parents(mut self) -> Self {
        self.parents = CreateMode::Container;
        self
    }

    /// A context for a new session handle (after the old one expired) that
    /// keeps this context's runtime, retry policy and guid counter.
    pub fn with_client(&self, client: C) -> Self {
        Ctx {
            client,
            rt: self.rt.clone(),
            retry: self.retry,
            parents: self.parents,
            guids: Arc::clone(&self.guids),
        }
    }

    pub fn client(&self) -> &C {
        &self.client
    }

    pub fn runtime(&self) -> &R {
        &self.rt
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// How `nodes::create_all` creates a missing directory: persistent, or
    /// a container ([`Ctx::with_container_parents`]).
    pub fn parent_mode(&self) -> CreateMode {
        self.parents
    }

    /// The session id, waiting for the first connection if there is none
    /// yet (a guid must never be built from session id 0).
    pub async fn session_id(&self) -> RecipeResult<SessionId> {
        let mut states = self.client.state_watch();
        loop {
            let id = self.client.session_id();
            if id != 0 {
                return Ok(id);
            }
            if self.client.state().is_terminal() || states.changed().await.is_terminal() {
                return Err(RecipeError::SessionLost);
            }
        }
    }

    /// A fresh guid of this session.
    pub async fn next_guid(&self) -> RecipeResult<Guid> {
        let session = self.session_id().await?;
        Ok(Guid {
            session,
            counter: self.guids.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// True once the session is gone for good.
    pub fn session_lost(&self) -> bool {
        self.client.state().is_terminal()
    }

    /// Runs an idempotent call, retrying ConnectionLoss per the policy.
    pub async fn retry<T, F, Fut>(&self, op: F) -> RecipeResult<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = ZkResult<T>>,
    {
        crate::retry::retry(&self.rt, self.retry, op).await
    }
}

/// Opens a new session handle. Recipes that must outlive one session
/// (group membership, watched values) call it after an expiry.
///
/// Any `Fn() -> impl Future<Output = ZkResult<C>>` closure is a `Connect`.
pub trait Connect<C: ZkClient>: Send + Sync + 'static {
    fn connect(&self) -> impl Future<Output = ZkResult<C>> + Send;
}

impl<C, F, Fut> Connect<C> for F
where
    C: ZkClient,
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ZkResult<C>> + Send,
{
    fn connect(&self) -> impl Future<Output = ZkResult<C>> + Send {
        self()
    }
}
