//! zkdst's exclusive lock, held as the Rust `lock` workload holds it:
//! acquire, a few writes to the fenced resource while the guard says the
//! hold is not lost, release.

use std::sync::Arc;
use std::time::Duration;

use zkdst_history::{Op, Outcome, Value};
use zkdst_recipes::lock::Lock;
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeError;

use crate::env::{Env, Session};
use crate::{Resource, Rng};

pub const LOCK: &str = "/locks/l";

pub async fn client(env: Arc<Env>, i: u32, resource: Arc<Resource>) {
    let rec = &env.record;
    let mut rng = Rng::new(env.seed, i);
    while env.running() {
        let Some(s) = Session::connect(&env, i).await else {
            break;
        };
        let lock = Lock::new(s.ctx.clone(), LOCK);
        while env.running() && !s.ended() {
            let sid = s.id();
            let id = rec.invoke(
                i,
                sid,
                Op::Acquire {
                    lock: LOCK.into(),
                    shared: false,
                },
            );
            let r = tokio::time::timeout(env.left() + 2 * env.session_timeout, lock.acquire()).await;
            s.sync();
            match r {
                Err(_) => {
                    rec.complete(
                        i,
                        id,
                        Outcome::Info {
                            error: "still waiting when the run ended".into(),
                        },
                    );
                    break;
                }
                Ok(Err(e)) => rec.complete(i, id, outcome_of(&e)),
                Ok(Ok(guard)) => {
                    let token = guard.token();
                    rec.ok(i, id, Value::Token { token });
                    for _ in 0..rng.between(1, 3) {
                        s.sync();
                        if guard.is_lost() {
                            rec.report(
                                i,
                                sid,
                                Op::HoldLost {
                                    lock: LOCK.into(),
                                    token,
                                },
                            );
                            break;
                        }
                        if guard.is_suspended() {
                            // The connection dropped: act only once it is back.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                        resource
                            .write(
                                rec,
                                i,
                                sid,
                                LOCK,
                                token,
                                Op::FencedWrite {
                                    resource: LOCK.into(),
                                    token,
                                },
                            )
                            .await;
                        tokio::time::sleep(Duration::from_millis(rng.between(1, 40))).await;
                    }
                    let rid = rec.invoke(i, sid, Op::Release { lock: LOCK.into() });
                    let released = guard.release().await;
                    s.sync();
                    match released {
                        Ok(_) => rec.ok(i, rid, Value::Unit),
                        Err(e) => rec.complete(i, rid, Outcome::Info { error: e.to_string() }),
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(rng.between(5, 50))).await;
        }
        s.zk.close().await;
    }
}

/// A recipe error as the history records it: the session lost before
/// anything held is a definite failure; anything else may have acted.
pub fn outcome_of(e: &RecipeError) -> Outcome {
    match e {
        RecipeError::SessionLost => Outcome::Fail { error: e.to_string() },
        _ => Outcome::Info { error: e.to_string() },
    }
}
