//! zkdst's queue, as the Rust `queue` workload uses it: two producers
//! enqueue until shortly before the stop, the other clients take with the
//! at-most-once consumer (delete, then process) and drain the queue at the
//! end, so every acknowledged item must be delivered exactly once.

use std::sync::Arc;
use std::time::Duration;

use zkdst_history::{Op, Outcome, Value};
use zkdst_recipes::queue::{AtMostOnceConsumer, Queue};
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeError;

use crate::env::{Env, Session};
use crate::Rng;

pub const QUEUE: &str = "/queues/q";
/// What an at-most-once take that found nothing records (the queue
/// checker's word).
const NOTHING_TO_TAKE: &str = "nothing to take";
/// Producers stop this long before the stop, so the consumers can drain.
const PRODUCERS_STOP_EARLY: Duration = Duration::from_secs(3);
const PRODUCERS: u32 = 2;
/// A producer waits while the queue holds more than this (backpressure,
/// as the Rust workload paces itself), so the consumers can drain it.
const BACKLOG: usize = 20;

pub async fn client(env: Arc<Env>, i: u32) {
    if i < PRODUCERS {
        produce(env, i).await
    } else {
        consume(env, i).await
    }
}

async fn produce(env: Arc<Env>, i: u32) {
    let rec = &env.record;
    let mut rng = Rng::new(env.seed, i);
    let mut n = 0;
    let producing = |env: &Env| env.left() > PRODUCERS_STOP_EARLY;
    while producing(&env) {
        let Some(s) = Session::connect(&env, i).await else {
            break;
        };
        let q = Queue::new(s.ctx.clone(), QUEUE);
        while producing(&env) && !s.ended() {
            if matches!(q.backlog().await, Ok(l) if l > BACKLOG) {
                tokio::time::sleep(Duration::from_millis(rng.between(20, 100))).await;
                continue;
            }
            n += 1;
            let item = format!("p{i}-{n}");
            let id = rec.invoke(
                i,
                s.id(),
                Op::Enqueue {
                    queue: QUEUE.into(),
                    item: item.clone(),
                    priority: 0,
                },
            );
            let r = q.enqueue(item.as_bytes()).await;
            s.sync();
            match r {
                Ok(_) => rec.ok(i, id, Value::Unit),
                // Only an ambiguous enqueue may have created the item.
                Err(e @ RecipeError::Ambiguous(_)) => rec.complete(i, id, Outcome::Info { error: e.to_string() }),
                Err(e) => rec.complete(i, id, Outcome::Fail { error: e.to_string() }),
            }
            tokio::time::sleep(Duration::from_millis(rng.between(5, 50))).await;
        }
        s.zk.close().await;
    }
}

async fn consume(env: Arc<Env>, i: u32) {
    let rec = &env.record;
    let mut rng = Rng::new(env.seed, i);
    let mut empty_after_stop = 0;
    // After the stop: drain until the queue reads empty twice.
    while empty_after_stop < 2 {
        let Some(s) = Session::connect(&env, i).await else {
            break;
        };
        let c = AtMostOnceConsumer::new(s.ctx.clone(), QUEUE);
        while empty_after_stop < 2 && !s.ended() {
            let running = env.running();
            let id = rec.invoke(i, s.id(), Op::Dequeue { queue: QUEUE.into() });
            let r = if running {
                c.take_for(Duration::from_millis(rng.between(50, 500))).await
            } else {
                c.try_take().await
            };
            s.sync();
            match r {
                Ok(Some(item)) => rec.ok(
                    i,
                    id,
                    Value::Item {
                        item: Some(String::from_utf8_lossy(&item.data).into_owned()),
                        priority: Some(item.priority.into()),
                    },
                ),
                Ok(None) => {
                    rec.complete(
                        i,
                        id,
                        Outcome::Fail {
                            error: NOTHING_TO_TAKE.into(),
                        },
                    );
                    if !running {
                        empty_after_stop += 1;
                    }
                }
                // At most once: only an ambiguous take may have taken one.
                Err(e @ RecipeError::Ambiguous(_)) => rec.complete(i, id, Outcome::Info { error: e.to_string() }),
                Err(e) => rec.complete(i, id, Outcome::Fail { error: e.to_string() }),
            }
            if running {
                tokio::time::sleep(Duration::from_millis(rng.between(5, 50))).await;
            }
        }
        s.zk.close().await;
        if !env.running() && s.ended() {
            // A session lost while draining: start another, briefly.
            empty_after_stop += 1;
        }
    }
}
