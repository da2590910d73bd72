//! Counters, watched configuration and two-phase commit.

use std::time::Duration;

use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_checker::properties::two_phase::{COORDINATOR, LATE_SLACK_MS};
use zkdst_model::Situation;
use zkdst_recipes::config::{publish, Versioned, WatchedValue};
use zkdst_recipes::counter::{self, Counter};
use zkdst_recipes::two_phase::{Coordinator, Decision, Site};
use zkdst_recipes::RecipeError;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::{Env, SimCtx};

/// The counter's workload; `steps` resolve its ambiguous writes (the
/// correct counter's, or a planted type's).
pub async fn counter<S: counter::Steps>(mut env: Env, steps: S) {
    const C: &str = "/counters/c";
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let c = Counter::with_steps(ctx.clone(), C, steps.clone());
        if env.rng.gen_bool(0.7) {
            let id = env.invoke(
                Some(&zk),
                Op::Increment {
                    counter: C.into(),
                    delta: 1,
                },
            );
            // The counter promises that any error but Ambiguous means the
            // increment was not applied: recorded as such, the checker
            // holds it to that.
            match c.increment().await {
                Ok(v) => env.ok(id, Value::Int { value: v }),
                Err(e @ RecipeError::Ambiguous(_)) => env.err(id, &e),
                Err(e) => env.fail(id, &e.to_string()),
            }
        } else {
            let id = env.invoke(Some(&zk), Op::CounterRead { counter: C.into() });
            match c.get().await.map(|(v, _)| v) {
                Ok(v) => env.ok(id, Value::Int { value: v }),
                Err(e) => env.err(id, &e),
            }
        }
        env.think().await;
    }
}

pub async fn config(mut env: Env) {
    const KEY: &str = "/config/key";
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let watched = WatchedValue::start(env.connector(), SimRuntime::new(), KEY);
    let mut n = 0;
    // A read of the watched value: the current one, or (`after`: the value
    // last seen) first a wait of up to 1 s for the next change, as an
    // application waits for its configuration to change. A wait that gives
    // up is recorded too, and so is the read that follows; if that read
    // shows a newer value, a second, 10 ms wait must return it at once (the
    // checker's missed-change).
    async fn get(env: &mut Env, w: &WatchedValue, after: Option<&Versioned>) -> Option<Versioned> {
        let Some(seen) = after else {
            return read(env, w);
        };
        if let Some(v) = wait(env, w, seen, Duration::from_secs(1)).await {
            return Some(v);
        }
        let now = read(env, w);
        if now.as_ref().is_some_and(|v| v.zxid > seen.zxid) {
            return wait(env, w, seen, Duration::from_millis(10)).await.or(now);
        }
        now
    }
    fn versioned(v: &Versioned) -> Value {
        Value::Versioned {
            value: v.data.clone().map(|d| String::from_utf8_lossy(&d).into_owned()),
            version: v.version as i64,
        }
    }
    fn read(env: &mut Env, w: &WatchedValue) -> Option<Versioned> {
        let id = env.invoke(
            None,
            Op::ConfigGet {
                key: KEY.into(),
                newer_than: None,
            },
        );
        let v = w.get();
        match &v {
            Some(v) => env.ok(id, versioned(v)),
            None => env.fail(id, "no value read yet"),
        }
        v
    }
    async fn wait(env: &mut Env, w: &WatchedValue, seen: &Versioned, limit: Duration) -> Option<Versioned> {
        let id = env.invoke(
            None,
            Op::ConfigGet {
                key: KEY.into(),
                newer_than: Some(seen.version as i64),
            },
        );
        match madsim::time::timeout(limit, w.changed_after(seen.zxid)).await {
            Ok(v) => {
                env.ok(id, versioned(&v));
                Some(v)
            }
            Err(_) => {
                env.fail(id, "no change before the timeout");
                None
            }
        }
    }
    let mut seen: Option<Versioned> = None;
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        if env.rng.gen_bool(0.3) {
            n += 1;
            let value = format!("c{}-{n}", env.id);
            // Half the sets are read-modify-write, as an application updates
            // a configuration: conditional on the version it watches.
            let expected = match watched.get() {
                Some(v) if v.data.is_some() && env.rng.gen_bool(0.5) => Some(v.version),
                _ => None,
            };
            let id = env.invoke(
                Some(&zk),
                Op::ConfigSet {
                    key: KEY.into(),
                    value: value.clone(),
                    expected_version: expected.map(i64::from),
                },
            );
            match (publish(&ctx, KEY, value.as_bytes(), expected).await, expected) {
                (Ok(_), None) => env.ok(id, Value::Unit),
                (Ok(stat), Some(_)) => env.ok(
                    id,
                    Value::Versioned {
                        value: Some(value),
                        version: stat.version as i64,
                    },
                ),
                // A conditional set promises that only Ambiguous may have
                // been applied; the checker holds it to that.
                (Err(e @ RecipeError::Ambiguous(_)), Some(_)) | (Err(e), None) => env.err(id, &e),
                (Err(e), Some(_)) => env.fail(id, &e.to_string()),
            }
        } else {
            // Waits after a value that exists: an absent node's "version"
            // (-1) stays the same across changes of its parent.
            let wait = seen.as_ref().filter(|s| s.data.is_some() && env.rng.gen_bool(0.3));
            let wait = wait.cloned();
            if let Some(v) = get(&mut env, &watched, wait.as_ref()).await {
                seen = Some(v);
            }
        }
        env.think().await;
    }
    super::final_barrier(&env, "config-final").await;
    get(&mut env, &watched, None).await;
}

/// How long the coordinator waits for the sites to join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(3);

/// The share of rounds in which a site is slow to come up: it starts to
/// join only after the coordinator's join timeout, which must then count
/// it as failed and abort (the checker's timeliness promise), not wait on.
const LATE_SITE: f64 = 0.03;

/// How a coordinator's attempt at a transaction ended.
#[derive(PartialEq)]
enum Coordinated {
    Decided,
    /// Begun (and announced), then the decision failed.
    Undecided,
    /// Not even begun.
    NotBegun,
}

/// The coordinator begins `tx` (idempotent), announces it to the sites
/// (`announce`: round k, once begun) and decides it (`JOIN_TIMEOUT` for the
/// sites to join). Recorded as one `Decide` of COORDINATOR, so that a
/// failing begin is judged too.
async fn coordinate(
    env: &mut Env,
    ctx: &SimCtx,
    zk: &AnyClient,
    tx: &str,
    sites: &[String],
    announce: Option<i64>,
) -> Coordinated {
    const ROOT: &str = "/tx";
    let id = env.invoke(
        Some(zk),
        Op::Decide {
            txn: tx.to_string(),
            site: COORDINATOR.to_string(),
        },
    );
    let names: Vec<&str> = sites.iter().map(String::as_str).collect();
    let coord = match Coordinator::begin(ctx.clone(), ROOT, tx, &names).await {
        Ok(c) => c,
        Err(e) => {
            env.err(id, &e);
            return Coordinated::NotBegun;
        }
    };
    if let Some(k) = announce {
        env.shared.set_round("tx", k);
    }
    match coord.decide(JOIN_TIMEOUT).await {
        Ok(d) => {
            env.ok(
                id,
                Value::Bool {
                    value: d == Decision::Commit,
                },
            );
            Coordinated::Decided
        }
        Err(e) => {
            env.err(id, &e);
            Coordinated::Undecided
        }
    }
}

pub async fn two_phase(mut env: Env) {
    const ROOT: &str = "/tx";
    let nsites = (env.clients.saturating_sub(1)).clamp(1, 4);
    let sites: Vec<String> = (1..=nsites).map(|i| format!("s{i}")).collect();
    // What the checker's non-triviality promise needs: every site, and how
    // long the coordinator waits for them to join.
    env.rec.set_meta("tx_sites", &sites.join(","));
    env.rec
        .set_meta("tx_join_timeout_ms", &JOIN_TIMEOUT.as_millis().to_string());
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    if env.id == 0 {
        let mut k = 0;
        while env.running() {
            env.renew(&mut zk, &mut ctx);
            k += 1;
            let tx = format!("t{k}");
            // The coordinator's decision is recorded as the `Decide` of the
            // checker's non-voting site COORDINATOR: it must agree with the
            // sites', and an error it returns is judged (recipe-errors).
            match coordinate(&mut env, &ctx, &zk, &tx, &sites, Some(k)).await {
                Coordinated::Decided => {}
                Coordinated::NotBegun => {
                    env.think().await;
                    continue;
                }
                Coordinated::Undecided => {
                    // Lost the session mid-decision: resume the transaction
                    // with a new one (begin is idempotent) and decide it.
                    env.renew(&mut zk, &mut ctx);
                    coordinate(&mut env, &ctx, &zk, &tx, &sites, None).await;
                }
            }
            // Let the sites finish the round.
            let deadline = Instant::now() + Duration::from_secs(10);
            while env.shared.round(&format!("done-{k}")) < nsites as i64 && Instant::now() < deadline {
                madsim::time::sleep(Duration::from_millis(20)).await;
            }
            env.think().await;
        }
        env.shared.set_round("tx-stop", 1);
        return;
    }
    if env.id > nsites {
        return;
    }
    let site = format!("s{}", env.id);
    let mut last = 0;
    while env.shared.round("tx-stop") == 0 {
        let k = env.shared.round("tx");
        if k <= last {
            madsim::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        last = k;
        env.renew(&mut zk, &mut ctx);
        let tx = format!("t{k}");
        let commit = env.rng.gen_bool(env.scenario.workload.commit_probability);
        if env.rng.gen_bool(LATE_SITE) {
            env.exercised(Situation::TxSiteLate);
            // Later than the checker's slack, so that a coordinator waiting
            // for it is seen to wait.
            madsim::time::sleep(JOIN_TIMEOUT + Duration::from_millis(LATE_SLACK_MS + 1000)).await;
        }
        // The join is part of the vote as recorded: a site that cannot join
        // surely did not vote, and why it could not is judged.
        let id = env.invoke(
            Some(&zk),
            Op::Vote {
                txn: tx.clone(),
                site: site.clone(),
                commit,
            },
        );
        let joined = match Site::join(ctx.clone(), ROOT, &tx, &site).await {
            Ok(s) => Some(s),
            Err(e) => {
                env.fail(id, &e.to_string());
                None
            }
        };
        if let Some(s) = joined {
            let vote = if commit { Decision::Commit } else { Decision::Abort };
            match s.vote(vote).await {
                Ok(()) => env.ok(id, Value::Unit),
                // Another vote is stored: ours surely is not.
                Err(e @ RecipeError::Conflict(_)) => env.fail(id, &e.to_string()),
                Err(e) => env.err(id, &e),
            }
            let id = env.invoke(
                Some(&zk),
                Op::Decide {
                    txn: tx.clone(),
                    site: site.clone(),
                },
            );
            // A coordinator that lost its session may never decide: wait a
            // bounded time, then abort (whoever creates the decision first wins).
            match s.decision_within(Duration::from_secs(8)).await {
                Ok(d) => env.ok(
                    id,
                    Value::Bool {
                        value: d == Decision::Commit,
                    },
                ),
                Err(e) => env.err(id, &e),
            }
        }
        let d = env.shared.round(&format!("done-{k}"));
        env.shared.set_round(&format!("done-{k}"), d + 1);
    }
}
