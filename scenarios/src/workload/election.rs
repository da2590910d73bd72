//! Elections and leader latches as applications run them: one election
//! object per session, kept across terms; campaigns that sometimes give up
//! (`workload.give_up`: a waiter's node vanishes without it ever leading); terms that are
//! sometimes held past the session timeout, acting all along while the
//! recipe says "you lead"; and every end of leadership the recipe reports,
//! recorded the instant the application learns it (`LeadershipLost`).

use std::future::Future;
use std::time::Duration;

use futures::{pin_mut, select_biased, FutureExt};
use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_recipes::election::{max_grace, LatchState};
use zkdst_recipes::zk::ZkClient;
use zkdst_sim::client::SimClient;

use super::misc_variants::{AnyElection, AnyLatch};
use super::Env;

pub(crate) const ELECTION: &str = "/elections/e";

/// A leader's action on the protected resource, recorded as `LeaderAct`.
async fn act(env: &mut Env, zk: &SimClient, token: i64) {
    let id = env.invoke(
        Some(zk),
        Op::LeaderAct {
            election: ELECTION.into(),
            token,
        },
    );
    env.ops -= 1;
    let ms = env.between([1, 3]);
    madsim::time::sleep(Duration::from_millis(ms)).await;
    if env.shared.resource.write(ELECTION, token) {
        env.ok(id, Value::Unit);
    } else {
        env.ok(
            id,
            Value::Error {
                code: "StaleToken".into(),
                results: Vec::new(),
            },
        );
    }
}

/// The application learned its leadership ended.
fn record_lost(env: &mut Env, zk: &SimClient, token: i64, reason: String) {
    env.exercised("election.lost-while-leading");
    let id = env.invoke(
        Some(zk),
        Op::LeadershipLost {
            election: ELECTION.into(),
            token,
            reason,
        },
    );
    env.ops -= 1;
    env.ok(id, Value::Unit);
}

/// Serves one term: acts while `leading()` says so, a few times or (one
/// term in three) for 1.5–3 session timeouts, and records the loss the
/// moment `lost` resolves or `leading()` turns false.
async fn serve(
    env: &mut Env,
    zk: &SimClient,
    token: i64,
    leading: impl Fn() -> bool,
    lost: impl Future<Output = String>,
) {
    let lost = lost.fuse();
    pin_mut!(lost);
    let t = env.session_timeout_ms as u64;
    let long = env.rng.gen_bool(0.33);
    let until = if long {
        env.exercised("election.long-term");
        Some(Instant::now() + Duration::from_millis(env.between([t * 3 / 2, t * 3])))
    } else {
        None
    };
    let mut acts = env.rng.gen_range(1..=3);
    loop {
        if !leading() {
            let reason = (&mut lost).await;
            return record_lost(env, zk, token, reason);
        }
        act(env, zk, token).await;
        let pause = match until {
            // A long term ends with the workload, so that the campaigns
            // queued behind it finish within the liveness bound.
            Some(u) if Instant::now() < u && env.running() => env.between([50, 300]),
            Some(_) => return,
            None if acts > 1 => {
                acts -= 1;
                env.between(env.scenario.workload.hold_ms)
            }
            None => return,
        };
        let sleep = madsim::time::sleep(Duration::from_millis(pause.max(1))).fuse();
        pin_mut!(sleep);
        select_biased! {
            reason = lost => return record_lost(env, zk, token, reason),
            _ = sleep => {}
        }
    }
}

pub async fn election(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    // Election's default suspension grace is zero.
    env.rec.set_meta("leader_grace_ms", "0");
    let variant = env.scenario.workload.variant;
    let mut e = AnyElection::new(variant, ctx.clone(), ELECTION);
    let data = format!("client{}", env.id).into_bytes();
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            e = AnyElection::new(variant, ctx.clone(), ELECTION);
        }
        let id = env.invoke(
            Some(&zk),
            Op::Campaign {
                election: ELECTION.into(),
            },
        );
        let limit = env.patience();
        match e.campaign(&data, limit).await {
            Ok(Some(l)) => {
                let token = l.token();
                env.ok(id, Value::Token { token });
                serve(&mut env, &zk, token, || l.is_leader(), async {
                    format!("{:?}", l.lost().await)
                })
                .await;
                let rid = env.invoke(
                    Some(&zk),
                    Op::Resign {
                        election: ELECTION.into(),
                    },
                );
                match l.resign().await {
                    Ok(_) => env.ok(rid, Value::Unit),
                    Err(e) => env.err(rid, &e),
                }
            }
            Ok(None) => env.gave_up(id),
            Err(e) => env.err(id, &e),
        }
        env.think().await;
    }
}

pub async fn leader_latch(mut env: Env) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let asked = Duration::from_millis(env.session_timeout_ms as u64 / 3);
    let grace = asked.min(max_grace(Duration::from_millis(env.session_timeout_ms as u64)));
    env.rec.set_meta("leader_grace_ms", grace.as_millis().to_string());
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let data = format!("client{}", env.id).into_bytes();
        let latch = AnyLatch::start(env.scenario.workload.variant, &ctx, ELECTION, data, asked);
        let id = env.invoke(
            Some(&zk),
            Op::Campaign {
                election: ELECTION.into(),
            },
        );
        match latch.leadership().await {
            Ok(token) => {
                env.ok(id, Value::Token { token });
                serve(&mut env, &zk, token, || latch.token() == Some(token), async {
                    latch.not_leader().await;
                    match latch.state() {
                        LatchState::Closed { reason } => format!("closed: {reason:?}"),
                        s => format!("{s:?}"),
                    }
                })
                .await;
                let rid = env.invoke(
                    Some(&zk),
                    Op::Resign {
                        election: ELECTION.into(),
                    },
                );
                latch.close();
                env.ok(rid, Value::Unit);
            }
            Err(e) => env.err(id, &e),
        }
        env.think().await;
    }
}
