//! The revocable shared lock (ZooKeeper recipes: "Revocable Shared
//! Locks"): readers and writers on one read/write lock; a client that has
//! waited past its patience asks the holders ahead of it to release, and a
//! holder consents by releasing as soon as its guard reports the request.
//! Holds are long, so waiters depend on revocation being delivered —
//! including across reconnects, when the holder's watch must be re-armed.

use std::time::Duration;
use zkdst_model::Situation;

use futures::future::{select, Either};
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_recipes::lock::RwLock;
use zkdst_recipes::zk::ZkClient;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::Env;

pub(crate) const DIR: &str = "/locks/revocable";

/// How long a waiter waits before asking the holders to release, ms.
const PATIENCE_MS: [u64; 2] = [100, 600];

pub async fn client(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let mut lock = RwLock::new(ctx.clone(), DIR);
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            lock = RwLock::new(ctx.clone(), DIR);
        }
        let shared = env.rng.gen_bool(0.6);
        let id = env.invoke(
            Some(&zk),
            Op::Acquire {
                lock: DIR.into(),
                shared,
            },
        );
        let patience = Duration::from_millis(env.between(PATIENCE_MS));
        let first = if shared {
            lock.try_read_for(patience).await
        } else {
            lock.try_write_for(patience).await
        };
        let acquired = match first {
            Ok(Some(guard)) => Ok(Some(guard)),
            Ok(None) => {
                revoke_holders(&mut env, &lock, shared).await;
                // A waiter with a deadline gives up if the holders are slow.
                match (env.patience(), shared) {
                    (Some(t), true) => lock.try_read_for(t).await,
                    (Some(t), false) => lock.try_write_for(t).await,
                    (None, true) => lock.read().await.map(Some),
                    (None, false) => lock.write().await.map(Some),
                }
            }
            Err(e) => Err(e),
        };
        match acquired {
            Ok(None) => env.gave_up(id),
            Ok(Some(guard)) => {
                let token = guard.token();
                env.ok(id, Value::Token { token });
                if !shared && !guard.is_lost() {
                    env.fenced_write(&zk, DIR, token).await;
                }
                // Hold until the time is up or someone asks for the lock.
                let ms = env.between(env.scenario.workload.hold_ms).max(1);
                let hold = Box::pin(madsim::time::sleep(Duration::from_millis(ms)));
                if let Either::Right(_) = select(hold, Box::pin(guard.revocation_requested())).await {
                    env.exercised(Situation::RevokeHonoured);
                }
                let rid = env.invoke(Some(&zk), Op::Release { lock: DIR.into() });
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

/// Asks the current holders to release: the writer at the head, or for a
/// writer every reader at the head.
async fn revoke_holders(env: &mut Env, lock: &RwLock<AnyClient, SimRuntime>, shared: bool) {
    let Ok(queue) = lock.queue().await else { return };
    let holders = match queue.first() {
        Some(head) if head.kind == "write" => &queue[..1],
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
