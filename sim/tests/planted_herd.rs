//! The herd effect, measured rather than judged: with 50 clients
//! contending, the seeds' simple lock (`HerdLock`: one node, every waiter
//! watches it) delivers about one watch notification per waiter on every
//! release; the correct `Lock` delivers exactly one (the next waiter's).
//! The figure is the `mutex` checker's `notifications_per_release`, counted
//! from the history's Watch events; mutual exclusion must hold for both.

mod planted_common;

use planted_common::*;
use zkdst_checker::history::{Event, History, Op, Value};
use zkdst_checker::properties::registry;
use zkdst_checker::Verdict;
use zkdst_recipes::lock::Lock;
use zkdst_recipes::planted::HerdLock;
use zkdst_sim::client::SimClient;

const LOCK: &str = "/locks/herd";
const WAITERS: u32 = 50;

async fn worker(zk: SimClient, v: Variant, stop: Flag) {
    zk.wait_connected(std::time::Duration::from_secs(30)).await;
    let c = ctx(zk.clone());
    let herd = HerdLock::new(c.clone(), LOCK);
    let lock = Lock::new(c, LOCK);
    while !stop.is_set() {
        let id = invoke(
            &zk,
            Op::Acquire {
                lock: LOCK.into(),
                shared: false,
            },
        );
        let release: futures::future::BoxFuture<'static, ()> = match v {
            Variant::Planted => match herd.acquire().await {
                Ok(g) => {
                    ok(&zk, id, Value::Token { token: g.token() });
                    Box::pin(g.release())
                }
                Err(e) => {
                    fail(&zk, id, e);
                    continue;
                }
            },
            Variant::Correct => match lock.acquire().await {
                Ok(g) => {
                    ok(&zk, id, Value::Token { token: g.token() });
                    Box::pin(async move {
                        let _ = g.release_and_wait().await;
                    })
                }
                Err(e) => {
                    fail(&zk, id, e);
                    continue;
                }
            },
        };
        // Held long enough for every woken waiter to re-arm its watch.
        sleep_ms(150).await;
        let r = invoke(&zk, Op::Release { lock: LOCK.into() });
        release.await;
        ok(&zk, r, Value::Unit);
    }
}

async fn herd_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let stop = Flag::default();
    for i in 0..WAITERS {
        let s = stop.clone();
        drop(c.spawn_client(i, SESSION_MS, move |zk| worker(zk, v, s)));
    }
    // No faults: the run heals at once and the workers contend for 15 s.
    heal_and_finish(c, rec, &stop, 15_000).await
}

/// Waiters woken per release, from the history's Watch events: NodeDeleted
/// notifications under the lock delivered to clients other than the
/// releaser, between a release's invocation and the next release's
/// invocation, over the releases that handed the lock over. (The `mutex` checker's own figure ends each window at the
/// next acquire's completion and counts the releaser's own guard watch;
/// it is printed alongside.)
fn woken_per_release(h: &History) -> (f64, usize) {
    let ops = h.operations().expect("well-formed history");
    let mut releases: Vec<_> = ops
        .iter()
        .filter(|o| matches!(&o.op, Op::Release { .. }) && o.completed.is_some())
        .collect();
    releases.sort_by_key(|o| o.invoked);
    let (mut woken, mut handovers) = (0usize, 0usize);
    for (i, r) in releases.iter().enumerate() {
        let until = releases.get(i + 1).map_or(u64::MAX, |n| n.invoked);
        // Only releases that handed the lock over (another client's acquire
        // completed in the window): the last ones of the run may have had
        // nobody waiting.
        let handed_over = ops.iter().any(|a| {
            matches!(&a.op, Op::Acquire { .. })
                && a.client != r.client
                && a.completed.is_some_and(|t| t >= r.invoked && t < until)
        });
        if !handed_over {
            continue;
        }
        handovers += 1;
        woken += h
            .events
            .iter()
            .filter(|e| match e {
                Event::Watch {
                    time,
                    client,
                    event,
                    path,
                    ..
                } => {
                    *client != r.client
                        && event == "NodeDeleted"
                        && path.as_deref().is_some_and(|p| p.starts_with(LOCK))
                        && *time >= r.invoked
                        && *time < until
                }
                _ => false,
            })
            .count();
    }
    (woken as f64 / handovers.max(1) as f64, handovers)
}

/// (waiters woken per release, releases, the mutex checker's figure)
fn measure(seed: u64, v: Variant) -> (f64, usize, f64) {
    let h = run(seed, v, herd_scenario);
    let r = registry::run("mutex", &h, &params()).expect("mutex checker");
    assert_eq!(
        r.verdict,
        Verdict::Pass,
        "{v:?}: mutual exclusion broken on seed {seed}:\n{}",
        zkdst_checker::report::render_text(&h, std::slice::from_ref(&r))
    );
    let (woken, n) = woken_per_release(&h);
    (
        woken,
        n,
        r.figures.get("notifications_per_release").copied().unwrap_or(0.0),
    )
}

#[test]
fn herd_lock_wakes_every_waiter_per_release() {
    let seed = 0;
    let (herd, herd_n, herd_fig) = measure(seed, Variant::Planted);
    let (correct, correct_n, correct_fig) = measure(seed, Variant::Correct);
    eprintln!(
        "PLANTED-RESULT bug=HerdLock class=\"herd effect\" seed={seed} clients={WAITERS} \
         herd: {herd:.2} waiters woken per release over {herd_n} releases (mutex checker figure {herd_fig:.2}); \
         correct: {correct:.2} per release over {correct_n} releases (mutex checker figure {correct_fig:.2})"
    );
    assert!(herd_n >= 10 && correct_n >= 10, "too few releases measured");
    assert!(
        herd >= 0.6 * (WAITERS - 1) as f64,
        "the herd lock should wake about every waiter per release, measured {herd:.2}"
    );
    assert!(
        correct == 1.0,
        "the correct lock should wake exactly one waiter per release, measured {correct:.3}"
    );
}
