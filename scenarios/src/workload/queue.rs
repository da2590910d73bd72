//! Queues: producers enqueue unique items (with random priorities for the
//! priority queue); consumers take them (at-most-once: delete then
//! process; at-least-once: claim, process, complete). After the workload
//! stops, consumers drain the queue, so the checker may decide loss.
//! The producer's steps and both consumers are parameters: the correct
//! recipe's, or a planted type in the place of one of them.

use std::time::Duration;

use madsim::time::Instant;

use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_checker::properties::liveness::DEQUEUE_WAIT_MS;
use zkdst_checker::properties::missed_claim::NOTHING_TO_CLAIM;
use zkdst_checker::properties::queue::NOTHING_TO_TAKE;
use zkdst_model::Situation;
use zkdst_recipes::queue::{AtLeastOnceConsumer, AtMostOnceConsumer, Queue, QueueItem, Steps};
use zkdst_recipes::RecipeError;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::consume::{Consume, MakeConsumer, Taken};
use super::{Env, SimCtx};
use crate::scenario::Consumer;

pub(crate) const Q: &str = "/queues/q";

/// The correct at-most-once consumer.
pub(crate) const TAKE: MakeConsumer<AtMostOnceConsumer<AnyClient, SimRuntime>> = |c| AtMostOnceConsumer::new(c, Q);

/// The correct at-least-once consumer.
pub(crate) const CLAIM: MakeConsumer<AtLeastOnceConsumer<AnyClient, SimRuntime>> = |c| AtLeastOnceConsumer::new(c, Q);

/// Producers hold back while the queue is longer than this, so the backlog
/// stays drainable: three consumers under faults take items more slowly
/// than two producers add them, and an unbounded backlog cannot be drained
/// before the run ends (the checker would then report undrained items).
const BACKLOG: usize = 50;

/// The share of claimed items a consumer gives back while the workload runs
/// (its processing failed), half with `abandon`, half by dropping the claim,
/// as applications do: each must free the item for another consumer.
const GIVE_BACK: f64 = 0.1;

/// How long a waiting take waits for an item, at most: [min, max] ms.
const TAKE_WAIT_MS: [u64; 2] = [10, 2000];

/// The share of takes that wait for an item (`take_for` / `claim_for`).
const BLOCKING: f64 = 0.3;

fn producers(env: &Env) -> u32 {
    env.scenario
        .workload
        .producers
        .unwrap_or(env.clients.div_ceil(2))
        .clamp(1, env.clients.saturating_sub(1).max(1))
}

/// A producer writing items as `steps` does, or a consumer: the
/// scenario's `workload.consumer` picks `at_most_once` or `at_least_once`.
pub async fn client<S: Steps, M: Consume, L: Consume>(
    env: Env,
    priority: bool,
    steps: S,
    at_most_once: MakeConsumer<M>,
    at_least_once: MakeConsumer<L>,
) {
    if env.id < producers(&env) {
        produce(env, priority, steps).await
    } else {
        match env.scenario.workload.consumer {
            Consumer::AtMostOnce => consume(env, at_most_once, NOTHING_TO_TAKE).await,
            Consumer::AtLeastOnce => consume(env, at_least_once, NOTHING_TO_CLAIM).await,
        }
    }
}

async fn produce<S: Steps>(mut env: Env, priority: bool, steps: S) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let mut n = 0;
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        n += 1;
        let item = format!("p{}-{n}", env.id);
        // Negative priorities too: they sort before zero only if the
        // recipe's name encoding handles the sign.
        let prio: i32 = if priority { env.rng.gen_range(-2..3) } else { 0 };
        let q = Queue::with_steps(ctx.clone(), Q, steps.clone());
        // Backpressure (not recorded: the workload's pacing, not an op).
        // One `exists` per look, as a producer application would pace
        // itself: listing the whole queue each time made the listings most
        // of a seed's history and time.
        while env.running() && matches!(q.backlog().await, Ok(l) if l > BACKLOG) {
            env.think().await;
        }
        if !env.running() {
            break;
        }
        let id = env.invoke(
            Some(&zk),
            Op::Enqueue {
                queue: Q.into(),
                item: item.clone(),
                priority: prio as i64,
            },
        );
        // The queue's promise: an error other than Ambiguous created no
        // item (a delivery of it would be a `phantom-item`).
        // A FIFO producer uses the plain enqueue, as an application
        // without priorities does.
        let enqueued = if priority {
            q.enqueue_with_priority(item.as_bytes(), prio).await
        } else {
            q.enqueue(item.as_bytes()).await
        };
        match enqueued {
            Ok(_) => env.ok(id, Value::Unit),
            Err(e @ RecipeError::Ambiguous(_)) => env.err(id, &e),
            Err(e) => env.fail(id, &e.to_string()),
        }
        env.think().await;
    }
    let done = env.shared.round("producers-done");
    env.shared.set_round("producers-done", done + 1);
}

fn item_value(i: &QueueItem) -> Value {
    Value::Item {
        item: Some(String::from_utf8_lossy(&i.data).into_owned()),
        priority: Some(i.priority.into()),
    }
}

/// Finishes a claimed item as an application does: not if the claim is
/// known lost (another consumer may have it), else `complete`, recorded —
/// Ok: gone for good; SessionLost / NodeGone: definitely not removed (the
/// claim was lost); anything else: unknown.
async fn complete<T: Taken>(env: &mut Env, zk: &AnyClient, t: T) {
    if t.lost() {
        env.exercised(Situation::QueueClaimLost);
        return;
    }
    report_claim(env, zk, &t);
    let item = String::from_utf8_lossy(&t.item().data).into_owned();
    let id = env.invoke(Some(zk), Op::Complete { queue: Q.into(), item });
    match t.complete().await {
        Ok(()) => env.ok(id, Value::Unit),
        Err(e @ (RecipeError::SessionLost | RecipeError::NodeGone(_))) => env.fail(id, &e.to_string()),
        Err(e) => env.err(id, &e),
    }
}

/// Records what a claim says as its processor asks it, before acting on
/// it (`suspended-misreported` judges it by the client's connection).
fn report_claim<T: Taken>(env: &mut Env, zk: &AnyClient, t: &T) {
    if let Some(suspended) = t.suspended() {
        env.report(
            zk,
            Op::HoldState {
                lock: Q.into(),
                token: t.item().czxid,
                suspended,
            },
        );
    }
}

/// Processes a claimed item for long (`workload.long_hold`): 1.5 to 3
/// session timeouts during the fault phase, asking the claim every
/// 50-300 ms and stopping once it says lost — long enough for the claim's
/// session to end, and its client to hear so, mid-processing.
async fn process_long<T: Taken>(env: &mut Env, zk: &AnyClient, t: &T) {
    if !t.claimed() {
        return;
    }
    let heal = env.stop - Duration::from_secs(env.scenario.workload.liveness_s);
    let Some(until) = env.long_hold(heal, Situation::QueueLongClaim) else {
        return;
    };
    while Instant::now() < until.min(heal) && !t.lost() {
        report_claim(env, zk, t);
        madsim::time::sleep(Duration::from_millis(env.between([50, 300]))).await;
    }
}

/// Processing failed: the item goes back to the queue, by `abandon` or by
/// dropping the claim (not recorded as an operation: the checkers judge
/// that the item is delivered again and the queue still drains).
async fn give_back<T: Taken>(env: &mut Env, t: T) {
    if env.rng.gen_bool(0.5) {
        env.exercised(Situation::QueueClaimAbandoned);
        t.abandon().await;
    } else {
        env.exercised(Situation::QueueClaimDropped);
        drop(t);
    }
}

/// Whether the queue is empty, asked as a draining application asks:
/// `len()` or `is_empty()`, recorded (`QueueLen`: `queue-len-misreported`
/// holds the answer to the call's own listing).
async fn drained(env: &mut Env, zk: &AnyClient, ctx: &SimCtx) -> bool {
    let q = Queue::new(ctx.clone(), Q);
    let id = env.invoke(Some(zk), Op::QueueLen { queue: Q.into() });
    env.ops -= 1; // a look, not a queue operation
    let empty = if env.rng.gen_bool(0.5) {
        q.len().await.map(|n| (n == 0, Value::Int { value: n as i64 }))
    } else {
        q.is_empty().await.map(|e| (e, Value::Bool { value: e }))
    };
    match empty {
        Ok((empty, value)) => {
            env.ok(id, value);
            empty
        }
        Err(e) => {
            env.err(id, &e);
            false
        }
    }
}

async fn consume<T: Consume>(mut env: Env, make: MakeConsumer<T>, none: &str) {
    // No take waits for an item longer than TAKE_WAIT_MS: liveness judges
    // one still pending past its bound as stuck, whatever the queue held.
    env.rec.set_meta(DEQUEUE_WAIT_MS, TAKE_WAIT_MS[1].to_string());
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let nprod = producers(&env) as i64;
    let drain_deadline = env.stop + Duration::from_millis(env.scenario.check.params.liveness_bound_ms / 2);
    loop {
        let running = env.running();
        if !running {
            // Drain: stop once producers are done and the queue is empty.
            if madsim::time::Instant::now() > drain_deadline {
                break;
            }
            if env.shared.round("producers-done") >= nprod {
                env.renew(&mut zk, &mut ctx);
                if drained(&mut env, &zk, &ctx).await {
                    break;
                }
            }
        }
        env.renew(&mut zk, &mut ctx);
        let id = env.invoke(Some(&zk), Op::Dequeue { queue: Q.into() });
        // Some takes wait for an item (with a limit), as a consumer
        // application blocks on its queue; the rest only look.
        let consumer = make(ctx.clone());
        let taken = if running && env.rng.gen_bool(BLOCKING) {
            let limit = Duration::from_millis(env.between(TAKE_WAIT_MS));
            consumer.take_for(limit).await
        } else {
            consumer.try_take().await
        };
        match taken {
            Ok(Some(t)) => {
                env.ok(id, item_value(t.item()));
                // At-most-once items are gone already: processing them is
                // only worth simulating while the workload runs.
                if running || t.claimed() {
                    if running {
                        process_long(&mut env, &zk, &t).await;
                    }
                    env.hold().await;
                }
                if t.claimed() && running && !t.lost() && env.rng.gen_bool(GIVE_BACK) {
                    give_back(&mut env, t).await;
                } else if t.claimed() {
                    complete(&mut env, &zk, t).await;
                }
            }
            Ok(None) => env.fail(id, none),
            // Recorded as the consumer promises (at most once: only
            // Ambiguous may have taken an item; at least once: all but
            // SessionLost), so the checkers hold it to that (`lost-item`).
            Err(e) if T::may_have_taken(&e) => env.err(id, &e),
            Err(e) => env.fail(id, &e.to_string()),
        }
        if running {
            env.think().await;
        }
    }
}
