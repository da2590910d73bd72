//! Locks, read/write locks and semaphores: acquire (recording the fencing
//! token), write to the protected resource with it while the hold looks
//! alive, hold, release.

use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_recipes::lock::{Lock, RwLock};
use zkdst_recipes::semaphore::Semaphore;

use super::Env;

const LOCK: &str = "/locks/l";
const RW: &str = "/locks/rw";
const SEM: &str = "/semaphores/s";

pub async fn lock(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let lock = Lock::new(ctx.clone(), LOCK);
        let id = env.invoke(
            Some(&zk),
            Op::Acquire {
                lock: LOCK.into(),
                shared: false,
            },
        );
        match lock.acquire().await {
            Ok(guard) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                let writes = env.rng.gen_range(1..=3);
                for _ in 0..writes {
                    if guard.is_lost() {
                        break;
                    }
                    env.fenced_write(&zk, LOCK, token).await;
                    env.hold().await;
                }
                let rid = env.invoke(Some(&zk), Op::Release { lock: LOCK.into() });
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

pub async fn rwlock(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let lock = RwLock::new(ctx.clone(), RW);
        let shared = env.rng.gen_bool(0.6);
        let id = env.invoke(
            Some(&zk),
            Op::Acquire {
                lock: RW.into(),
                shared,
            },
        );
        let r = if shared { lock.read().await } else { lock.write().await };
        match r {
            Ok(guard) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                if !shared && !guard.is_lost() {
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

pub async fn semaphore(mut env: Env) {
    let permits = env.scenario.workload.permits;
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let sem = match Semaphore::new(ctx.clone(), SEM, permits) {
            Ok(s) => s,
            Err(_) => return,
        };
        let id = env.invoke(Some(&zk), Op::Acquired { semaphore: SEM.into() });
        match sem.acquire().await {
            Ok(lease) => {
                env.ok(id, Value::Token { token: lease.token() });
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
