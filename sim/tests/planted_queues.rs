//! Planted queue, counter and semaphore bugs caught by the checkers: lost
//! item, duplicate item (the queue that retries enqueue blindly), duplicate
//! processing, locking-queue race (queue / liveness), double increment
//! (counter) and leaked lease (liveness). The correct recipes pass the same
//! seeds under the same faults.

mod planted_common;

use std::sync::Arc;

use planted_common::*;
use zkdst_checker::history::{History, Op, Value};
use zkdst_checker::properties::Delivery;
use zkdst_checker::Params;
use zkdst_recipes::counter::Counter;
use zkdst_recipes::planted::{
    DoubleIncrementCounter, DuplicateItemQueue, DuplicateProcessingQueue, LeakedLeaseSemaphore, LockingQueueRace,
    LostItemQueue,
};
use zkdst_recipes::queue::{AtLeastOnceConsumer, AtMostOnceConsumer, Queue, QueueItem};
use zkdst_recipes::semaphore::Semaphore;
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::{RecipeError, RecipeResult};
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::NodeRef;

const Q: &str = "/queues/q";
const ITEMS: usize = 20;
const CONSUMERS: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QClass {
    LostItem,
    DuplicateItem,
    DuplicateProcessing,
    LockingRace,
}

struct Shared {
    stop: Flag,
    live: Flag,
    handles: Handles,
    /// A consumer in the middle of processing an item.
    busy: Holder,
}

fn record_err(zk: &SimClient, id: u64, e: RecipeError) {
    match e {
        RecipeError::Ambiguous(_) => info(zk, id, e),
        RecipeError::Zk(z) if z.is_ambiguous() => info(zk, id, z),
        e => fail(zk, id, e),
    }
}

fn item_name(i: &QueueItem) -> String {
    String::from_utf8_lossy(&i.data).into_owned()
}

async fn producer(zk: SimClient, class: QClass, v: Variant, s: Arc<Shared>) {
    s.handles.set(0, &zk);
    let c = ctx(zk.clone());
    let planted = DuplicateItemQueue::new(c.clone(), Q);
    let correct = Queue::new(c, Q);
    for n in 0..ITEMS {
        let item = format!("item-{n}");
        let id = invoke(
            &zk,
            Op::Enqueue {
                queue: Q.into(),
                item: item.clone(),
                priority: 0,
            },
        );
        let r = if class == QClass::DuplicateItem && v == Variant::Planted {
            planted.enqueue(item.as_bytes()).await
        } else {
            correct.enqueue(item.as_bytes()).await
        };
        match r {
            Ok(_) => ok(&zk, id, Value::Unit),
            Err(e) => record_err(&zk, id, e),
        }
        sleep_ms(rand_ms(100, 400)).await;
    }
}

type Claim = zkdst_recipes::queue::Claimed<SimClient, zkdst_sim::runtime::SimRuntime>;

/// One dequeue attempt: the item taken (claim-style consumers process and
/// complete it here, except the duplicate-processing one, whose claim is
/// returned to be completed after processing), or `None` when nothing was
/// available.
async fn take_one(
    zk: &SimClient,
    class: QClass,
    v: Variant,
    c: &SimCtx,
    s: &Shared,
    process_ms: u64,
) -> RecipeResult<Option<(String, Option<Claim>)>> {
    match (class, v) {
        (QClass::LostItem, Variant::Planted) => Ok(LostItemQueue::new(c.clone(), Q)
            .try_take()
            .await?
            .map(|i| (item_name(&i), None))),
        (QClass::DuplicateProcessing, Variant::Planted) => {
            let Some(claim) = DuplicateProcessingQueue::new(c.clone(), Q).try_take().await? else {
                return Ok(None);
            };
            // Delivered ("processed exactly once") as soon as it is locked.
            s.busy.set(Some(zk.id()));
            Ok(Some((item_name(claim.item()), Some(claim))))
        }
        (QClass::LockingRace, Variant::Planted) => {
            let Some(claim) = LockingQueueRace::new(c.clone(), Q).try_claim().await? else {
                return Ok(None);
            };
            let name = item_name(claim.item());
            sleep_ms(process_ms).await;
            claim.complete().await?;
            Ok(Some((name, None)))
        }
        (QClass::LockingRace, Variant::Correct) => {
            let Some(claim) = AtLeastOnceConsumer::new(c.clone(), Q).try_claim().await? else {
                return Ok(None);
            };
            let name = item_name(claim.item());
            sleep_ms(process_ms).await;
            claim.complete().await?;
            Ok(Some((name, None)))
        }
        // Correct take (at-most-once) for the other classes' consumers.
        _ => {
            let item = AtMostOnceConsumer::new(c.clone(), Q).try_take().await?;
            if item.is_some() {
                s.busy.set(Some(zk.id()));
            }
            Ok(item.map(|i| (item_name(&i), None)))
        }
    }
}

async fn consumer(i: usize, zk: SimClient, class: QClass, v: Variant, servers: Vec<u32>, s: Arc<Shared>) {
    let mut zk = zk;
    s.handles.set(i, &zk);
    let process_ms = match class {
        QClass::DuplicateProcessing => (300, 800),
        QClass::LockingRace => (20, 100),
        _ => (0, 1),
    };
    while !s.stop.is_set() {
        if zk.state().is_terminal() {
            zk = reconnect(zk.id(), servers.clone(), zk.recorder());
            s.handles.set(i, &zk);
        }
        let c = ctx(zk.clone());
        // After the heal, the locking-queue consumers block until an item
        // comes (the liveness probe); elsewhere every attempt is recorded.
        let blocking = class == QClass::LockingRace && s.live.is_set();
        let id = invoke(&zk, Op::Dequeue { queue: Q.into() });
        let r = loop {
            let r = take_one(&zk, class, v, &c, &s, rand_ms(process_ms.0, process_ms.1)).await;
            match r {
                Ok(None) if blocking => sleep_ms(100).await,
                r => break r,
            }
        };
        match r {
            Ok(Some((item, claim))) => {
                ok(&zk, id, Value::Item { item: Some(item) });
                if class == QClass::DuplicateProcessing {
                    // Processing.
                    sleep_ms(rand_ms(process_ms.0, process_ms.1)).await;
                    if let Some(claim) = claim {
                        let _ = claim.complete().await;
                    }
                }
                s.busy.set(None);
            }
            Ok(None) => {
                ok(&zk, id, Value::Item { item: None });
                sleep_ms(100).await;
            }
            Err(e) => {
                record_err(&zk, id, e);
                sleep_ms(100).await;
            }
        }
    }
}

async fn queue_scenario(seed: u64, v: Variant, class: QClass) -> History {
    let (mut c, rec) = start(seed).await;
    let s = Arc::new(Shared {
        stop: Flag::default(),
        live: Flag::default(),
        handles: Handles::default(),
        busy: Holder::default(),
    });
    let servers = c.server_ids();
    let s0 = s.clone();
    drop(c.spawn_client(0, SESSION_MS, move |zk| producer(zk, class, v, s0)));
    for i in 1..=CONSUMERS {
        let (s2, servers2) = (s.clone(), servers.clone());
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| consumer(i, zk, class, v, servers2, s2)));
    }
    sleep_ms(500).await;
    match class {
        QClass::LostItem | QClass::LockingRace => {
            for _ in 0..6 {
                sleep_ms(rand_ms(300, 1000)).await;
                if let Some(zk) = s.handles.random(1..CONSUMERS + 1) {
                    zk.lose_next_write_reply();
                }
            }
        }
        QClass::DuplicateItem => {
            for _ in 0..6 {
                sleep_ms(rand_ms(300, 1000)).await;
                if let Some(zk) = s.handles.get(0) {
                    zk.lose_next_write_reply();
                }
            }
        }
        QClass::DuplicateProcessing => {
            sleep_ms(rand_ms(1000, 3000)).await;
            for _ in 0..100 {
                if let Some(b) = s.busy.get() {
                    c.pause(NodeRef::Client(b));
                    sleep_ms(3 * SESSION_MS as u64).await;
                    c.resume(NodeRef::Client(b));
                    break;
                }
                sleep_ms(20).await;
            }
        }
    }
    sleep_ms(6000).await;
    s.live.set();
    heal_and_finish(c, rec, &s.stop, 5000).await
}

fn qparams(delivery: Delivery) -> Params {
    Params {
        delivery,
        fifo: false,
        ..params()
    }
}

#[test]
fn lost_item_queue_loses_items() {
    hunt(
        "LostItemQueue",
        "lost item",
        5,
        &["queue"],
        &qparams(Delivery::ExactlyOnce),
        |seed, v| queue_scenario(seed, v, QClass::LostItem),
    );
}

#[test]
fn duplicate_item_queue_delivers_twice() {
    hunt(
        "DuplicateItemQueue",
        "duplicate item",
        5,
        &["queue"],
        &qparams(Delivery::ExactlyOnce),
        |seed, v| queue_scenario(seed, v, QClass::DuplicateItem),
    );
}

#[test]
fn duplicate_processing_queue_processes_twice() {
    hunt(
        "DuplicateProcessingQueue",
        "duplicate processing",
        5,
        &["queue"],
        &qparams(Delivery::ExactlyOnce),
        |seed, v| queue_scenario(seed, v, QClass::DuplicateProcessing),
    );
}

#[test]
fn locking_queue_race_stalls() {
    hunt(
        "LockingQueueRace",
        "locking-queue race",
        5,
        &["queue", "liveness"],
        &qparams(Delivery::AtLeastOnce),
        |seed, v| queue_scenario(seed, v, QClass::LockingRace),
    );
}

// --- counter ---

const COUNTER: &str = "/counters/c";

async fn counter_worker(i: usize, zk: SimClient, v: Variant, s: Arc<Shared>) {
    s.handles.set(i, &zk);
    let c = ctx(zk.clone());
    let planted = DoubleIncrementCounter::new(c.clone(), COUNTER);
    let correct = Counter::new(c, COUNTER);
    for _ in 0..15 {
        let id = invoke(
            &zk,
            Op::Increment {
                counter: COUNTER.into(),
                delta: 1,
            },
        );
        let r = match v {
            Variant::Planted => planted.add(1).await,
            Variant::Correct => correct.add(1).await,
        };
        match r {
            Ok(value) => ok(&zk, id, Value::Int { value }),
            Err(e) => record_err(&zk, id, e),
        }
        sleep_ms(rand_ms(50, 200)).await;
    }
    while !s.stop.is_set() {
        sleep_ms(200).await;
    }
    if i == 0 {
        let id = invoke(
            &zk,
            Op::CounterRead {
                counter: COUNTER.into(),
            },
        );
        let r = match v {
            Variant::Planted => planted.get().await,
            Variant::Correct => correct.get().await.map(|(v, _)| v),
        };
        match r {
            Ok(value) => ok(&zk, id, Value::Int { value }),
            Err(e) => record_err(&zk, id, e),
        }
    }
}

async fn counter_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = Arc::new(Shared {
        stop: Flag::default(),
        live: Flag::default(),
        handles: Handles::default(),
        busy: Holder::default(),
    });
    for i in 0..3 {
        let s2 = s.clone();
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| counter_worker(i, zk, v, s2)));
    }
    sleep_ms(300).await;
    for _ in 0..8 {
        sleep_ms(rand_ms(200, 600)).await;
        if let Some(zk) = s.handles.random(0..3) {
            zk.lose_next_write_reply();
        }
    }
    heal_and_finish(c, rec, &s.stop, 5000).await
}

#[test]
fn double_increment_counter_overcounts() {
    hunt(
        "DoubleIncrementCounter",
        "double increment",
        5,
        &["counter"],
        &params(),
        counter_scenario,
    );
}

// --- semaphore ---

const SEM: &str = "/sem/s";
const PERMITS: u32 = 2;

async fn sem_worker(i: usize, zk: SimClient, v: Variant, s: Arc<Shared>) {
    s.handles.set(i, &zk);
    let c = ctx(zk.clone());
    let planted = LeakedLeaseSemaphore::new(c.clone(), SEM, PERMITS);
    let correct = Semaphore::new(c, SEM, PERMITS).expect("permits");
    while !s.stop.is_set() {
        let id = invoke(
            &zk,
            Op::Acquire {
                lock: SEM.into(),
                shared: true,
            },
        );
        let release: Result<Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>, RecipeError> = match v
        {
            Variant::Planted => planted.acquire().await.map(|g| {
                let token = g.token();
                ok(&zk, id, Value::Token { token });
                Box::new(move || Box::pin(g.release()) as futures::future::BoxFuture<'static, ()>) as _
            }),
            Variant::Correct => correct.acquire().await.map(|g| {
                let token = g.token();
                ok(&zk, id, Value::Token { token });
                Box::new(move || {
                    Box::pin(async move {
                        let _ = g.release().await;
                    }) as futures::future::BoxFuture<'static, ()>
                }) as _
            }),
        };
        match release {
            Ok(release) => {
                sleep_ms(rand_ms(50, 200)).await;
                let r = invoke(&zk, Op::Release { lock: SEM.into() });
                release().await;
                ok(&zk, r, Value::Unit);
            }
            Err(e) => {
                record_err(&zk, id, e);
                sleep_ms(100).await;
            }
        }
        sleep_ms(rand_ms(0, 50)).await;
    }
}

async fn sem_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = Arc::new(Shared {
        stop: Flag::default(),
        live: Flag::default(),
        handles: Handles::default(),
        busy: Holder::default(),
    });
    for i in 0..4 {
        let s2 = s.clone();
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| sem_worker(i, zk, v, s2)));
    }
    sleep_ms(500).await;
    for _ in 0..10 {
        sleep_ms(rand_ms(300, 1000)).await;
        if let Some(zk) = s.handles.random(0..4) {
            zk.lose_next_write_reply();
        }
    }
    heal_and_finish(c, rec, &s.stop, 5000).await
}

#[test]
fn leaked_lease_semaphore_exhausts_permits() {
    hunt(
        "LeakedLeaseSemaphore",
        "leaked lease",
        5,
        &["liveness"],
        &params(),
        sem_scenario,
    );
}
