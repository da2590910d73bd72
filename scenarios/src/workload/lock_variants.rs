//! The exclusive lock and the semaphore as the workload sees them: the
//! correct recipe or one of its planted variants, behind one interface, so that a planted scenario
//! and its correct twin run the very same workload.

use std::time::Duration;

use zkdst_checker::history::{Op, Value};
use zkdst_recipes::lock::{Lock, LockGuard};
use zkdst_recipes::planted::LeakedLeaseSemaphore;
use zkdst_recipes::planted::{
    CancellationLeakLock, DeleteUnderDisconnectLock, HerdLock, LeakyReleaseGuard, LostWatchLock, PlainGuard,
    StaleSessionLock, UnfencedGuard, UnfencedLock, UnprotectedCreateLock,
};
use zkdst_recipes::semaphore::Semaphore;
use zkdst_recipes::{RecipeError, RecipeResult};
use zkdst_sim::client::SimClient;
use zkdst_sim::runtime::SimRuntime;

use super::{Env, SimCtx};
use crate::variant::Variant;

type R = SimRuntime;

pub enum AnyLock {
    Correct(Lock<SimClient, R>),
    Unprotected(UnprotectedCreateLock<SimClient, R>),
    Stale(StaleSessionLock<SimClient, R>),
    Unfenced(UnfencedLock<SimClient, R>),
    Cancel(CancellationLeakLock<SimClient, R>),
    DelDisc(DeleteUnderDisconnectLock<SimClient, R>),
    LostWatch(LostWatchLock<SimClient, R>),
    Herd(HerdLock<SimClient, R>),
}

pub enum AnyGuard {
    Correct(LockGuard<SimClient, R>),
    Plain(PlainGuard<SimClient, R>),
    Unfenced(UnfencedGuard<SimClient, R>),
    Leaky(LeakyReleaseGuard<SimClient, R>),
}

impl AnyLock {
    /// The lock at `dir` for client `id`: `variant`'s type, or the correct
    /// `Lock` (also for variants of other recipes, which validation rejects).
    pub fn new(variant: Option<Variant>, ctx: SimCtx, dir: &str, id: u32) -> AnyLock {
        match variant {
            Some(Variant::UnprotectedCreateLock) => AnyLock::Unprotected(UnprotectedCreateLock::new(ctx, dir)),
            Some(Variant::StaleSessionLock) => AnyLock::Stale(StaleSessionLock::new(ctx, dir, format!("client{id}"))),
            Some(Variant::UnfencedLock) => AnyLock::Unfenced(UnfencedLock::new(ctx, dir)),
            Some(Variant::CancellationLeakLock) => AnyLock::Cancel(CancellationLeakLock::new(ctx, dir)),
            Some(Variant::DeleteUnderDisconnectLock) => AnyLock::DelDisc(DeleteUnderDisconnectLock::new(ctx, dir)),
            Some(Variant::LostWatchLock) => AnyLock::LostWatch(LostWatchLock::new(ctx, dir)),
            Some(Variant::HerdLock) => AnyLock::Herd(HerdLock::new(ctx, dir)),
            _ => AnyLock::Correct(Lock::new(ctx, dir)),
        }
    }

    pub async fn acquire(&self) -> RecipeResult<AnyGuard> {
        Ok(match self {
            AnyLock::Correct(l) => AnyGuard::Correct(l.acquire().await?),
            AnyLock::Unprotected(l) => AnyGuard::Plain(l.acquire().await?),
            AnyLock::Stale(l) => AnyGuard::Plain(l.acquire().await?),
            AnyLock::Unfenced(l) => AnyGuard::Unfenced(l.acquire().await?),
            AnyLock::Cancel(l) => AnyGuard::Plain(l.acquire().await?),
            AnyLock::DelDisc(l) => AnyGuard::Leaky(l.acquire().await?),
            AnyLock::LostWatch(l) => AnyGuard::Plain(l.acquire().await?),
            AnyLock::Herd(l) => AnyGuard::Plain(l.acquire().await?),
        })
    }

    /// Gives up after `limit` (`Ok(None)`): the acquire is cancelled.
    pub async fn try_acquire_for(&self, limit: Duration) -> RecipeResult<Option<AnyGuard>> {
        match self {
            AnyLock::Correct(l) => Ok(l.try_acquire_for(limit).await?.map(AnyGuard::Correct)),
            AnyLock::Cancel(l) => Ok(l.try_acquire_for(limit).await?.map(AnyGuard::Plain)),
            other => match madsim::time::timeout(limit, other.acquire()).await {
                Ok(r) => r.map(Some),
                Err(_) => Ok(None),
            },
        }
    }
}

impl AnyGuard {
    /// The fencing token (for the unfenced guard: the node's czxid, which
    /// only the history sees).
    pub fn token(&self) -> i64 {
        match self {
            AnyGuard::Correct(g) => g.token(),
            AnyGuard::Plain(g) => g.token(),
            AnyGuard::Unfenced(g) => g.czxid_for_history(),
            AnyGuard::Leaky(g) => g.token(),
        }
    }

    /// The resource gets a token it can check.
    pub fn fenced(&self) -> bool {
        !matches!(self, AnyGuard::Unfenced(_))
    }

    /// The hold is known lost (only the correct guard tracks it).
    pub fn is_lost(&self) -> bool {
        match self {
            AnyGuard::Correct(g) => g.is_lost(),
            _ => false,
        }
    }

    pub async fn release(self) -> Result<(), RecipeError> {
        match self {
            AnyGuard::Correct(g) => g.release().await.map(|_| ()),
            AnyGuard::Plain(g) => {
                g.release().await;
                Ok(())
            }
            AnyGuard::Unfenced(g) => {
                g.release().await;
                Ok(())
            }
            AnyGuard::Leaky(g) => {
                g.release().await;
                Ok(())
            }
        }
    }
}

/// The semaphore: the correct one or its planted variant. Leases are lock
/// guards (the correct lease is a `LockGuard`).
pub enum AnySemaphore {
    Correct(Semaphore<SimClient, R>),
    Leaked(LeakedLeaseSemaphore<SimClient, R>),
}

impl AnySemaphore {
    pub fn new(variant: Option<Variant>, ctx: SimCtx, dir: &str, permits: u32) -> RecipeResult<AnySemaphore> {
        Ok(match variant {
            Some(Variant::LeakedLeaseSemaphore) => AnySemaphore::Leaked(LeakedLeaseSemaphore::new(ctx, dir, permits)),
            _ => AnySemaphore::Correct(Semaphore::new(ctx, dir, permits)?),
        })
    }

    pub async fn acquire(&self) -> RecipeResult<AnyGuard> {
        Ok(match self {
            AnySemaphore::Correct(s) => AnyGuard::Correct(s.acquire().await?),
            AnySemaphore::Leaked(s) => AnyGuard::Plain(s.acquire().await?),
        })
    }

    /// Acquires, giving up after `limit` if there is one (`Ok(None)`).
    pub async fn acquire_within(&self, limit: Option<Duration>) -> RecipeResult<Option<AnyGuard>> {
        match (self, limit) {
            (AnySemaphore::Correct(s), Some(l)) => Ok(s.try_acquire_for(l).await?.map(AnyGuard::Correct)),
            // The planted type has no timed acquire: the application drops
            // the acquire when its deadline passes.
            (AnySemaphore::Leaked(s), Some(l)) => match madsim::time::timeout(l, s.acquire()).await {
                Ok(r) => Ok(Some(AnyGuard::Plain(r?))),
                Err(_) => Ok(None),
            },
            (s, None) => s.acquire().await.map(Some),
        }
    }
}

impl Env {
    /// A write to the protected resource without a checkable token (the
    /// resource accepts it); the history records `token` so the fencing
    /// checker can order the writes.
    pub async fn unfenced_write(&mut self, zk: &SimClient, resource: &str, token: i64) {
        let id = self.invoke(
            Some(zk),
            Op::FencedWrite {
                resource: resource.to_string(),
                token,
            },
        );
        let ms = self.between([1, 3]);
        madsim::time::sleep(Duration::from_millis(ms)).await;
        self.ops -= 1; // resource writes do not count against the workload size
        self.ok(id, Value::Unit);
    }
}
