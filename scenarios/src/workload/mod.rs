//! Workload drivers: for every recipe, client loops that run on client
//! nodes (so a paused or partitioned client really stops) and record
//! recipe-level operations in the history for the checkers.

pub(crate) mod barrier;
mod consume;
mod contend;
pub(crate) mod election;
pub(crate) mod ensemble;
pub(crate) mod library_lock;
pub(crate) mod locks;
pub(crate) mod membership;
pub(crate) mod misc;
mod new_session;
mod odd_paths;
mod partitioner;
pub(crate) mod queue;
pub(crate) mod revocable;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use madsim::task::JoinHandle;
use madsim::time::Instant;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use zkdst_checker::history::{Op, OpId, Outcome, Value};
use zkdst_checker::properties::gave_up::GAVE_UP;
use zkdst_checker::properties::needless_ambiguity::RETRY_MAX_ATTEMPTS;
use zkdst_checker::properties::retry_budget::RETRY_BACKOFF_MS;
use zkdst_model::Situation;
use zkdst_recipes::ctx::Connect;
use zkdst_recipes::retry::RetryPolicy;
use zkdst_recipes::zk::{ZkClient, ZkError, ZkResult};
use zkdst_recipes::{Ctx, RecipeError};
use zkdst_sim::client::{AnyClient, ClientConfig, ClientKind};
use zkdst_sim::cluster::Cluster;
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runtime::SimRuntime;

use crate::nemesis::ClientRegistry;
use crate::scenario::Scenario;
use crate::streams::stream;

/// History meta: `container` when the seed's applications create their
/// recipes' directories as containers.
pub const RECIPE_PARENTS: &str = "recipe_parents";

pub type SimCtx = Ctx<AnyClient, SimRuntime>;

/// A protected resource outside ZooKeeper that rejects stale fencing
/// tokens (the highest token it accepted so far, per resource name).
#[derive(Debug, Default)]
pub struct Resource {
    highest: Mutex<BTreeMap<String, i64>>,
}

impl Resource {
    /// Accepts `token` unless a newer one was accepted before.
    pub fn write(&self, name: &str, token: i64) -> bool {
        let mut h = self.highest.lock().unwrap_or_else(|e| e.into_inner());
        let e = h.entry(name.to_string()).or_insert(i64::MIN);
        if token >= *e {
            *e = token;
            true
        } else {
            false
        }
    }
}

/// State shared by the clients of one run (never observable by ZooKeeper).
#[derive(Debug, Default)]
pub struct Shared {
    pub resource: Resource,
    /// Coordination between workload clients outside ZooKeeper (rounds of
    /// a barrier or a transaction).
    pub round: Mutex<BTreeMap<String, i64>>,
}

impl Shared {
    pub fn round(&self, key: &str) -> i64 {
        *self
            .round
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .unwrap_or(&0)
    }
    pub fn set_round(&self, key: &str, v: i64) {
        self.round
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), v);
    }
}

/// One client's view of the run.
pub struct Env {
    pub id: u32,
    /// The client library its sessions use.
    pub kind: ClientKind,
    pub rec: Recorder,
    pub servers: Vec<u32>,
    pub session_timeout_ms: i32,
    pub clients: u32,
    /// No new operations after this instant.
    pub stop: Instant,
    pub registry: ClientRegistry,
    pub scenario: Arc<Scenario>,
    pub max_ops: Option<u64>,
    pub ops: u64,
    pub rng: ChaCha8Rng,
    pub shared: Arc<Shared>,
    /// The seed's retry budget (`workload.retry_attempts`), if drawn.
    pub retry_attempts: Option<u32>,
    /// Whether the seed's applications create their recipes' directories
    /// as containers (`workload.container_parents`).
    pub container_parents: bool,
    /// Ops invoked on a handle whose session did not exist yet: the session
    /// they ran in is the one the handle gets, known by their completion.
    pub unsessioned: Mutex<Vec<(OpId, AnyClient)>>,
}

impl Env {
    /// A fresh session handle (registered for the nemesis's connection faults).
    pub fn connect(&self) -> AnyClient {
        register(&self.registry, self.id, self.connect_aside())
    }

    /// A fresh session handle the nemesis's connection faults do not aim
    /// at (a client's second session: they target its registered one).
    pub fn connect_aside(&self) -> AnyClient {
        AnyClient::connect(self.kind, self.client_config(), self.rec.clone())
    }

    fn client_config(&self) -> ClientConfig {
        ClientConfig {
            id: self.id,
            servers: self.servers.clone(),
            session_timeout_ms: self.session_timeout_ms,
        }
    }

    /// The session handle the client last registered (for a recipe that
    /// manages its own sessions through [`Env::connector`]: its current one).
    pub fn registered(&self) -> Option<AnyClient> {
        self.registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&self.id)
            .cloned()
    }

    /// A connect function for recipes that manage their own sessions: each
    /// session is opened (and registered, as by [`Env::connect`]) when the
    /// recipe awaits it, not when it calls, so a recipe that calls and then
    /// drops the future leaks no session.
    pub fn connector(&self) -> impl Connect<AnyClient> {
        let (kind, cfg, rec, registry) = (self.kind, self.client_config(), self.rec.clone(), self.registry.clone());
        move || {
            let (cfg, rec, registry) = (cfg.clone(), rec.clone(), registry.clone());
            async move {
                let id = cfg.id;
                Ok(register(&registry, id, AnyClient::connect(kind, cfg, rec)))
            }
        }
    }

    /// A recipe context on `zk`, with the seed's retry budget. Records
    /// the attempts the budget allows a request (`retry-budget-exceeded`
    /// holds every call to it; an enqueue or take that answers Ambiguous
    /// on a live session must have run out of them: `needless-ambiguity`).
    pub fn ctx(&self, zk: AnyClient) -> SimCtx {
        let ctx = Ctx::new(zk, SimRuntime::new());
        let ctx = match self.retry_attempts {
            Some(max_attempts) => ctx.with_retry(RetryPolicy {
                max_attempts,
                ..RetryPolicy::default()
            }),
            None => ctx,
        };
        let ctx = if self.container_parents {
            self.rec.set_meta(RECIPE_PARENTS, "container".to_string());
            ctx.with_container_parents()
        } else {
            ctx
        };
        let policy = ctx.retry_policy();
        self.rec.set_meta(RETRY_MAX_ATTEMPTS, policy.max_attempts.to_string());
        self.rec.set_meta(
            RETRY_BACKOFF_MS,
            format!("{}..{}", policy.initial_delay.as_millis(), policy.max_delay.as_millis()),
        );
        ctx
    }

    /// When a hold drawn long (`workload.long_hold`: a lock hold, an
    /// at-least-once claim's processing) ends: 1.5 to 3 session timeouts
    /// from now, counted as `drawn`. `None` for an ordinary hold, and
    /// after `heal`.
    pub fn long_hold(&mut self, heal: Instant, drawn: Situation) -> Option<Instant> {
        let share = self.scenario.workload.long_hold;
        if share == 0.0 || Instant::now() >= heal || !self.rng.gen_bool(share) {
            return None;
        }
        self.exercised(drawn);
        let t = self.session_timeout_ms as u64;
        Some(Instant::now() + Duration::from_millis(self.between([t * 3 / 2, t * 3])))
    }

    /// The workload may start another operation.
    pub fn running(&self) -> bool {
        Instant::now() < self.stop && self.max_ops.is_none_or(|m| self.ops < m)
    }

    pub fn invoke(&mut self, zk: Option<&AnyClient>, op: Op) -> OpId {
        self.ops += 1;
        let session = zk.map(|z| z.session_id()).filter(|s| *s != 0);
        let id = self.rec.invoke(self.id, session, op);
        if let Some(z) = zk.filter(|_| session.is_none()) {
            self.unsessioned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((id, z.clone()));
        }
        id
    }

    /// Records the completion, first giving an op invoked before its
    /// handle had a session that session (checkers bound a hold by its
    /// session's expiry, so a hold must know its session).
    fn complete(&self, id: OpId, outcome: Outcome) {
        let mut pending = self.unsessioned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = pending.iter().position(|(o, _)| *o == id) {
            let (_, zk) = pending.swap_remove(i);
            let session = zk.session_id();
            if session != 0 {
                self.rec.set_invoke_session(id, session);
            }
        }
        self.rec.complete(id, self.id, outcome, None);
    }

    pub fn ok(&self, id: OpId, value: Value) {
        self.complete(id, Outcome::Ok { value });
    }

    /// A recipe error: the operation may or may not have taken effect.
    pub fn err(&self, id: OpId, e: &RecipeError) {
        self.complete(id, Outcome::Info { error: e.to_string() });
    }

    /// Definitely did not take effect.
    pub fn fail(&self, id: OpId, why: &str) {
        self.complete(id, Outcome::Fail { error: why.to_string() });
    }

    pub fn between(&mut self, r: [u64; 2]) -> u64 {
        if r[0] >= r[1] {
            r[0]
        } else {
            self.rng.gen_range(r[0]..=r[1])
        }
    }

    pub async fn think(&mut self) {
        let ms = self.between(self.scenario.workload.think_ms).max(1);
        madsim::time::sleep(Duration::from_millis(ms)).await;
    }

    /// How long the next acquire (campaign) may wait before it gives up:
    /// `Some` for a `workload.give_up` share of them (no draw when zero, so
    /// scenarios without it keep their schedules).
    pub fn patience(&mut self) -> Option<Duration> {
        let p = self.scenario.workload.give_up;
        if p <= 0.0 || !self.rng.gen_bool(p) {
            return None;
        }
        let most = (self.session_timeout_ms as u64 / 2).max(10);
        Some(Duration::from_millis(self.between([10, most])))
    }

    /// An acquire (campaign) that gave up: it definitely holds nothing.
    pub fn gave_up(&self, id: OpId) {
        self.exercised(Situation::AcquireGaveUp);
        self.fail(id, GAVE_UP);
    }

    pub async fn hold(&mut self) {
        let ms = self.between(self.scenario.workload.hold_ms).max(1);
        madsim::time::sleep(Duration::from_millis(ms)).await;
    }

    /// A write to the protected resource (takes 1–3 ms), recorded; the
    /// resource rejects a token older than one it accepted.
    pub async fn fenced_write(&mut self, zk: &AnyClient, resource: &str, token: i64) -> bool {
        self.resource_write(zk, resource, token, true).await
    }

    /// The recipe told this holder its hold of `lock` is lost: recorded the
    /// instant the application learned it (the `mutex` checker holds a
    /// lock without a grace to it).
    pub fn hold_lost(&mut self, zk: &AnyClient, lock: &str, token: i64) {
        self.exercised(Situation::LockHoldLost);
        let id = self.invoke(
            Some(zk),
            Op::HoldLost {
                lock: lock.to_string(),
                token,
            },
        );
        self.ops -= 1; // a report, not a recipe operation
        self.ok(id, Value::Unit);
    }

    /// What the recipe told the application (`Op::HoldNode`,
    /// `Op::HoldState`): recorded the instant it was asked, invoked and
    /// completed at once.
    pub fn report(&mut self, zk: &AnyClient, what: Op) {
        let id = self.invoke(Some(zk), what);
        self.ops -= 1; // a report, not a recipe operation
        self.ok(id, Value::Unit);
    }

    /// A write to ZooKeeper node `path` fenced by the recipe itself
    /// (`write`), recorded as resource `path@zookeeper`: a write the
    /// recipe's check refused is a rejected stale token.
    pub async fn guarded_write(&mut self, zk: &AnyClient, path: &str, token: i64, write: BoxFuture<'_, ZkResult<()>>) {
        let id = self.invoke(
            Some(zk),
            Op::FencedWrite {
                resource: format!("{path}@zookeeper"),
                token,
            },
        );
        self.ops -= 1; // resource writes do not count against the workload size
        match write.await {
            Ok(()) => self.ok(id, Value::Unit),
            Err(ZkError::RuntimeInconsistency | ZkError::NoNode | ZkError::BadVersion) => self.ok(
                id,
                Value::Error {
                    code: "StaleToken".into(),
                    results: Vec::new(),
                },
            ),
            Err(e) if e.is_ambiguous() => self.complete(id, Outcome::Info { error: e.name().into() }),
            Err(e) => self.fail(id, e.name()),
        }
    }

    /// A write to the protected resource without a checkable token (the
    /// resource accepts it); the history records `token` so the fencing
    /// checker can order the writes.
    pub async fn unfenced_write(&mut self, zk: &AnyClient, resource: &str, token: i64) {
        self.resource_write(zk, resource, token, false).await;
    }

    async fn resource_write(&mut self, zk: &AnyClient, resource: &str, token: i64, fenced: bool) -> bool {
        let id = self.invoke(
            Some(zk),
            Op::FencedWrite {
                resource: resource.to_string(),
                token,
            },
        );
        let ms = self.between([1, 3]);
        madsim::time::sleep(Duration::from_millis(ms)).await;
        let accepted = !fenced || self.shared.resource.write(resource, token);
        self.ops -= 1; // resource writes do not count against the workload size
        if accepted {
            self.ok(id, Value::Unit);
        } else {
            self.ok(
                id,
                Value::Error {
                    code: "StaleToken".into(),
                    results: Vec::new(),
                },
            );
        }
        accepted
    }

    /// Counts something the run exercised (see `stats`), as a history note.
    pub fn exercised(&self, what: Situation) {
        self.rec.note(Some(self.id), what.note());
    }

    /// Replaces a handle whose session ended.
    pub fn renew(&self, zk: &mut AnyClient, ctx: &mut SimCtx) {
        if zk.state().is_terminal() {
            *zk = self.connect();
            *ctx = ctx.with_client(zk.clone());
        }
    }
}

/// A workload client: one per simulated client node (the registry names
/// each recipe's and each planted variant's).
pub type Client = fn(Env) -> BoxFuture<'static, ()>;

/// Starts the workload's clients, each running `client`; returns their tasks.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    client: Client,
    kind: ClientKind,
    c: &mut Cluster,
    scenario: &Arc<Scenario>,
    seed: u64,
    max_ops: Option<u64>,
    stop: Instant,
    registry: &ClientRegistry,
    shared: &Arc<Shared>,
) -> Vec<JoinHandle<()>> {
    let n = scenario.ensemble.clients;
    let budgets = &scenario.workload.retry_attempts;
    let retry_attempts = (!budgets.is_empty()).then(|| budgets[stream(seed, "retry").gen_range(0..budgets.len())]);
    let share = scenario.workload.container_parents;
    let container_parents = share > 0.0 && stream(seed, "parents").gen_bool(share);
    let mut out = Vec::new();
    for id in 0..n {
        let env = Env {
            id,
            kind,
            rec: c.recorder().clone(),
            servers: c.server_ids(),
            session_timeout_ms: scenario.ensemble.session_timeout_ms as i32,
            clients: n,
            stop,
            registry: registry.clone(),
            scenario: scenario.clone(),
            max_ops,
            ops: 0,
            rng: stream(seed, &format!("workload/{id}")),
            shared: shared.clone(),
            retry_attempts,
            container_parents,
            unsessioned: Mutex::default(),
        };
        let node = c.client_node(id);
        out.push(node.spawn(client(env)));
    }
    out
}

/// Waits until every client reached the final phase (or a deadline), then
/// for the views to settle.
pub(crate) async fn final_barrier(env: &Env, key: &str) {
    let n = env.shared.round(key);
    env.shared.set_round(key, n + 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.shared.round(key) < env.clients as i64 && Instant::now() < deadline {
        madsim::time::sleep(Duration::from_millis(50)).await;
    }
    madsim::time::sleep(Duration::from_millis(env.session_timeout_ms as u64 * 2)).await;
}

/// Makes `zk` the client's registered session: the one the nemesis's
/// connection faults aim at.
fn register(registry: &ClientRegistry, id: u32, zk: AnyClient) -> AnyClient {
    registry
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, zk.clone());
    zk
}
