//! Counters, group membership, watched configuration and two-phase commit.

use std::time::Duration;

use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_checker::properties::two_phase::{COORDINATOR, LATE_SLACK_MS};
use zkdst_model::Situation;
use zkdst_recipes::config::{publish, Versioned, WatchedValue};
use zkdst_recipes::counter::{self, Counter};
use zkdst_recipes::membership::{self, remove_member, GroupMember, GroupView, MemberStatus};
use zkdst_recipes::nodes::create_all;
use zkdst_recipes::two_phase::{Coordinator, Decision, Site};
use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};
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

/// Waits until every client reached the final phase (or a deadline), then
/// for the views to settle.
async fn final_barrier(env: &Env, key: &str) {
    let n = env.shared.round(key);
    env.shared.set_round(key, n + 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.shared.round(key) < env.clients as i64 && Instant::now() < deadline {
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
    madsim::time::sleep(Duration::from_millis(env.session_timeout_ms as u64 * 2)).await;
}

/// The group member's workload (or, with `workload.partitions`, the
/// partitioner's); `steps` as the member takes a disconnection.
pub async fn membership<S: membership::Steps>(mut env: Env, steps: S) {
    if env.scenario.workload.partitions.is_some() {
        return super::partitioner::client(env, steps).await;
    }
    const G: &str = "/groups/g";
    let me = format!("m{}", env.id);
    let mut member: Option<GroupMember<S>> = None;
    let join =
        |env: &Env| GroupMember::join_with_steps(env.connector(), SimRuntime::new(), G, &me, Vec::new(), steps.clone());
    // A read of the member's view: its current one, or (`after`: the zxid
    // of the view last seen) first a wait of up to 1 s for the next change,
    // as an application waits for its group to change. A wait that gives
    // up is recorded too, and so is the read that follows; if that read
    // shows a newer view, a second, 10 ms wait must return it at once (the
    // checker's missed-change).
    async fn members<S: membership::Steps>(env: &mut Env, m: &GroupMember<S>, after: Option<i64>) -> Option<i64> {
        let Some(seen) = after else {
            return read(env, m);
        };
        if let Some(z) = wait(env, m, seen, Duration::from_secs(1)).await {
            return Some(z);
        }
        let now = read(env, m);
        if now.is_some_and(|z| z > seen) {
            return wait(env, m, seen, Duration::from_millis(10)).await.or(now);
        }
        now
    }
    fn view(v: GroupView) -> Value {
        Value::View {
            members: v.members,
            zxid: v.zxid,
        }
    }
    fn read<S: membership::Steps>(env: &mut Env, m: &GroupMember<S>) -> Option<i64> {
        let id = env.invoke(
            None,
            Op::Members {
                group: G.into(),
                newer_than: None,
            },
        );
        match m.view() {
            Some(v) => {
                let z = v.zxid;
                env.ok(id, view(v));
                Some(z)
            }
            None => {
                env.fail(id, "no view yet");
                None
            }
        }
    }
    async fn wait<S: membership::Steps>(env: &mut Env, m: &GroupMember<S>, seen: i64, limit: Duration) -> Option<i64> {
        let id = env.invoke(
            None,
            Op::Members {
                group: G.into(),
                newer_than: Some(seen),
            },
        );
        match madsim::time::timeout(limit, m.view_changed(seen)).await {
            Ok(v) => {
                let z = v.zxid;
                env.ok(id, view(v));
                env.exercised(Situation::MembershipViewWaited);
                Some(z)
            }
            Err(_) => {
                env.fail(id, "no change before the timeout");
                None
            }
        }
    }
    // Acts on the member's standing, as a partition owner does, only while
    // the recipe says Joined (the checker's member-acted-suspended).
    fn act<S: membership::Steps>(env: &mut Env, m: &GroupMember<S>) {
        if m.status() != MemberStatus::Joined {
            return;
        }
        let zk = env.registered();
        let id = env.invoke(
            zk.as_ref(),
            Op::MemberAct {
                group: G.into(),
                member: format!("m{}", env.id),
            },
        );
        env.ok(id, Value::Unit);
        env.exercised(Situation::MembershipActed);
    }
    // The zxid of the view the current member object last returned.
    let mut seen: Option<i64> = None;
    let mut by_hand = ByHand::new(G, format!("h{}", env.id));
    while env.running() {
        match member.take() {
            None => {
                seen = None;
                let m = join(&env);
                let id = env.invoke(
                    None,
                    Op::Join {
                        group: G.into(),
                        member: me.clone(),
                    },
                );
                m.joined().await;
                env.ok(id, Value::Unit);
                member = Some(m);
            }
            Some(m) => {
                if env.rng.gen_bool(0.2) {
                    let id = env.invoke(
                        None,
                        Op::Leave {
                            group: G.into(),
                            member: me.clone(),
                        },
                    );
                    m.leave();
                    env.ok(id, Value::Unit);
                } else if env.rng.gen_bool(0.15) {
                    by_hand.toggle(&mut env).await;
                    member = Some(m);
                } else {
                    let after = seen.filter(|_| env.rng.gen_bool(0.3));
                    if let Some(z) = members(&mut env, &m, after).await {
                        seen = Some(z);
                    }
                    act(&mut env, &m);
                    member = Some(m);
                }
            }
        }
        let ms = env.between([100, 1500]);
        madsim::time::sleep(Duration::from_millis(ms)).await;
    }
    let m = match member {
        Some(m) => m,
        None => {
            let m = join(&env);
            let id = env.invoke(
                None,
                Op::Join {
                    group: G.into(),
                    member: me.clone(),
                },
            );
            m.joined().await;
            env.ok(id, Value::Unit);
            m
        }
    };
    by_hand.leave(&mut env).await;
    final_barrier(&env, "members-final").await;
    // Any view is the group as it stands once everyone joined; give a
    // member that just (re-)joined time to read its first one.
    let _ = madsim::time::timeout(Duration::from_secs(5), m.view_changed(0)).await;
    members(&mut env, &m, None).await;
    // Stay in the group until every member has recorded its final view:
    // leaving (dropping `m` closes its session) before a slower member
    // read would change that member's view, not show divergence.
    let n = env.shared.round("members-read");
    env.shared.set_round("members-read", n + 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.shared.round("members-read") < env.clients as i64 && Instant::now() < deadline {
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
    drop(m);
    drop(by_hand);
}

/// A second member of the group managed by hand, as an application that
/// registers itself without a `GroupMember`: an ephemeral node created on a
/// session of its own, removed with `remove_member` on that session, which
/// stays open (so a removal that does nothing leaves the node listed).
struct ByHand {
    group: &'static str,
    id: String,
    session: Option<(AnyClient, SimCtx)>,
    /// The node may exist: a join was acknowledged or left unknown.
    maybe_in: bool,
}

impl ByHand {
    fn new(group: &'static str, id: String) -> Self {
        ByHand {
            group,
            id,
            session: None,
            maybe_in: false,
        }
    }

    async fn toggle(&mut self, env: &mut Env) {
        if self.maybe_in {
            self.leave(env).await;
        } else {
            self.join(env).await;
        }
    }

    /// The hand session (a new one once the last has ended).
    fn session(&mut self, env: &Env) -> (AnyClient, SimCtx) {
        match &self.session {
            Some((zk, ctx)) if !zk.state().is_terminal() => (zk.clone(), ctx.clone()),
            _ => {
                let zk = env.connect_aside();
                let ctx = env.ctx(zk.clone());
                self.session = Some((zk.clone(), ctx.clone()));
                (zk, ctx)
            }
        }
    }

    async fn join(&mut self, env: &mut Env) {
        let (zk, ctx) = self.session(env);
        let path = format!("{}/{}", self.group, self.id);
        let id = env.invoke(
            Some(&zk),
            Op::Join {
                group: self.group.into(),
                member: self.id.clone(),
            },
        );
        self.maybe_in = true;
        let created = async {
            create_all(&ctx, self.group).await?;
            let made = ctx
                .retry(|| async {
                    match ctx.client().create(&path, &[], CreateMode::Ephemeral).await {
                        Ok(_) => Ok(true),
                        Err(ZkError::NodeExists) => Ok(false),
                        Err(e) => Err(e),
                    }
                })
                .await?;
            // NodeExists: ours if a lost reply hid our own create.
            let ours = made
                || ctx
                    .retry(|| ctx.client().exists(&path))
                    .await?
                    .is_some_and(|s| s.ephemeral_owner == zk.session_id());
            Ok::<bool, RecipeError>(ours)
        };
        match created.await {
            Ok(true) => env.ok(id, Value::Unit),
            Ok(false) => {
                self.maybe_in = false;
                env.fail(id, "the member id is held by another session");
            }
            Err(e) => env.err(id, &e),
        }
    }

    async fn leave(&mut self, env: &mut Env) {
        if !self.maybe_in {
            return;
        }
        let Some((zk, ctx)) = self.session.clone() else {
            return;
        };
        let id = env.invoke(
            Some(&zk),
            Op::Leave {
                group: self.group.into(),
                member: self.id.clone(),
            },
        );
        // Returns once the node is gone, or its session is (and with it
        // the node).
        remove_member(&ctx, self.group, &self.id).await;
        env.ok(id, Value::Unit);
        env.exercised(Situation::MembershipRemovedByHand);
        self.maybe_in = false;
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
    final_barrier(&env, "config-final").await;
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
