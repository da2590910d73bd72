//! Locks, read/write locks and semaphores: acquire (recording the fencing
//! token; a `workload.give_up` share of acquires give up after a while),
//! write to the protected resource with it while the hold looks alive,
//! hold, release (a tenth of the exclusive lock's holds are let go by
//! dropping the guard, as a scope exit does). One recipe object per session, kept across acquires.

use std::time::Duration;

use futures::future::{select, Either};
use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, OpId, Value};
use zkdst_checker::properties::gave_up::RECIPE_CALLS;
use zkdst_checker::properties::semaphore::REPORTED_MAX_LEASES;
use zkdst_model::Situation;
use zkdst_recipes::lock::RwLock;
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeResult;

use super::contend::{hold_node, Contend, Held, MakeLock};
use super::new_session::{hold_unless_disconnected, reacquire_on_new_session, sleep_unless_disconnected};
use super::{Env, SimCtx};
use crate::scenario::OnDisconnect;

pub(crate) const LOCK: &str = "/locks/l";
pub(crate) const RW: &str = "/locks/rw";
pub(crate) const SEM: &str = "/semaphores/s";

/// The exclusive-lock client, over the lock `make` builds.
pub async fn lock<L: Contend>(mut env: Env, make: MakeLock<L>) {
    // Holds without a grace: only the session's end or the node's deletion
    // ends one (the mutex checker's `lost-while-held`).
    env.rec.set_meta("hold_grace", "none");
    if !L::CALLS_RECORDED {
        // The checkers' `gave-up-unqueued` needs the recipe's creates.
        env.rec.set_meta(RECIPE_CALLS, "unrecorded");
    }
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let w = &env.scenario.workload;
    let timeout = w.acquire_timeout_ms.map(Duration::from_millis);
    let new_session = w.on_disconnect == OnDisconnect::NewSession;
    let heal = env.stop - Duration::from_secs(w.liveness_s);
    // An acquire started on a fresh session after a disconnect (new-session).
    let mut carried: Option<(OpId, RecipeResult<Option<L::Held>>)> = None;
    // One lock object per session, kept across acquires as an application
    // keeps it.
    let mut lock = make(ctx.clone(), env.id);
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            lock = make(ctx.clone(), env.id);
        }
        if carried.is_none() && zk.session_id() == 0 {
            // Record acquires with their session: a hold abandoned (new
            // session) or cut short by expiry ends, for the checker, when
            // that session closes.
            zk.wait_connected(Duration::from_secs(30)).await;
        }
        let (id, r) = match carried.take() {
            Some(c) => c,
            None => {
                let id = env.invoke(
                    Some(&zk),
                    Op::Acquire {
                        lock: LOCK.into(),
                        shared: false,
                    },
                );
                let r = match timeout {
                    Some(t) if Instant::now() < heal => lock.try_acquire_for(t).await,
                    Some(_) => lock.acquire().await.map(Some),
                    None => match env.patience() {
                        Some(t) => lock.try_acquire_for(t).await,
                        None => lock.acquire().await.map(Some),
                    },
                };
                (id, r)
            }
        };
        match r {
            Ok(Some(guard)) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                if let Some(node) = guard.node(LOCK) {
                    env.report(&zk, node);
                }
                let until = env.long_hold(heal, Situation::LockLongHold);
                let writes = if until.is_some() {
                    u32::MAX
                } else {
                    env.rng.gen_range(1..=3)
                };
                let mut states = new_session.then(|| zk.state_watch());
                let mut dropped = false;
                for _ in 0..writes {
                    if guard.is_lost() {
                        env.hold_lost(&zk, LOCK, token);
                        break;
                    }
                    if let Some(suspended) = guard.is_suspended() {
                        env.report(
                            &zk,
                            Op::HoldState {
                                lock: LOCK.into(),
                                token,
                                suspended,
                            },
                        );
                    }
                    if let Some(write) = guard.guarded_set(LOCK, &token.to_be_bytes()) {
                        env.guarded_write(&zk, LOCK, token, write).await;
                        // The hold may have ended during that write: ask
                        // again before the next act, as an application would.
                        if guard.is_lost() {
                            env.hold_lost(&zk, LOCK, token);
                            break;
                        }
                    }
                    if guard.fenced() {
                        env.fenced_write(&zk, LOCK, token).await;
                    } else {
                        env.unfenced_write(&zk, LOCK, token).await;
                    }
                    if let Some(u) = until {
                        // A long hold ends with the fault phase, so that the
                        // acquires queued behind it finish within the
                        // liveness bound.
                        if Instant::now() >= u || Instant::now() >= heal || !env.running() {
                            break;
                        }
                        let ms = env.between([50, 300]);
                        if let Some(states) = states.as_mut() {
                            // new-session: a long hold, too, is given up the
                            // moment the connection drops.
                            if sleep_unless_disconnected(states, Duration::from_millis(ms)).await {
                                dropped = true;
                                break;
                            }
                            continue;
                        }
                        let nap = Box::pin(madsim::time::sleep(Duration::from_millis(ms)));
                        match guard.is_suspended().filter(|s| !s).and(guard.suspended_or_lost()) {
                            // As an application that pauses its work when the
                            // guard says suspended: woken by the guard. Woken
                            // and not lost, the guard said suspended.
                            Some(woken) => {
                                if let Either::Right((false, _)) = select(nap, woken).await {
                                    env.exercised(Situation::LockWokenSuspended);
                                    env.report(
                                        &zk,
                                        Op::HoldState {
                                            lock: LOCK.into(),
                                            token,
                                            suspended: true,
                                        },
                                    );
                                }
                            }
                            None => nap.await,
                        }
                    } else if let Some(states) = states.as_mut() {
                        if hold_unless_disconnected(&mut env, states).await {
                            dropped = true;
                            break;
                        }
                    } else {
                        env.hold().await;
                    }
                }
                if dropped {
                    carried = reacquire_on_new_session(&mut env, &mut zk, &mut ctx, guard, make, LOCK).await;
                    // The kept lock object is bound to the old handle, which
                    // closes in a second: later acquires go through the new one.
                    lock = make(ctx.clone(), env.id);
                    continue;
                }
                let rid = env.invoke(Some(&zk), Op::Release { lock: LOCK.into() });
                if guard.drop_releases() && env.rng.gen_bool(0.1) {
                    // A scope exit: the guard deletes its node in the
                    // background; the next holder waits for that delete.
                    drop(guard);
                    env.exercised(Situation::LockGuardDropped);
                    env.ok(rid, Value::Unit);
                } else {
                    match guard.release().await {
                        Ok(_) => env.ok(rid, Value::Unit),
                        Err(e) => env.err(rid, &e),
                    }
                }
            }
            Ok(None) => env.gave_up(id),
            Err(e) => env.err(id, &e),
        }
        env.think().await;
    }
}

pub async fn rwlock(mut env: Env) {
    env.rec.set_meta("hold_grace", "none");
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let mut lock = RwLock::new(ctx.clone(), RW);
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            lock = RwLock::new(ctx.clone(), RW);
        }
        let shared = env.rng.gen_bool(0.6);
        let id = env.invoke(
            Some(&zk),
            // Named by the lock's own directory, as an application builds
            // paths from it; fencing finds the lock node there.
            Op::Acquire {
                lock: lock.dir().into(),
                shared,
            },
        );
        let r = match (env.patience(), shared) {
            (Some(t), true) => lock.try_read_for(t).await,
            (Some(t), false) => lock.try_write_for(t).await,
            (None, true) => lock.read().await.map(Some),
            (None, false) => lock.write().await.map(Some),
        };
        match r {
            Ok(None) => env.gave_up(id),
            Ok(Some(guard)) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                env.report(&zk, hold_node(&guard, lock.dir()));
                if guard.is_lost() {
                    env.hold_lost(&zk, lock.dir(), token);
                } else if !shared {
                    env.fenced_write(&zk, RW, token).await;
                }
                env.hold().await;
                let rid = env.invoke(Some(&zk), Op::Release { lock: RW.into() });
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

/// Records the fewest leases any client's semaphore says it allows: the
/// bound an application sizing its work by `max_leases()` relies on
/// (`too-many-leases` holds the semaphore to it).
fn reported_max_leases<L: Contend>(env: &Env, sem: &L) {
    if let Some(n) = sem.max_holds() {
        let fewest = env.rec.meta(REPORTED_MAX_LEASES).and_then(|v| v.parse::<u32>().ok());
        if fewest.is_none_or(|f| n < f) {
            env.rec.set_meta(REPORTED_MAX_LEASES, n.to_string());
        }
    }
}

/// Makes a client's semaphore on a session, with the scenario's permits.
pub type MakeSemaphore<L> = fn(SimCtx, u32) -> RecipeResult<L>;

/// The semaphore client, over the semaphore `make` builds.
pub async fn semaphore<L: Contend>(mut env: Env, make: MakeSemaphore<L>) {
    let permits = env.scenario.workload.permits;
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let Ok(mut sem) = make(ctx.clone(), permits) else {
        return;
    };
    reported_max_leases(&env, &sem);
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            sem = match make(ctx.clone(), permits) {
                Ok(s) => s,
                Err(_) => return,
            };
            reported_max_leases(&env, &sem);
        }
        let id = env.invoke(Some(&zk), Op::Acquired { semaphore: SEM.into() });
        let acquired = match env.patience() {
            Some(limit) => sem.try_acquire_for(limit).await,
            None => sem.acquire().await.map(Some),
        };
        match acquired {
            Ok(None) => env.gave_up(id),
            Ok(Some(lease)) => {
                env.ok(id, Value::Token { token: lease.token() });
                if let Some(node) = lease.node(SEM) {
                    env.report(&zk, node);
                }
                env.hold().await;
                let rid = env.invoke(Some(&zk), Op::Returned { semaphore: SEM.into() });
                match lease.release().await {
                    Ok(_) => env.ok(rid, Value::Unit),
                    Err(e) => env.err(rid, &e),
                }
            }
            Err(e) => env.err(id, &e),
        }
        env.think().await;
    }
}
