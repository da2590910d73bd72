//! Group membership: members that join, read and wait on their view, act
//! on their standing and leave, beside a member managed by hand.

use std::time::Duration;

use madsim::time::Instant;
use rand::Rng;
use zkdst_checker::history::{Op, Value};
use zkdst_model::Situation;
use zkdst_recipes::membership::{self, remove_member, GroupMember, GroupView, MemberStatus};
use zkdst_recipes::nodes::{claim_ephemeral, create_all, Claim};
use zkdst_recipes::zk::ZkClient;
use zkdst_recipes::RecipeError;
use zkdst_sim::client::AnyClient;
use zkdst_sim::runtime::SimRuntime;

use super::{Env, SimCtx};
/// The group member's workload (or, with `workload.partitions`, the
/// partitioner's); `steps` as the member takes a disconnection.
pub async fn client<S: membership::Steps>(mut env: Env, steps: S) {
    if env.scenario.workload.partitions.is_some() {
        return super::partitioner::client(env, steps).await;
    }
    const G: &str = "/groups/g";
    let me = format!("m{}", env.id);
    let mut member: Option<GroupMember<S>> = None;
    // A new member object (as an application starts one), its Join
    // recorded until the recipe says Joined.
    async fn join<S: membership::Steps>(env: &mut Env, me: &str, steps: &S) -> GroupMember<S> {
        let m = GroupMember::join_with_steps(env.connector(), SimRuntime::new(), G, me, Vec::new(), steps.clone());
        let id = env.invoke(
            None,
            Op::Join {
                group: G.into(),
                member: me.into(),
            },
        );
        m.joined().await;
        env.ok(id, Value::Unit);
        m
    }
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
    fn act<S: membership::Steps>(env: &mut Env, m: &GroupMember<S>, me: &str) {
        if m.status() != MemberStatus::Joined {
            return;
        }
        let zk = env.registered();
        let id = env.invoke(
            zk.as_ref(),
            Op::MemberAct {
                group: G.into(),
                member: me.into(),
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
                member = Some(join(&mut env, &me, &steps).await);
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
                    act(&mut env, &m, &me);
                    member = Some(m);
                }
            }
        }
        let ms = env.between([100, 1500]);
        madsim::time::sleep(Duration::from_millis(ms)).await;
    }
    let m = match member {
        Some(m) => m,
        None => join(&mut env, &me, &steps).await,
    };
    by_hand.leave(&mut env).await;
    super::final_barrier(&env, "members-final").await;
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
            Ok::<_, RecipeError>(claim_ephemeral(&ctx, &path, &[]).await? == Claim::Ours)
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
