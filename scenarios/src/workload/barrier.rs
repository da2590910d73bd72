//! Barriers. Single: client 0 sets a barrier, holds it up a while and
//! removes it; the others wait on it, some with a time limit. Double: every client enters, works and
//! leaves, round after round; client 0 decides the last round (outside
//! ZooKeeper) so that nobody enters a round the others will not.

use std::time::Duration;
use zkdst_model::Situation;

use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_checker::properties::gave_up::GAVE_UP;
use zkdst_recipes::barrier::{Barrier, DoubleBarrier};
use zkdst_recipes::error::RecipeError;

use super::Env;

fn name(k: i64) -> String {
    format!("/barriers/b{k}")
}

/// The share of barrier waits with a time limit, as an application that
/// will not wait forever makes them.
const TIMED_WAITS: f64 = 0.3;

pub async fn single(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    if env.id == 0 {
        let mut k = 0;
        while env.running() {
            env.renew(&mut zk, &mut ctx);
            k += 1;
            let b = Barrier::new(ctx.clone(), name(k));
            let id = env.invoke(Some(&zk), Op::BarrierSet { barrier: name(k) });
            match b.set().await {
                Ok(()) => env.ok(id, Value::Unit),
                Err(e) => env.err(id, &e),
            }
            env.shared.set_round("barrier", k);
            let up = env.rng.gen_range(50..800);
            madsim::time::sleep(Duration::from_millis(up)).await;
            // Removal must succeed eventually, or the waiters hang.
            loop {
                env.renew(&mut zk, &mut ctx);
                let b = Barrier::new(ctx.clone(), name(k));
                let id = env.invoke(Some(&zk), Op::BarrierRemove { barrier: name(k) });
                match b.remove().await {
                    Ok(()) => {
                        env.ok(id, Value::Unit);
                        break;
                    }
                    Err(e) => env.err(id, &e),
                }
                madsim::time::sleep(Duration::from_millis(100)).await;
            }
            env.think().await;
        }
        return;
    }
    let mut last = 0;
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let k = env.shared.round("barrier");
        if k > last {
            last = k;
            let b = Barrier::new(ctx.clone(), name(k));
            let id = env.invoke(Some(&zk), Op::BarrierWait { barrier: name(k) });
            if env.rng.gen_bool(TIMED_WAITS) {
                // Longer than any stall a connected session sees, so a
                // give-up after the removal is the recipe's (missed-removal).
                let limit = env.session_timeout_ms as u64 * env.rng.gen_range(2..=3);
                env.exercised(Situation::BarrierTimedWait);
                match b.wait_for(Duration::from_millis(limit)).await {
                    Ok(true) => env.ok(id, Value::Unit),
                    Ok(false) => env.fail(id, GAVE_UP),
                    Err(e) => env.err(id, &e),
                }
            } else {
                match b.wait().await {
                    Ok(()) => env.ok(id, Value::Unit),
                    Err(e) => env.err(id, &e),
                }
            }
        }
        env.think().await;
    }
}

pub async fn double(mut env: Env) {
    const DIR: &str = "/barriers/double";
    let n = env.clients as usize;
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let mut k: i64 = 0;
    loop {
        k += 1;
        // A double-barrier directory is single-use (its `ready` node stays),
        // so every round gets its own; the history names the barrier DIR
        // and the checker counts rounds per client.
        let dir = format!("{DIR}/round-{k}");
        // A participant whose session is lost drops out with its node (the
        // recipe's contract) and the round cannot fill without it: like an
        // application restarting the participant, rejoin the same round with
        // a new session. Only then: the old session's node is surely gone,
        // so it cannot be counted twice.
        let mut b = loop {
            env.renew(&mut zk, &mut ctx);
            let mut b = DoubleBarrier::new(ctx.clone(), dir.clone(), n);
            let id = env.invoke(Some(&zk), Op::BarrierEnter { barrier: DIR.into() });
            match b.enter().await {
                Ok(()) => {
                    // The node it names, as an application reports it; the
                    // checker holds it to one this session created.
                    let node = b.node().unwrap_or_default().to_string();
                    env.ok(id, Value::Str { value: node });
                    break b;
                }
                Err(e) => {
                    env.err(id, &e);
                    if !matches!(e, RecipeError::SessionLost) {
                        // The session may live on with a node in the round.
                        return;
                    }
                    env.exercised(Situation::DoubleBarrierRejoined);
                }
            }
        };
        if env.id == 0 && !env.running() {
            env.shared.set_round("double-last", k);
        }
        env.hold().await;
        let id = env.invoke(Some(&zk), Op::BarrierLeave { barrier: DIR.into() });
        match b.leave().await {
            Ok(()) => env.ok(id, Value::Unit),
            // Our node went with the session: we are out of this round.
            Err(RecipeError::SessionLost) => env.err(id, &RecipeError::SessionLost),
            Err(e) => {
                env.err(id, &e);
                return;
            }
        }
        let last = env.shared.round("double-last");
        if last > 0 && k >= last {
            return;
        }
        env.think().await;
    }
}
