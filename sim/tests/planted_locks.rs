//! Planted lock bugs caught by the checkers: unprotected create (the lock
//! without a guid), cancellation leak, delete under disconnect and lost
//! watch hang the lock (liveness); each run heals and then gives the
//! recipe a liveness phase. The correct `Lock` passes the same seeds.

mod planted_common;

use std::sync::Arc;
use std::time::Duration;

use planted_common::*;
use zkdst_checker::history::{Op, Value};
use zkdst_recipes::lock::{Lock, LockGuard};
use zkdst_recipes::planted::{
    CancellationLeakLock, DeleteUnderDisconnectLock, LeakyReleaseGuard, LostWatchLock, PlainGuard,
    UnprotectedCreateLock,
};
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::NodeRef;
use zkdst_sim::runtime::SimRuntime;

const LOCK: &str = "/locks/l";
const CLIENTS: usize = 3;

#[derive(Clone)]
enum L {
    Correct(Lock<SimClient, SimRuntime>),
    CorrectTimed(Lock<SimClient, SimRuntime>),
    Unprotected(UnprotectedCreateLock<SimClient, SimRuntime>),
    Cancel(CancellationLeakLock<SimClient, SimRuntime>),
    DelDisc(DeleteUnderDisconnectLock<SimClient, SimRuntime>),
    LostWatch(LostWatchLock<SimClient, SimRuntime>),
}

enum G {
    Correct(LockGuard<SimClient, SimRuntime>),
    Plain(PlainGuard<SimClient, SimRuntime>),
    Leaky(LeakyReleaseGuard<SimClient, SimRuntime>),
}

/// How long a timed acquire waits before giving up (fault phase only).
const TRY_MS: u64 = 400;

impl L {
    /// `Ok(None)`: a timed acquire gave up. After the heal every acquire
    /// blocks (the liveness probe).
    async fn acquire(&self, live: bool) -> RecipeResult<Option<(G, i64)>> {
        let limit = Duration::from_millis(TRY_MS);
        Ok(match self {
            L::Correct(l) => l.acquire().await.map(|g| (g.token(), G::Correct(g))).map(Some)?,
            L::CorrectTimed(l) if live => Some(l.acquire().await.map(|g| (g.token(), G::Correct(g)))?),
            L::CorrectTimed(l) => l.try_acquire_for(limit).await?.map(|g| (g.token(), G::Correct(g))),
            L::Unprotected(l) => Some(l.acquire().await.map(|g| (g.token(), G::Plain(g)))?),
            L::Cancel(l) if live => Some(l.acquire().await.map(|g| (g.token(), G::Plain(g)))?),
            L::Cancel(l) => l.try_acquire_for(limit).await?.map(|g| (g.token(), G::Plain(g))),
            L::DelDisc(l) => Some(l.acquire().await.map(|g| (g.token(), G::Leaky(g)))?),
            L::LostWatch(l) => Some(l.acquire().await.map(|g| (g.token(), G::Plain(g)))?),
        }
        .map(|(t, g)| (g, t)))
    }
}

impl G {
    async fn release(self) {
        match self {
            G::Correct(g) => {
                let _ = g.release().await;
            }
            G::Plain(g) => g.release().await,
            G::Leaky(g) => g.release().await,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    UnprotectedCreate,
    CancellationLeak,
    DeleteUnderDisconnect,
    LostWatch,
}

fn make(class: Class, v: Variant, ctx: SimCtx) -> L {
    match (class, v) {
        (Class::CancellationLeak, Variant::Correct) => L::CorrectTimed(Lock::new(ctx, LOCK)),
        (_, Variant::Correct) => L::Correct(Lock::new(ctx, LOCK)),
        (Class::UnprotectedCreate, _) => L::Unprotected(UnprotectedCreateLock::new(ctx, LOCK)),
        (Class::CancellationLeak, _) => L::Cancel(CancellationLeakLock::new(ctx, LOCK)),
        (Class::DeleteUnderDisconnect, _) => L::DelDisc(DeleteUnderDisconnectLock::new(ctx, LOCK)),
        (Class::LostWatch, _) => L::LostWatch(LostWatchLock::new(ctx, LOCK)),
    }
}

fn hold_ms(class: Class) -> (u64, u64) {
    match class {
        Class::UnprotectedCreate => (20, 200),
        Class::CancellationLeak => (20, 100),
        Class::DeleteUnderDisconnect => (1500, 3000),
        Class::LostWatch => (200, 600),
    }
}

struct Shared {
    stop: Flag,
    live: Flag,
    handles: Handles,
    holder: Holder,
}

async fn worker(i: usize, zk: SimClient, class: Class, v: Variant, servers: Vec<u32>, s: Arc<Shared>) {
    let mut zk = zk;
    let mut lock = make(class, v, ctx(zk.clone()));
    s.handles.set(i, &zk);
    let (lo, hi) = hold_ms(class);
    while !s.stop.is_set() {
        if zk.state().is_terminal() {
            zk = reconnect(zk.id(), servers.clone(), zk.recorder());
            lock = make(class, v, ctx(zk.clone()));
            s.handles.set(i, &zk);
        }
        let id = invoke(
            &zk,
            Op::Acquire {
                lock: LOCK.into(),
                shared: false,
            },
        );
        match lock.acquire(s.live.is_set()).await {
            Ok(Some((g, token))) => {
                ok(&zk, id, Value::Token { token });
                s.holder.set(Some(zk.id()));
                sleep_ms(rand_ms(lo, hi)).await;
                s.holder.set(None);
                let r = invoke(&zk, Op::Release { lock: LOCK.into() });
                g.release().await;
                ok(&zk, r, Value::Unit);
            }
            Ok(None) => ok(&zk, id, Value::Bool { value: false }),
            Err(e) => {
                fail(&zk, id, e);
                sleep_ms(100).await;
            }
        }
        sleep_ms(rand_ms(0, 50)).await;
    }
}

/// The current holder, waiting up to 5 s for one.
async fn wait_holder(h: &Holder) -> Option<u32> {
    for _ in 0..250 {
        if let Some(c) = h.get() {
            return Some(c);
        }
        sleep_ms(20).await;
    }
    None
}

async fn scenario(seed: u64, v: Variant, class: Class) -> zkdst_checker::history::History {
    let (mut c, rec) = start(seed).await;
    let s = Arc::new(Shared {
        stop: Flag::default(),
        live: Flag::default(),
        handles: Handles::default(),
        holder: Holder::default(),
    });
    let servers = c.server_ids();
    for i in 0..CLIENTS {
        let (s2, servers2) = (s.clone(), servers.clone());
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| worker(i, zk, class, v, servers2, s2)));
    }
    sleep_ms(1000).await;
    let all_servers: Vec<NodeRef> = servers.iter().map(|x| NodeRef::Server(*x)).collect();
    match class {
        Class::UnprotectedCreate => {
            for _ in 0..8 {
                sleep_ms(rand_ms(500, 1500)).await;
                if let Some(zk) = s.handles.random(0..CLIENTS) {
                    zk.lose_next_write_reply();
                }
            }
        }
        Class::CancellationLeak => {
            for _ in 0..3 {
                let Some(h) = wait_holder(&s.holder).await else { break };
                c.pause(NodeRef::Client(h));
                sleep_ms(1200).await;
                c.resume(NodeRef::Client(h));
                sleep_ms(rand_ms(500, 1500)).await;
            }
        }
        Class::DeleteUnderDisconnect => {
            for _ in 0..3 {
                let Some(h) = wait_holder(&s.holder).await else { break };
                c.partition(&[vec![NodeRef::Client(h)], all_servers.clone()]);
                sleep_ms(2800).await;
                c.heal();
                sleep_ms(rand_ms(1000, 3000)).await;
            }
        }
        Class::LostWatch => {
            for _ in 0..8 {
                sleep_ms(rand_ms(700, 2000)).await;
                if let Some(zk) = s.handles.random(0..CLIENTS) {
                    zk.drop_connection();
                }
            }
        }
    }
    s.live.set();
    heal_and_finish(c, rec, &s.stop, 5000).await
}

fn hunt_class(bug: &str, class_name: &str, class: Class) {
    hunt(bug, class_name, 5, &["liveness"], &params(), move |seed, v| {
        scenario(seed, v, class)
    });
}

#[test]
fn unprotected_create_lock_hangs() {
    hunt_class("UnprotectedCreateLock", "unprotected create", Class::UnprotectedCreate);
}

#[test]
fn cancellation_leak_lock_hangs() {
    hunt_class("CancellationLeakLock", "cancellation leak", Class::CancellationLeak);
}

#[test]
fn delete_under_disconnect_lock_hangs() {
    hunt_class(
        "DeleteUnderDisconnectLock",
        "delete under disconnect",
        Class::DeleteUnderDisconnect,
    );
}

#[test]
fn lost_watch_lock_hangs() {
    hunt_class("LostWatchLock", "lost watch on reconnect", Class::LostWatch);
}
