//! The revocable shared lock (ZooKeeper recipes: "Revocable Shared
//! Locks"): readers and writers on one read/write lock; a client that has
//! waited past its patience asks the holders ahead of it to release, and a
//! holder consents by releasing as soon as its guard reports the request.
//! Holds are long, so waiters depend on revocation being delivered —
//! including across reconnects, when the holder's watch must be re-armed.
//! The same loop drives the exclusive lock's revocation (`revocable-mutex`,
//! Curator's revocable `InterProcessMutex`): every acquire exclusive.

use std::time::Duration;
use zkdst_model::Situation;

use futures::future::{select, Either};
use rand::Rng;
use std::future::Future;
use zkdst_checker::history::{Op, Value};

use zkdst_recipes::lock::{Lock, LockGuard, QueuedNode, RwLock};
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::contend::hold_node;
use super::Env;

pub(crate) const DIR: &str = "/locks/revocable";
/// The revocable exclusive lock's directory.
pub(crate) const MUTEX_DIR: &str = "/locks/revocable-mutex";

type Guard = LockGuard<AnyClient, SimRuntime>;
type Ctx = zkdst_recipes::ctx::Ctx<AnyClient, SimRuntime>;

/// A lock whose holders can be asked to release: the read/write lock, or
/// the exclusive lock (whose every acquire is exclusive).
trait Revocable: Sized + Send + Sync {
    /// Acquires may be shared.
    const SHARES: bool;
    fn new(ctx: Ctx) -> Self;
    fn dir(&self) -> &str;
    /// Acquires (shared or not), giving up after `limit` if given.
    fn acquire(
        &self,
        shared: bool,
        limit: Option<Duration>,
    ) -> impl Future<Output = RecipeResult<Option<Guard>>> + Send;
    fn queue(&self) -> impl Future<Output = RecipeResult<Vec<QueuedNode>>> + Send;
    fn request_revoke(&self, name: &str) -> impl Future<Output = RecipeResult<bool>> + Send;
}

impl Revocable for RwLock<AnyClient, SimRuntime> {
    const SHARES: bool = true;
    fn new(ctx: Ctx) -> Self {
        RwLock::new(ctx, DIR)
    }
    fn dir(&self) -> &str {
        RwLock::dir(self)
    }
    async fn acquire(&self, shared: bool, limit: Option<Duration>) -> RecipeResult<Option<Guard>> {
        match (limit, shared) {
            (Some(t), true) => self.try_read_for(t).await,
            (Some(t), false) => self.try_write_for(t).await,
            (None, true) => self.read().await.map(Some),
            (None, false) => self.write().await.map(Some),
        }
    }
    async fn queue(&self) -> RecipeResult<Vec<QueuedNode>> {
        RwLock::queue(self).await
    }
    async fn request_revoke(&self, name: &str) -> RecipeResult<bool> {
        RwLock::request_revoke(self, name).await
    }
}

impl Revocable for Lock<AnyClient, SimRuntime> {
    const SHARES: bool = false;
    fn new(ctx: Ctx) -> Self {
        Lock::new(ctx, MUTEX_DIR)
    }
    fn dir(&self) -> &str {
        Lock::dir(self)
    }
    async fn acquire(&self, _shared: bool, limit: Option<Duration>) -> RecipeResult<Option<Guard>> {
        match limit {
            Some(t) => self.try_acquire_for(t).await,
            None => Lock::acquire(self).await.map(Some),
        }
    }
    async fn queue(&self) -> RecipeResult<Vec<QueuedNode>> {
        Lock::queue(self).await
    }
    async fn request_revoke(&self, name: &str) -> RecipeResult<bool> {
        Lock::request_revoke(self, name).await
    }
}

/// How long a waiter waits before asking the holders to release, ms.
const PATIENCE_MS: [u64; 2] = [100, 600];

/// The revocable read/write lock's clients.
pub async fn client(env: Env) {
    run::<RwLock<AnyClient, SimRuntime>>(env).await
}

/// The revocable exclusive lock's clients.
pub async fn mutex_client(env: Env) {
    run::<Lock<AnyClient, SimRuntime>>(env).await
}

async fn run<L: Revocable>(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let mut lock = L::new(ctx.clone());
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            lock = L::new(ctx.clone());
        }
        let shared = L::SHARES && env.rng.gen_bool(0.6);
        let id = env.invoke(
            Some(&zk),
            Op::Acquire {
                lock: lock.dir().into(),
                shared,
            },
        );
        let patience = Duration::from_millis(env.between(PATIENCE_MS));
        let first = lock.acquire(shared, Some(patience)).await;
        let acquired = match first {
            Ok(Some(guard)) => Ok(Some(guard)),
            Ok(None) => {
                revoke_holders(&mut env, &lock, shared).await;
                // A waiter with a deadline gives up if the holders are slow.
                let limit = env.patience();
                lock.acquire(shared, limit).await
            }
            Err(e) => Err(e),
        };
        match acquired {
            Ok(None) => env.gave_up(id),
            Ok(Some(guard)) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                env.report(&zk, hold_node(&guard, lock.dir()));
                env.report(&zk, revoke_state(&guard, lock.dir(), false));
                if !shared && !guard.is_lost() {
                    env.fenced_write(&zk, lock.dir(), token).await;
                }
                hold_until_revoked(&mut env, &zk, &guard, lock.dir()).await;
                let rid = env.invoke(
                    Some(&zk),
                    Op::Release {
                        lock: lock.dir().into(),
                    },
                );
                match guard.release().await {
                    Ok(_) => env.ok(rid, Value::Unit),
                    Err(e) => env.err(rid, &e),
                }
            }
            Err(e) => env.err(id, &e),
        }
        env.think().await;
    }
}

/// Holds until the time is up or someone asks for the lock, as an
/// application working in slices: one `revocation_requested()` waits
/// across the whole hold, and between slices the application asks the
/// guard (`revoke_requested()`) and the history records what it said
/// (`revoke-unheard` judges a guard that says requested twice while the
/// wait never ends).
async fn hold_until_revoked(env: &mut Env, zk: &AnyClient, guard: &Guard, lock: &str) {
    let ms = env.between(env.scenario.workload.hold_ms).max(1);
    let until = madsim::time::Instant::now() + Duration::from_millis(ms);
    let revoked = guard.revocation_requested();
    futures::pin_mut!(revoked);
    loop {
        let left = until.saturating_duration_since(madsim::time::Instant::now());
        if left.is_zero() {
            return;
        }
        let slice = Duration::from_millis(env.between([50, 300])).min(left);
        let nap = Box::pin(madsim::time::sleep(slice));
        if let Either::Right(_) = select(nap, revoked.as_mut()).await {
            env.report(zk, revoke_state(guard, lock, true));
            env.exercised(Situation::RevokeHonoured);
            return;
        }
        env.report(zk, revoke_state(guard, lock, false));
    }
}

/// What `guard` says of revocation (`heard`: its `revocation_requested()`
/// just resolved), for the history.
fn revoke_state(guard: &LockGuard<AnyClient, SimRuntime>, lock: &str, heard: bool) -> Op {
    Op::RevokeState {
        lock: lock.to_string(),
        token: guard.token(),
        requested: guard.revoke_requested(),
        heard,
    }
}

/// Asks the current holders to release: the writer (exclusive holder) at
/// the head, or for a writer every reader at the head.
async fn revoke_holders<L: Revocable>(env: &mut Env, lock: &L, shared: bool) {
    let Ok(queue) = lock.queue().await else { return };
    let holders = match queue.first() {
        Some(head) if head.kind != "read" => &queue[..1],
        Some(_) if !shared => {
            let readers = queue.iter().take_while(|n| n.kind == "read").count();
            &queue[..readers]
        }
        _ => &queue[..0],
    };
    for h in holders {
        if let Ok(true) = lock.request_revoke(&h.name).await {
            env.exercised(Situation::RevokeRequested);
        }
    }
}
