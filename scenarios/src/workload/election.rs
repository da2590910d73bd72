//! Elections and leader latches as applications run them: one election
//! object per session, kept across terms; campaigns that sometimes give up
//! (`workload.give_up`: a waiter's node vanishes without it ever leading); terms that are
//! sometimes held past the session timeout, acting all along while the
//! recipe says "you lead"; and every end of leadership the recipe reports,
//! recorded the instant the application learns it (`LeadershipLost`).

use std::future::Future;
use std::time::Duration;
use zkdst_model::Situation;

use futures::{pin_mut, select_biased, FutureExt};
use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_checker::properties::latch_quit::CAMPAIGNS_UNTIL_SESSION_ENDS;
use zkdst_checker::properties::leadership::POLLED_PREFIX;
use zkdst_recipes::election::{latch, Election, LatchState, LeaderLatch};
use zkdst_recipes::lock::Steps;
use zkdst_recipes::zk::ZkClient;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::Env;

pub(crate) const ELECTION: &str = "/elections/e";

/// A leader's action on the protected resource, recorded as `LeaderAct`.
async fn act(env: &mut Env, zk: &AnyClient, token: i64) {
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
fn record_lost(env: &mut Env, zk: &AnyClient, token: i64, reason: String) {
    env.exercised(Situation::ElectionLostWhileLeading);
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

/// How a term learns that it ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Witness {
    /// Stops on the recipe's report (`lost`), and polls `leading()` too.
    Report,
    /// Half the terms stop on the report, half only when `leading()`
    /// turns false (the report is still recorded when it comes).
    Either,
    /// Polls `leading()` alone, as an application that asks
    /// `hasLeadership()` before each act and never listens: the loss is
    /// recorded, as polled (`POLLED_PREFIX`), when a poll first sees it.
    Poll,
}

/// Serves one term: acts while `leading()` says so, a few times or (one
/// term in three) for 1.5–3 session timeouts. The loss is recorded the
/// moment the application learns it: from the recipe's report (`lost`
/// resolves), as the recipe's own account, or from the poll that first
/// sees `leading()` false — so each signal is the sole witness somewhere.
async fn serve(
    env: &mut Env,
    zk: &AnyClient,
    token: i64,
    leading: impl Fn() -> bool,
    lost: impl Future<Output = String>,
    witness: Witness,
) {
    let lost = lost.fuse();
    pin_mut!(lost);
    let t = env.session_timeout_ms as u64;
    let long = env.rng.gen_bool(0.33);
    let until = if long {
        env.exercised(Situation::ElectionLongTerm);
        Some(Instant::now() + Duration::from_millis(env.between([t * 3 / 2, t * 3])))
    } else {
        None
    };
    let mut acts = env.rng.gen_range(1..=3);
    let listens = match witness {
        Witness::Report => true,
        Witness::Either => env.rng.gen_bool(0.5),
        Witness::Poll => false,
    };
    let mut reported = false;
    loop {
        if !leading() {
            if witness == Witness::Poll {
                record_lost(env, zk, token, format!("{POLLED_PREFIX}a poll saw it"));
            } else if !reported {
                let reason = (&mut lost).await;
                record_lost(env, zk, token, reason);
            }
            return;
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
        if witness == Witness::Poll {
            sleep.await;
            continue;
        }
        loop {
            select_biased! {
                reason = lost => {
                    record_lost(env, zk, token, reason);
                    reported = true;
                    if listens {
                        return;
                    }
                }
                _ = sleep => break,
            }
        }
    }
}

/// Asks who leads, as a follower that forwards requests to the leader
/// does: recorded as `LeaderQuery` (the epoch, or `Nil` for nobody).
async fn ask_leader<S: Steps>(env: &mut Env, zk: &AnyClient, e: &Election<AnyClient, SimRuntime, S>) {
    let id = env.invoke(
        Some(zk),
        Op::LeaderQuery {
            election: e.dir().into(),
        },
    );
    match e.leader().await {
        Ok(Some(leader)) => {
            env.exercised(Situation::ElectionLeaderAsked);
            env.ok(id, Value::Token { token: leader.token });
        }
        Ok(None) => env.ok(id, Value::Nil),
        Err(err) => env.err(id, &err),
    }
}

/// The election's workload; `steps` as its queue does them (the correct
/// election's, or a planted type's).
pub async fn election<S: Steps>(mut env: Env, steps: S) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    // Election's default suspension grace is zero.
    env.rec.set_meta("leader_grace_ms", "0");
    let mut e = Election::with_steps(ctx.clone(), ELECTION, steps.clone());
    let data = format!("client{}", env.id).into_bytes();
    while env.running() {
        if zk.state().is_terminal() {
            env.renew(&mut zk, &mut ctx);
            e = Election::with_steps(ctx.clone(), ELECTION, steps.clone());
        }
        if env.rng.gen_bool(0.25) {
            ask_leader(&mut env, &zk, &e).await;
        }
        // Named by the election's own directory, as an application builds
        // paths from it; the checker finds the candidate node there.
        let id = env.invoke(
            Some(&zk),
            Op::Campaign {
                election: e.dir().into(),
            },
        );
        let forever = Duration::from_secs(u32::MAX as u64);
        let limit = env.patience().unwrap_or(forever);
        match e.campaign_for(&data, limit).await {
            Ok(Some(l)) => {
                let token = l.token();
                env.ok(id, Value::Token { token });
                // What the leadership says of its candidate node, as an
                // application logs or watches it (`wrong-hold-node`).
                let node = Op::HoldNode {
                    lock: e.dir().to_string(),
                    token,
                    path: l.path().to_string(),
                    name: l.name().to_string(),
                    sequence: l.sequence(),
                    stat: *l.stat(),
                };
                env.report(&zk, node);
                let lost = async { format!("{:?}", l.lost().await) };
                serve(&mut env, &zk, token, || l.is_leader(), lost, Witness::Either).await;
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

/// The leader latch's workload; `steps` as the latch waits and leads.
pub async fn leader_latch<S: latch::Steps>(mut env: Env, steps: S) {
    let mut zk = env.connect();
    let mut ctx = env.ctx(zk.clone());
    let asked = Duration::from_millis(env.session_timeout_ms as u64 / 3);
    // The grace the checker holds the latch to, derived here and not from
    // the recipe's own clamp (an oracle must not share the subject's code):
    // the client notices a lost server ⅔·T after it last heard from it and
    // the server may expire the session at T, so no grace above T/4 is safe.
    let grace = asked.min(Duration::from_millis(env.session_timeout_ms as u64 / 4));
    env.rec.set_meta("leader_grace_ms", grace.as_millis().to_string());
    // A latch leaves the election only when closed (here: after it led)
    // or when its session ends (`latch-quit`).
    env.rec.set_meta(CAMPAIGNS_UNTIL_SESSION_ENDS, "true");
    while env.running() {
        env.renew(&mut zk, &mut ctx);
        let data = format!("client{}", env.id).into_bytes();
        let latch = LeaderLatch::start_with_steps(&ctx, ELECTION, data, asked, steps.clone());
        let id = env.invoke(
            Some(&zk),
            Op::Campaign {
                election: ELECTION.into(),
            },
        );
        match latch.leadership().await {
            Ok(token) => {
                env.ok(id, Value::Token { token });
                let lost = async {
                    latch.not_leader().await;
                    match latch.state() {
                        LatchState::Closed { reason } => format!("closed: {reason:?}"),
                        s => format!("{s:?}"),
                    }
                };
                // Asked as an application asks (Curator's hasLeadership).
                // A term that listens for the report also asks for this
                // term's token (a new term is not this one). One that only
                // polls takes a lead with its own token back after a
                // reconnect for its term (the node never left, so nobody
                // led meanwhile), and ends it on a token of a new term.
                let witness = if env.rng.gen_bool(0.5) {
                    Witness::Poll
                } else {
                    Witness::Report
                };
                let leading = || match witness {
                    Witness::Poll => latch.has_leadership() && latch.token().is_none_or(|t| t == token),
                    _ => latch.has_leadership() && latch.token() == Some(token),
                };
                serve(&mut env, &zk, token, leading, lost, witness).await;
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
